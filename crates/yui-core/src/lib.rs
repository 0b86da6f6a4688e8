//! YUI core: every piece of product logic, with no dependency on tauri or WebKit.
//!
//! The Tauri shell (`src-tauri/`) and the headless `yui` CLI are thin adapters over this crate.
//! See `docs/ARCHITECTURE.md` for the code map and the invariants.

pub mod autostart;
pub mod avatar;
pub mod backend;
pub mod cards;
pub mod context;
pub mod discover;
pub mod doctor;
pub mod firstrun;
pub mod layout;
pub mod longterm;
pub mod looks;
pub mod memory;
pub mod presence;
pub mod presets;
pub mod relations;
pub mod settings;
pub mod sprites;
pub mod stage;
pub mod tools;
pub mod transcript;
pub mod turn;
pub mod vocab;
pub mod voice;

// The floor below, under the names it has always had here: `crate::store` in this crate and
// `yui_core::store` above are `yui_base::store`.
pub use yui_base::{
    clock, error, events, images, logging, names, output, paths, playback, process, realtime_audio,
    schema, sprite_labels, store, target_names, timeouts, window,
};
pub use yui_base::{Clock, CoreError, ErrorCode, Store, SystemClock, WindowKind};
