//! The shell's side of the avatar: the main window as the core's [`BodyWindow`] (it only moves
//! the window; the core decides where), the X11 desktop host, and telling YUI's own moves from
//! the user's drags so a move YUI makes is never saved as the user's position.
//!
//! Every position YUI asks for is recorded per window ([`expect_move`]); a `Moved` event at a
//! recorded position is YUI's (not saved, not a drag); any other move of the main window is the
//! user's drag and goes to [`Avatar::user_moved`].

use crate::label::WindowLabel;
use crate::state::{AppState, Fact};
use std::sync::Arc;
use tauri::{AppHandle, Manager, PhysicalPosition, Runtime, WebviewWindow};
use yui_core::avatar::{self, Avatar, BodyState, BodyWindow, DesktopHost, HostError};
use yui_core::display::shortcuts::GlobalShortcut;
use yui_core::presence::InputIdle;

/// The main character's window.
pub struct MainBody<R: Runtime> {
    app: AppHandle<R>,
}

impl<R: Runtime> MainBody<R> {
    fn window(&self) -> Option<WebviewWindow<R>> {
        self.app.get_webview_window(&WindowLabel::Main.as_label())
    }
}

impl<R: Runtime> BodyWindow for MainBody<R> {
    fn size(&self) -> (u32, u32) {
        // The inner size: the window is undecorated, so it is the whole window. tao takes the
        // outer size from the frame extents at each configure event, and under openbox these were
        // once 1 pixel high for a moment, so a sit put the window's top on the perch's edge.
        self.window()
            .and_then(|w| body_size(&w))
            .unwrap_or((220, 300))
    }
    fn position(&self) -> Option<(i32, i32)> {
        if crate::windows::layer::on() {
            return crate::windows::layer::position(&WindowLabel::Main);
        }
        let p = self.window()?.outer_position().ok()?;
        Some((p.x, p.y))
    }
    fn place(&self, pos: (i32, i32)) -> Result<(), HostError> {
        let w = self
            .window()
            .ok_or_else(|| HostError::unavailable("the main window is closed"))?;
        if crate::windows::layer::on() {
            // A layer surface is placed by its margins on an output, not by a position.
            let size = body_size(&w).unwrap_or((220, 300));
            let size = (f64::from(size.0), f64::from(size.1));
            return crate::windows::layer::place(&self.app, &w, WindowLabel::Main, pos, size)
                .map_err(|e| HostError::unavailable(e.message));
        }
        expect_move(&self.app, &WindowLabel::Main, pos);
        // set_position never focuses the window: the user's focus stays where it is.
        w.set_position(PhysicalPosition::new(pos.0, pos.1))
            .map_err(|e| HostError::platform("moving the main window", e))
    }
    fn hide_own_windows(&self, hidden: bool) {
        hide_characters(&self.app, hidden);
    }
    fn show_looking(&self, looking: bool) {
        let state = self.app.state::<AppState>();
        state.tell(Fact::Looking(looking));
    }
    fn state_changed(&self, state: &BodyState) {
        let app = self.app.state::<AppState>();
        app.tell(Fact::Body(state.clone()));
    }
}

/// The window's size in the body's pixels: the X server's (physical) on X11; on the overlay
/// layer the compositor's logical ones, which its outputs and the margins are in (a scale-2
/// output shows a 220×300 window as 440×600 physical pixels).
fn body_size<R: Runtime>(w: &WebviewWindow<R>) -> Option<(u32, u32)> {
    let size = w.inner_size().ok()?;
    if !crate::windows::layer::on() {
        return Some((size.width, size.height));
    }
    let logical = size.to_logical::<f64>(w.scale_factor().ok()?);
    Some((logical.width.round() as u32, logical.height.round() as u32))
}

/// Hide every character window for a capture (remembering where each was), or show them again
/// where they were. Both the hide and the show are YUI's moves, never saved.
fn hide_characters<R: Runtime>(app: &AppHandle<R>, hidden: bool) {
    let state = app.state::<AppState>();
    for (label, w) in app.webview_windows() {
        let Some(label) = WindowLabel::parse(&label).filter(WindowLabel::is_character) else {
            continue;
        };
        let r = if hidden {
            if !w.is_visible().unwrap_or(false) {
                continue;
            }
            if let Ok(p) = w.outer_position() {
                state.hidden_for_capture(&label, Some((p.x, p.y)));
            }
            w.hide()
        } else {
            let Some(pos) = state.hidden_for_capture(&label, None) else {
                continue;
            };
            // GTK forgets a hidden window's place: put it back before and after showing.
            expect_move(app, &label, pos);
            let at = PhysicalPosition::new(pos.0, pos.1);
            w.set_position(at)
                .and_then(|()| w.show())
                .and_then(|()| w.set_position(at))
        };
        if let Err(e) = r {
            tracing::warn!(label = w.label(), error = %e, "hiding for the capture failed");
        }
    }
}

/// Record that YUI moves `label` to `pos`.
pub fn expect_move<R: Runtime>(app: &AppHandle<R>, label: &WindowLabel, pos: (i32, i32)) {
    app.state::<AppState>().expect_move(label, pos);
}

/// A `Moved` event of a character window: `true` when it is YUI's own move (not to be saved).
/// A move of the main window that is not YUI's is the user's drag: the avatar stops and stands
/// there.
pub fn on_moved<R: Runtime>(app: &AppHandle<R>, label: &WindowLabel, pos: (i32, i32)) -> bool {
    if app.state::<AppState>().is_expected_move(label, pos) {
        return true;
    }
    if *label == WindowLabel::Main {
        if let Some(a) = avatar::installed() {
            a.user_moved(pos);
        }
    }
    false
}

/// The main window rested after the user's drag.
pub fn on_rested(label: &WindowLabel) {
    if *label == WindowLabel::Main {
        if let Some(a) = avatar::installed() {
            a.user_rested();
        }
    }
}

/// Create and install the process's avatar: the X11 desktop where the session is X11 (none on
/// Wayland or elsewhere: `body_action` answers `unsupported`, chat keeps working), the main
/// window as its body.
pub fn install<R: Runtime>(app: &AppHandle<R>) {
    let (desktop, idle, keys) = desktop_host();
    // The global shortcut is grabbed on the same X connection (shortcut.rs).
    app.manage(Keys(keys));
    match &desktop {
        // The manners hold proactive turns while a window of it is fullscreen.
        Some(d) => {
            app.manage(crate::presence::UserDesktop(d.clone()));
        }
        None => tracing::info!("no desktop host here: body_action answers unsupported"),
    }
    // The characters sleep on the same X connection's idle time; never without one.
    if let Some(idle) = idle {
        crate::presence::start(app, idle);
    }
    let store = app.state::<AppState>().store.clone();
    let body: Arc<dyn BodyWindow> = Arc::new(MainBody { app: app.clone() });
    avatar::install(Arc::new(Avatar::new(desktop, Some(body), Some(store))));
}

/// What the settings say where no global shortcut can be taken.
pub const SHORTCUT_UNAVAILABLE: &str = "the global shortcut is not available on this desktop";

/// Where the global shortcut is taken: the X11 grab on the desktop host's connection (X11), the
/// desktop's GlobalShortcuts portal (the Wayland backends; under XWayland first, the grab where
/// no portal answers), none off Linux. Managed here by `install`, which makes the host;
/// `shortcut.rs` takes the shortcut through it.
pub struct Keys(pub Option<Arc<dyn GlobalShortcut>>);

/// The desktop host, the user's idle time and where the global shortcut is taken, where the
/// platform has them.
type Hosts = (
    Option<Arc<dyn DesktopHost>>,
    Option<Arc<dyn InputIdle>>,
    Option<Arc<dyn GlobalShortcut>>,
);

#[cfg(target_os = "linux")]
fn desktop_host() -> Hosts {
    use yui_core::display::layer_desktop::LayerShellDesktop;
    use yui_core::display::shortcuts::FirstOf;
    use yui_core::display::shortcuts_portal::ShortcutsPortal;
    use yui_core::display::{xwayland::XwaylandDesktop, Backend};
    let pid = Some(std::process::id());
    let portal = || Arc::new(ShortcutsPortal::default()) as Arc<dyn GlobalShortcut>;
    match crate::display::backend() {
        // YUI's windows are X11 windows here: the body sits on X11 and XWayland windows. The
        // screen through the portal (an X11 capture would miss the Wayland windows); no idle
        // time (XWayland counts only input to X11 windows: the characters would fall asleep
        // while the user types). The shortcut through the portal, which hears it over every
        // window; the X11 grab (heard only while an X11 window has the focus) where none is.
        Backend::Xwayland => match yui_x11::X11Desktop::connect(None, pid) {
            Ok(h) => {
                let grab: Arc<dyn GlobalShortcut> = h.clone();
                let keys = Arc::new(FirstOf(vec![portal(), grab]));
                (Some(Arc::new(XwaylandDesktop::new(h))), None, Some(keys))
            }
            Err(e) => {
                tracing::info!(error = %e, "no X11 desktop host under XWayland");
                (None, None, Some(portal()))
            }
        },
        // The overlay layer: its outputs and the characters' places, the screen through the
        // portal; no other app's window is seen. No client may grab keys: the portal is the way.
        Backend::LayerShell => {
            let outputs = crate::display::choice().map_or(&[][..], |c| &c.outputs[..]);
            let host = Arc::new(LayerShellDesktop::new(outputs));
            (Some(host), None, Some(portal()))
        }
        // Native Wayland windows the compositor places: nothing to move or see.
        Backend::Wayland => (None, None, Some(portal())),
        Backend::X11 => match yui_x11::X11Desktop::for_session(pid) {
            Some(h) => (Some(h.clone()), Some(h.clone()), Some(h)),
            None => (None, None, None),
        },
    }
}

#[cfg(not(target_os = "linux"))]
fn desktop_host() -> Hosts {
    (None, None, None)
}
