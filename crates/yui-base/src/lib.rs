//! YUI's bottom floor: what every crate above may name and nothing here names them back (the
//! compiler enforces it: this crate depends on no other YUI crate).
//!
//! - The shared vocabulary of a turn: its events and cues ([`events`]), the contract's tool
//!   names ([`names`]), what a tool answers ([`output`]), how a tool is declared on the wire
//!   ([`schema`]), the waits ([`timeouts`]), image helpers ([`images`]), the realtime
//!   transport's audio seam ([`realtime_audio`]), the window kinds ([`window`]), the names of
//!   look targets and sprite labels ([`target_names`], [`sprite_labels`]) and the playback
//!   switches ([`playback`]).
//! - The services under everything: the SQLite [`store`], typed errors ([`error`]), the
//!   [`clock`] that is passed in, where files live ([`paths`]), [`logging`], and the one runner
//!   of child processes ([`process`]).

pub mod clock;
pub mod error;
pub mod events;
pub mod images;
pub mod logging;
pub mod names;
pub mod output;
pub mod paths;
pub mod playback;
pub mod process;
pub mod realtime_audio;
pub mod schema;
pub mod sprite_labels;
pub mod store;
pub mod target_names;
pub mod timeouts;
pub mod window;

pub use clock::{Clock, SystemClock};
pub use error::{CoreError, ErrorCode};
pub use store::Store;
pub use window::WindowKind;
