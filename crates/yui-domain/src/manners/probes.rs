//! The busy probes: whether the user is busy with something a character must not talk over
//! (typing, a fullscreen window, a shared or recorded screen, another program using the
//! microphone or the camera). The platform answers ([`BusyProbes`]; X11 and PulseAudio in
//! yui-x11, `/proc` for the camera here); tests drive [`Fixed`]. A probe that fails reads as
//! "not busy" and is logged: a broken probe never silences the characters for good, and the
//! budget still limits them.

use crate::avatar::HostError;
use crate::presence::InputIdle;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What keeps the characters quiet right now, as the held reason names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Busy {
    Typing,
    Fullscreen,
    ScreenShared,
    /// Another program records from the microphone (its name, when known).
    Microphone(Option<String>),
    /// Another program has the camera open (its name, when known).
    Camera(Option<String>),
}

impl Busy {
    /// The reason after `held: `.
    pub fn reason(&self) -> String {
        let named = |what: &str, who: &Option<String>| match who {
            Some(w) => format!("{what} in use by {w}"),
            None => format!("{what} in use"),
        };
        match self {
            Self::Typing => "user typing".into(),
            Self::Fullscreen => "fullscreen window".into(),
            Self::ScreenShared => "screen shared or recorded".into(),
            Self::Microphone(w) => named("microphone", w),
            Self::Camera(w) => named("camera", w),
        }
    }
}

pub(super) type Probe<T> = Result<T, HostError>;

/// The platform's answers; each defaults to "cannot tell" (not busy).
pub trait BusyProbes: Send + Sync {
    /// Input in the last few seconds (any window).
    fn typing(&self) -> Probe<bool> {
        Ok(false)
    }
    /// The active window is fullscreen (`_NET_WM_STATE_FULLSCREEN` on X11).
    fn fullscreen(&self) -> Probe<bool> {
        Ok(false)
    }
    /// The screen is being shared or recorded.
    fn screen_shared(&self) -> Probe<bool> {
        Ok(false)
    }
    /// Another program records from the microphone: `Some(its name or None)`.
    fn microphone(&self) -> Probe<Option<Option<String>>> {
        Ok(None)
    }
    /// Another program has the camera open: `Some(its name or None)`.
    fn camera(&self) -> Probe<Option<Option<String>>> {
        Ok(None)
    }
    /// A signal that some answer may have changed (the desktop's windows: a fullscreen window
    /// closed), so a turn waiting on it is checked again at once rather than at the next
    /// minute. `None`: no such signal.
    fn changed(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
}

/// Every probe, asked in order; the first that says busy wins. Failures are logged and read as
/// not busy.
pub fn busy(p: &dyn BusyProbes) -> Option<Busy> {
    fn ok<T: Default>(what: &str, r: Probe<T>) -> T {
        r.unwrap_or_else(|e| {
            tracing::debug!(probe = what, error = %e, "busy probe failed; read as not busy");
            T::default()
        })
    }
    if ok("fullscreen", p.fullscreen()) {
        return Some(Busy::Fullscreen);
    }
    if ok("screen_shared", p.screen_shared()) {
        return Some(Busy::ScreenShared);
    }
    if let Some(w) = ok("microphone", p.microphone()) {
        return Some(Busy::Microphone(w));
    }
    if let Some(w) = ok("camera", p.camera()) {
        return Some(Busy::Camera(w));
    }
    if ok("typing", p.typing()) {
        return Some(Busy::Typing);
    }
    None
}

/// No platform: never busy.
pub struct NoProbes;
impl BusyProbes for NoProbes {}

/// Probes set by hand (tests, and the seam a platform without a probe uses); each change is
/// signalled, as the desktop host signals its windows' changes.
pub struct Fixed(Mutex<Vec<Busy>>, tokio::sync::watch::Sender<u64>);

impl Default for Fixed {
    fn default() -> Self {
        Self(Mutex::default(), tokio::sync::watch::channel(0).0)
    }
}

impl Fixed {
    pub fn set(&self, busy: Vec<Busy>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = busy;
        self.1.send_modify(|n| *n += 1);
    }
    fn has(&self, f: impl Fn(&Busy) -> bool) -> Option<Busy> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|b| f(b))
            .cloned()
    }
}

impl BusyProbes for Fixed {
    fn changed(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.1.subscribe())
    }
    fn typing(&self) -> Probe<bool> {
        Ok(self.has(|b| *b == Busy::Typing).is_some())
    }
    fn fullscreen(&self) -> Probe<bool> {
        Ok(self.has(|b| *b == Busy::Fullscreen).is_some())
    }
    fn screen_shared(&self) -> Probe<bool> {
        Ok(self.has(|b| *b == Busy::ScreenShared).is_some())
    }
    fn microphone(&self) -> Probe<Option<Option<String>>> {
        Ok(match self.has(|b| matches!(b, Busy::Microphone(_))) {
            Some(Busy::Microphone(w)) => Some(w),
            _ => None,
        })
    }
    fn camera(&self) -> Probe<Option<Option<String>>> {
        Ok(match self.has(|b| matches!(b, Busy::Camera(_))) {
            Some(Busy::Camera(w)) => Some(w),
            _ => None,
        })
    }
}

/// Typing read from the input idle time: input within [`TYPING_WINDOW`] counts as typing.
pub const TYPING_WINDOW: Duration = Duration::from_secs(3);

/// Probes made of parts: typing from the input idle time, the others from `rest`.
pub struct WithTyping {
    pub idle: Arc<dyn InputIdle>,
    pub rest: Arc<dyn BusyProbes>,
}

impl BusyProbes for WithTyping {
    fn typing(&self) -> Probe<bool> {
        Ok(self.idle.idle_for()? < TYPING_WINDOW)
    }
    fn changed(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.rest.changed()
    }
    fn fullscreen(&self) -> Probe<bool> {
        self.rest.fullscreen()
    }
    fn screen_shared(&self) -> Probe<bool> {
        self.rest.screen_shared()
    }
    fn microphone(&self) -> Probe<Option<Option<String>>> {
        self.rest.microphone()
    }
    fn camera(&self) -> Probe<Option<Option<String>>> {
        self.rest.camera()
    }
}

/// A fullscreen window from the desktop host (`avatar::DesktopHost`; X11: `_NET_WM_STATE_FULLSCREEN`
/// on a listed, shown window of the current desktop that is not YUI's own), the rest from
/// `rest`. It reads the host's window list, which the X11 host keeps from the server's events.
pub struct WithDesktop {
    pub desktop: Arc<dyn crate::avatar::DesktopHost>,
    pub rest: Arc<dyn BusyProbes>,
}

/// Whether `d` shows a fullscreen window of another program.
pub fn fullscreen_in(d: &crate::avatar::Desktop) -> bool {
    d.windows.iter().any(|w| {
        w.fullscreen
            && !w.hidden
            && !w.own
            && (w.desktop.is_none()
                || d.current_desktop.is_none()
                || w.desktop == d.current_desktop)
    })
}

impl BusyProbes for WithDesktop {
    fn typing(&self) -> Probe<bool> {
        self.rest.typing()
    }
    fn changed(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.desktop.changes())
    }
    fn fullscreen(&self) -> Probe<bool> {
        Ok(fullscreen_in(&self.desktop.desktop()?) || self.rest.fullscreen()?)
    }
    fn screen_shared(&self) -> Probe<bool> {
        self.rest.screen_shared()
    }
    fn microphone(&self) -> Probe<Option<Option<String>>> {
        self.rest.microphone()
    }
    fn camera(&self) -> Probe<Option<Option<String>>> {
        self.rest.camera()
    }
}
