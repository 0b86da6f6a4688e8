//! YUI's domain: what the product is about, with no turn in it. The characters (`presets`,
//! their `looks`, `cards`, `sprites`, `relations`), what they remember (`transcript`,
//! `longterm`), the backend they talk through (`backend`), the expression vocabulary (`vocab`),
//! the avatar's body on the desktop (`avatar`, `layout`, `presence`), the voice's settings and
//! views (`voice`, on yui-voice), the built-in model's files and engine process (`model`),
//! starting with the session (`autostart`), and the one typed declaration of every settings key
//! (`settings`).
//!
//! It stands on yui-base and yui-voice and names nothing above (the engine, yui-core, stands on
//! it): the compiler enforces that. Inside, `tests/floors.rs` of yui-core keeps its files free
//! of import loops.

pub mod autostart;
pub mod avatar;
pub mod backend;
pub mod cards;
pub mod display;
pub mod layout;
pub mod longterm;
pub mod look_dir;
pub mod looks;
pub mod manners;
pub mod model;
pub mod presence;
pub mod presets;
pub mod relations;
pub mod reminders;
pub mod settings;
pub mod sprites;
pub mod transcript;
pub mod vocab;
pub mod voice;
pub mod vrm;

// The floor below, under its own names: `crate::store` here is `yui_base::store`.
pub use yui_base::{
    clock, error, events, images, logging, names, output, paths, playback, process, realtime_audio,
    schema, sprite_labels, store, target_names, timeouts, window,
};
pub use yui_base::{Clock, CoreError, ErrorCode, Store, SystemClock, WindowKind};
