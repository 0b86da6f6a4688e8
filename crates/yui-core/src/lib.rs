//! YUI core: every piece of product logic, with no dependency on tauri or WebKit.
//!
//! The Tauri shell (`src-tauri/`) and the headless `yui` CLI are thin adapters over this crate.
//! See `docs/ARCHITECTURE.md` for the code map and the invariants.

pub mod autostart;
pub mod avatar;
pub mod backend;
pub mod cards;
pub mod clock;
pub mod context;
pub mod discover;
pub mod doctor;
pub mod error;
pub mod firstrun;
pub mod layout;
pub mod logging;
pub mod longterm;
pub mod looks;
pub mod memory;
pub mod model;
pub mod paths;
pub mod playback;
pub mod presence;
pub mod presets;
pub mod process;
pub mod relations;
pub mod settings;
pub mod shared;
pub mod sprite_labels;
pub mod sprites;
pub mod stage;
pub mod store;
pub mod target_names;
pub mod tools;
pub mod transcript;
pub mod turn;
pub mod vocab;
pub mod voice;
pub mod window;

pub use clock::{Clock, SystemClock};
pub use error::{CoreError, ErrorCode};
pub use store::Store;
pub use window::WindowKind;
