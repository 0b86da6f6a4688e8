//! What the desktop tells the stage, for the windows: the user away or back (the presence
//! watch on the platform's idle time), a character window unmapped or mapped again, the main
//! character's body state and its looking during a capture. The shell observes these facts on
//! the platform; the stage turns each into its [`StageEvent`], which the shell forwards in its
//! one place like every other.

use super::{Stage, StageEvent, Window};
use crate::avatar::BodyState;

impl Stage {
    /// The user has been away past `yui.sleep` (`asleep`) or is back.
    pub fn presence_changed(&self, asleep: bool) {
        self.0.emit(StageEvent::Presence { asleep });
    }

    /// `window` went off screen (`hidden`) or came back.
    pub fn window_shown(&self, window: Window, hidden: bool) {
        self.0.emit(StageEvent::Shown { window, hidden });
    }

    /// The main character's body is now `state`.
    pub fn body_changed(&self, state: BodyState) {
        self.0.emit(StageEvent::Body { state });
    }

    /// A screen capture started (`looking`) or ended.
    pub fn looking(&self, looking: bool) {
        self.0.emit(StageEvent::Looking { looking });
    }
}
