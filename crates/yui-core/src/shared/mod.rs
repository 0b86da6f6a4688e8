//! The bottom floor's shared vocabulary: what every floor above may name without importing the
//! engine — a turn's events and cues ([`events`]), the contract's tool names ([`names`]), what a
//! tool answers ([`output`]), how a tool is declared on the wire ([`schema`]), the waits
//! ([`timeouts`]), image helpers ([`images`]) and the realtime transport's audio seam
//! ([`realtime_audio`]). It imports nothing above the base floor.

pub mod events;
pub mod images;
pub mod names;
pub mod output;
pub mod realtime_audio;
pub mod schema;
pub mod timeouts;
