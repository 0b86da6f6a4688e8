//! YUI core: the engine (a turn: `turn`, the client tools: `tools`, the characters' stage:
//! `stage`, the per-turn client context: `context`, the allocator trimmer: `trim`) and above it
//! diagnosis (`doctor`, `discover`, `firstrun`). No dependency on tauri or WebKit.
//!
//! It is also the front door: the floors below (yui-domain, whose voice stands on yui-voice, and
//! yui-base) are re-exported under their own names, so the Tauri shell (`src-tauri/`) and the
//! headless `yui` CLI, thin adapters over this crate, name one crate. See `docs/ARCHITECTURE.md`.

// The module docs are a map for whoever reads the code: they link the crate's own modules too.
#![allow(rustdoc::private_intra_doc_links)]

pub mod context;
pub mod discover;
pub mod doctor;
pub mod firstrun;
pub mod stage;
pub mod tools;
pub mod trim;
pub mod turn;

// The floors below, under their own names: `crate::store` here and `yui_core::store` above are
// `yui_base::store`, `crate::presets` is `yui_domain::presets`.
pub use yui_base::{
    clock, error, events, images, logging, names, output, paths, playback, process, realtime_audio,
    schema, sprite_labels, store, target_names, timeouts, window,
};
pub use yui_base::{Clock, CoreError, ErrorCode, Store, SystemClock, WindowKind};
pub use yui_domain::{
    autostart, avatar, backend, cards, display, layout, longterm, looks, manners, model, presence,
    presets, relations, reminders, settings, sprites, transcript, vocab, voice, vrm,
};
