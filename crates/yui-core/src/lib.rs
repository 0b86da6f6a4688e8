//! YUI core: every piece of product logic, with no dependency on tauri or WebKit.
//!
//! The Tauri shell (`src-tauri/`) and the headless `yui` CLI are thin adapters over this crate.
//! See `docs/ARCHITECTURE.md` for the code map and the invariants.

pub mod clock;
pub mod error;
pub mod paths;
pub mod settings;
pub mod store;
pub mod tools;
pub mod window;

pub use clock::{Clock, SystemClock};
pub use error::{CoreError, ErrorCode};
pub use store::Store;
pub use window::WindowKind;
