//! Voice as the core sees it: yui-voice whole (audio in and out, speech-to-text, text-to-speech,
//! voice activity, the `yui.voice` switch; re-exported, so `crate::voice::pcm` is
//! `yui_voice::pcm`), plus what needs the chat backend or the characters: the speech servers'
//! fallback to the backend's URL and key ([`config`]), the engine a character speaks with
//! ([`engine_for`]) and a whole reply spoken with it ([`speak_reply`]), the checks of Settings → Voice's Test buttons and the doctor ([`check`]) and
//! the panel's view ([`panel`]).

pub use yui_voice::*;

pub mod check;
pub mod config;
mod engine;
pub mod panel;
mod reply;

pub use engine::{engine_for, EngineChoice};
pub use reply::{speak_reply, speak_reply_among};
