//! What a user turn is given: the character it is for (the one a window shows, or a preset in a
//! kind of window), the user's words, and where its events also go. One entry point,
//! [`super::Stage::user_turn`], takes it, for the app's windows, the CLI, the microphone and a
//! realtime server's own turns alike.

use super::{Stream, Window};
use crate::turn::transport::realtime::ServerStarted;
use crate::window::WindowKind;

/// Whose turn it is (a typed message's, or what the microphone hears).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnTo {
    /// The character `window` shows (the stage knows which).
    Window(Window),
    /// `preset_id` in a window of this kind (the CLI, the microphone, tests).
    Preset(String, WindowKind),
}

impl TurnTo {
    /// `preset_id`, as in a window of kind `window`.
    pub fn preset(preset_id: impl Into<String>, window: WindowKind) -> Self {
        Self::Preset(preset_id.into(), window)
    }
}

impl From<Window> for TurnTo {
    fn from(w: Window) -> Self {
        Self::Window(w)
    }
}

/// A user turn, built with [`UserTurn::in_window`] or [`UserTurn::to`].
pub struct UserTurn {
    pub(super) to: TurnTo,
    pub(super) text: String,
    pub(super) stream: Option<Stream>,
    pub(super) started: Option<ServerStarted>,
}

impl UserTurn {
    /// `text` in `window` (main, a pet or a phone).
    pub fn in_window(window: Window, text: impl Into<String>) -> Self {
        Self::new(TurnTo::Window(window), text.into())
    }

    /// `text` to `preset_id`, as in a window of kind `window`.
    pub fn to(preset_id: impl Into<String>, window: WindowKind, text: impl Into<String>) -> Self {
        Self::new(TurnTo::Preset(preset_id.into(), window), text.into())
    }

    /// The turn's events also go to `stream` (the window that started it) from the first one on.
    pub fn streamed(mut self, stream: Stream) -> Self {
        self.stream = Some(stream);
        self
    }

    /// The realtime server already answers this turn (it heard the user itself): `text` is their
    /// transcribed words, stored as their message.
    pub(crate) fn started(mut self, started: ServerStarted) -> Self {
        self.started = Some(started);
        self
    }

    fn new(to: TurnTo, text: String) -> Self {
        Self {
            to,
            text,
            stream: None,
            started: None,
        }
    }
}
