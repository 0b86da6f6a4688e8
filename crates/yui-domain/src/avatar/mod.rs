//! The body and its eyes: the avatar executor behind `body_action` and `look`.
//!
//! Two small platform traits keep it testable and free of tauri:
//! - [`DesktopHost`]: what the desktop shows — monitors, the other apps' top-level windows in
//!   stacking order, a change signal (event-driven, no polling) and a screen capture. The X11
//!   implementation is `crates/yui-x11`.
//! - [`BodyWindow`]: the main character's window — its size and position, and placing it. The
//!   shell implements it; a move made through it is never saved as the user's drag.
//!
//! [`Avatar`] (in `body.rs`) holds the body's state and runs the actions; [`geometry`] is the
//! pure placement code. The process installs its avatar once ([`install`]); the tool registry
//! hands it to `body_action` and `look` of the main window.

pub mod body;
pub mod capture;
pub mod geometry;

pub use body::Avatar;
pub use geometry::{Desktop, DesktopWindow, Monitor, Rect, Side};

use serde::{Deserialize, Serialize};
use std::sync::{Arc, RwLock};

/// A desktop host failure (logged; the model sees the contract's word).
#[derive(Debug, Clone, thiserror::Error)]
pub enum HostError {
    /// What this desktop cannot do, in plain words: no host, no screen-saver extension, an
    /// area off the screen, the main window closed.
    #[error("{0}")]
    Unavailable(String),
    /// What this desktop cannot do at all, with the reason (no screenshot portal answers): the
    /// tools answer the contract's `error: unsupported`, the reason after it.
    #[error("{0}")]
    Unsupported(String),
    /// The window system failed underneath (an X11 request or connection, a window call): what
    /// was being done, and the error it gave, kept as the source.
    #[error("{what}: {source}")]
    Platform {
        what: String,
        #[source]
        source: Arc<dyn std::error::Error + Send + Sync + 'static>,
    },
}

impl HostError {
    pub fn unavailable(why: impl Into<String>) -> Self {
        Self::Unavailable(why.into())
    }
    /// `what` failed with `cause` (`"X11"`, `"moving the main window"`).
    pub fn platform(
        what: impl Into<String>,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Platform {
            what: what.into(),
            source: Arc::new(cause),
        }
    }
}

/// A captured display: tightly packed RGB8 rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

/// The desktop as a platform shows it.
pub trait DesktopHost: Send + Sync {
    /// Monitors (numbered from 1) and the top-level windows, bottom of the stack first.
    fn desktop(&self) -> Result<Desktop, HostError>;
    /// The active application's name (its class, never a window title), for awareness; while
    /// one of YUI's own windows is active, the app the user was in before. `None`: cannot tell.
    fn active_app(&self) -> Result<Option<String>, HostError> {
        Ok(None)
    }
    /// A watch that changes whenever windows or monitors may have changed (driven by the
    /// platform's events).
    fn changes(&self) -> tokio::sync::watch::Receiver<u64>;
    /// The pixels of `area` of the virtual desktop, in memory only.
    fn capture(&self, area: Rect) -> Result<Capture, HostError>;
    /// Why no other app's window is ever seen here (a Wayland session's overlay layer), for
    /// `look at: perch_targets`; `None` where windows are seen.
    fn windows_reason(&self) -> Option<&'static str> {
        None
    }
}

/// The main character's window, as the shell moves it.
pub trait BodyWindow: Send + Sync {
    /// Outer size in physical pixels.
    fn size(&self) -> (u32, u32);
    /// Outer top-left position in physical pixels, where known.
    fn position(&self) -> Option<(i32, i32)>;
    /// Put the window at `pos` (one animation frame). YUI's move: never saved as a user drag,
    /// never takes focus.
    fn place(&self, pos: (i32, i32)) -> Result<(), HostError>;
    /// Hide (`true`) or show again (`false`) YUI's own windows around a capture, so they are not
    /// in the image.
    fn hide_own_windows(&self, _hidden: bool) {}
    /// The character shows (or stops showing) that it is looking at the screen.
    fn show_looking(&self, _looking: bool) {}
    /// The body's state changed (the shell tells the character's page).
    fn state_changed(&self, _state: &BodyState) {}
}

/// What the body is doing (the JSON of `look at: body`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Activity {
    #[default]
    Standing,
    Sitting,
    Peeking,
    InBed,
    Moving,
}

/// A window the body sits on (or waits to sit back on).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerchRef {
    pub app: String,
    pub title: String,
    #[serde(skip)]
    pub id: u64,
}

/// The body's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct BodyState {
    pub state: Activity,
    /// The display it is on (numbered as for `monitor`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monitor: Option<u32>,
    /// Its window's top-left corner (physical pixels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y: Option<i32>,
    /// The named spot it stands at (`move_to`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot: Option<String>,
    /// The window it sits on (or peeks around).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<PerchRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<Side>,
    /// The window it stood up from (covered, maximised, fullscreen, minimised): it sits back
    /// when that window can be sat on again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<PerchRef>,
}

/// Settings key of the user's places: `{"spots": {name: {monitor, x, y}}, "bed": {monitor, x, y}}`
/// (x, y relative to the monitor's work area).
pub const PLACES_KEY: &str = "yui.avatar";
/// Settings key the app writes the body's last settled state to (`look at: body` from the CLI).
pub const BODY_KEY: &str = "yui.body";

/// A place the user saved, relative to a monitor's work area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    pub monitor: u32,
    pub x: i32,
    pub y: i32,
}

/// The user's saved spots and bed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Places {
    #[serde(default)]
    pub spots: std::collections::BTreeMap<String, Place>,
    #[serde(default)]
    pub bed: Option<Place>,
}

impl Places {
    pub fn from_value(v: &serde_json::Value) -> crate::error::Result<Self> {
        serde_json::from_value(v.clone()).map_err(|e| {
            crate::error::CoreError::invalid(format!("yui.avatar: {e}")).with_source(e)
        })
    }
}

static INSTALLED: RwLock<Option<Arc<Avatar>>> = RwLock::new(None);

/// Make `avatar` the process's avatar (the main window's executor). Replaces an earlier one.
pub fn install(avatar: Arc<Avatar>) {
    *INSTALLED.write().unwrap_or_else(|p| p.into_inner()) = Some(avatar);
}

/// The process's avatar, if one was installed.
pub fn installed() -> Option<Arc<Avatar>> {
    INSTALLED.read().unwrap_or_else(|p| p.into_inner()).clone()
}
