//! YUI's X11 desktop host ([`yui_domain::avatar::DesktopHost`]) over x11rb, the pure-Rust X
//! protocol crate:
//! - the other apps' top-level windows from EWMH `_NET_CLIENT_LIST_STACKING` (bottom first), with
//!   `WM_CLASS`, `_NET_WM_NAME`, the frame from `_NET_FRAME_EXTENTS`, `_NET_WM_STATE`
//!   (hidden / fullscreen / maximised) and `_NET_WM_DESKTOP` ([`windows`]);
//! - monitors as GDK finds them: RandR monitors, or Xinerama heads when RandR reports fewer
//!   monitors than there are heads (one monitor spanning several), numbered from 1 in that order;
//!   the work area is `_NET_WORKAREA` cut to each monitor ([`monitors`]);
//! - a change signal driven by X events (PropertyNotify, ConfigureNotify, Map/Unmap/Destroy) read
//!   on one thread that blocks in `wait_for_event`: no polling ([`X11Desktop::connect`]);
//! - screen capture with `GetImage` on the root window, in memory only ([`capture`]);
//! - the user's input idle time from the screen-saver extension (`idle.rs`), for the
//!   characters' sleep (`yui_domain::presence`);
//! - the global push-to-talk shortcut, grabbed on the same connection and read by the same
//!   event thread ([`hotkey`]).
//!
//! Each query pipelines its requests (all sent, then all replies read): one round trip for the
//! whole window list. What was read is kept until an X event says it changed (`cache.rs`): while
//! a window is dragged, a read asks for that window's geometry alone.

mod active;
mod cache;
pub mod capture;
pub mod hotkey;
mod idle;
pub mod minimize;
pub mod monitors;
pub mod windows;

use cache::Part;
use std::sync::Arc;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    AtomEnum, ChangeWindowAttributesAux, ConnectionExt as _, EventMask, Window,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use yui_domain::avatar::{Capture, Desktop, DesktopHost, HostError, Rect};

/// An error of the X connection or of a request, kept as the source.
pub(crate) fn xerr(e: impl std::error::Error + Send + Sync + 'static) -> HostError {
    HostError::platform("X11", e)
}

x11rb::atom_manager! {
    /// The atoms the host reads.
    pub Atoms: AtomsCookie {
        _NET_CLIENT_LIST_STACKING,
        _NET_CLIENT_LIST,
        _NET_ACTIVE_WINDOW,
        _NET_WM_NAME,
        _NET_FRAME_EXTENTS,
        _NET_WM_STATE,
        _NET_WM_STATE_HIDDEN,
        _NET_WM_STATE_FULLSCREEN,
        _NET_WM_STATE_MAXIMIZED_VERT,
        _NET_WM_STATE_MAXIMIZED_HORZ,
        _NET_WM_DESKTOP,
        _NET_CURRENT_DESKTOP,
        _NET_WORKAREA,
        _NET_WM_PID,
        _NET_WM_WINDOW_TYPE,
        _NET_WM_WINDOW_TYPE_NORMAL,
        _NET_WM_WINDOW_TYPE_DIALOG,
        WM_STATE,
        UTF8_STRING,
    }
}

/// The X11 desktop host.
pub struct X11Desktop {
    pub(crate) conn: Arc<RustConnection>,
    pub(crate) root: Window,
    pub(crate) atoms: Atoms,
    /// Windows whose `_NET_WM_PID` is this are YUI's own.
    pub(crate) own_pid: Option<u32>,
    changes: tokio::sync::watch::Sender<u64>,
    /// YUI's own client windows and their frames: their moves and property changes signal
    /// nothing (the body following a perch must not wake itself up with its own moves).
    own_windows: std::sync::Mutex<std::collections::HashSet<Window>>,
    cache: std::sync::Mutex<cache::Cache>,
    /// The active window, and the last one not YUI's own ([`active`]).
    active: std::sync::Mutex<active::Active>,
    /// The global shortcut taken now ([`hotkey`]).
    shortcut: std::sync::Mutex<Option<hotkey::Grab>>,
    /// The XSync alarm that tells of the user's next input (`idle.rs`; `None`: none here).
    input_alarm: std::sync::OnceLock<Option<idle::Alarm>>,
    /// Bumped when that alarm fires.
    input: tokio::sync::watch::Sender<u64>,
}

impl std::fmt::Debug for X11Desktop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("X11Desktop")
            .field("root", &self.root)
            .finish()
    }
}

impl X11Desktop {
    /// Connect to `display` (`None`: `$DISPLAY`) and start listening for changes. Windows whose
    /// `_NET_WM_PID` is `own_pid` are marked as YUI's own.
    pub fn connect(display: Option<&str>, own_pid: Option<u32>) -> Result<Arc<Self>, HostError> {
        let (conn, screen) = x11rb::connect(display).map_err(xerr)?;
        let root = conn.setup().roots[screen].root;
        let atoms = Atoms::new(&conn).map_err(xerr)?.reply().map_err(xerr)?;
        let conn = Arc::new(conn);
        let host = Arc::new(Self {
            conn,
            root,
            atoms,
            own_pid,
            changes: tokio::sync::watch::channel(0).0,
            own_windows: Default::default(),
            cache: Default::default(),
            active: Default::default(),
            shortcut: Default::default(),
            input_alarm: Default::default(),
            input: tokio::sync::watch::channel(0).0,
        });
        host.select(root, root_mask())?;
        host.select_randr();
        host.watch_clients();
        host.conn.flush().map_err(xerr)?;
        let weak = Arc::downgrade(&host);
        let conn = host.conn.clone();
        std::thread::Builder::new()
            .name("yui-x11-events".into())
            .spawn(move || event_loop(conn, weak))
            .map_err(xerr)?;
        Ok(host)
    }

    /// The host for this session when it is an X11 one: `None` on Wayland (no `DISPLAY`, or
    /// `XDG_SESSION_TYPE=wayland`, where XWayland shows only X clients) or without a display.
    pub fn for_session(own_pid: Option<u32>) -> Option<Arc<Self>> {
        let wayland = std::env::var("XDG_SESSION_TYPE").is_ok_and(|t| t == "wayland")
            || std::env::var_os("WAYLAND_DISPLAY").is_some();
        if wayland || std::env::var_os("DISPLAY").is_none() {
            return None;
        }
        match Self::connect(None, own_pid) {
            Ok(h) => Some(h),
            Err(e) => {
                tracing::info!(error = %e, "no X11 desktop host");
                None
            }
        }
    }

    fn select(&self, w: Window, mask: EventMask) -> Result<(), HostError> {
        self.conn
            .change_window_attributes(w, &ChangeWindowAttributesAux::new().event_mask(mask))
            .map_err(xerr)?;
        Ok(())
    }

    /// Monitor changes (RandR), where the server has the extension.
    fn select_randr(&self) {
        use x11rb::connection::RequestConnection as _;
        use x11rb::protocol::randr::{ConnectionExt as _, NotifyMask};
        let has = self
            .conn
            .extension_information(x11rb::protocol::randr::X11_EXTENSION_NAME)
            .ok()
            .flatten()
            .is_some();
        if has {
            let mask =
                NotifyMask::SCREEN_CHANGE | NotifyMask::CRTC_CHANGE | NotifyMask::OUTPUT_CHANGE;
            let _ = self.conn.randr_select_input(self.root, mask);
        }
    }

    pub(crate) fn cache(&self) -> std::sync::MutexGuard<'_, cache::Cache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Listen to every client's own property changes and moves (new clients too: called again
    /// whenever the client list changes).
    fn watch_clients(&self) {
        let clients = windows::client_list(self).unwrap_or_default();
        for &w in &clients {
            // A window that vanished meanwhile is an error we do not wait for.
            let _ = self.select(w, client_mask());
        }
        // Sent before the flush that follows: whatever the cache keeps of these windows from now
        // on, their events arrive after it.
        self.cache().watching(&clients);
        if let Some(pid) = self.own_pid {
            let own = windows::own_with_frames(self, &clients, pid);
            *self.own_windows.lock().unwrap_or_else(|p| p.into_inner()) = own;
        }
    }

    fn is_own(&self, w: Window) -> bool {
        self.own_windows
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&w)
    }

    fn bump(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }
}

fn root_mask() -> EventMask {
    EventMask::PROPERTY_CHANGE | EventMask::SUBSTRUCTURE_NOTIFY | EventMask::STRUCTURE_NOTIFY
}
fn client_mask() -> EventMask {
    EventMask::PROPERTY_CHANGE | EventMask::STRUCTURE_NOTIFY
}

/// Blocks on the connection's events; every relevant one bumps the change signal. Ends when the
/// connection closes or the host is dropped.
fn event_loop(conn: Arc<RustConnection>, host: std::sync::Weak<X11Desktop>) {
    loop {
        let ev = match conn.wait_for_event() {
            Ok(ev) => ev,
            Err(e) => {
                tracing::info!(error = %e, "X11 connection closed");
                return;
            }
        };
        let Some(host) = host.upgrade() else { return };
        let a = &host.atoms;
        match ev {
            Event::PropertyNotify(p) if p.window == host.root => {
                if p.atom == a._NET_CLIENT_LIST_STACKING || p.atom == a._NET_CLIENT_LIST {
                    host.watch_clients();
                    let _ = host.conn.flush();
                    host.cache().forget_clients();
                } else if p.atom == a._NET_ACTIVE_WINDOW {
                    if let Err(e) = active::note(&host) {
                        tracing::debug!(error = %e, "reading the active window");
                    }
                } else if p.atom == a._NET_CURRENT_DESKTOP || p.atom == a._NET_WORKAREA {
                    host.cache().forget_desktop();
                }
                host.bump();
            }
            Event::PropertyNotify(p) => {
                let part = if p.atom == u32::from(AtomEnum::WM_CLASS)
                    || p.atom == a._NET_WM_PID
                    || p.atom == a._NET_WM_WINDOW_TYPE
                {
                    Part::Fixed
                } else if p.atom == a._NET_FRAME_EXTENTS {
                    Part::Extents
                } else {
                    Part::Props
                };
                host.cache().forget_window(p.window, part);
                if !host.is_own(p.window) {
                    host.bump();
                }
            }
            Event::ConfigureNotify(c) => {
                if c.window == host.root {
                    host.cache().forget_all();
                } else {
                    host.cache().forget_geometry(c.window);
                }
                // YUI's own moves signal nothing (they are still read afresh).
                if !host.is_own(c.window) {
                    host.bump();
                }
            }
            Event::MapNotify(m) => {
                host.cache().forget_window(m.window, Part::Props);
                host.bump();
            }
            Event::UnmapNotify(u) => {
                host.cache().forget_window(u.window, Part::Props);
                host.bump();
            }
            Event::DestroyNotify(d) => {
                host.cache().destroyed(d.window);
                host.bump();
            }
            Event::ReparentNotify(r) => {
                host.cache().forget_frame(r.window);
                host.bump();
            }
            Event::RandrScreenChangeNotify(_) | Event::RandrNotify(_) => {
                host.cache().forget_monitors();
                host.bump();
            }
            Event::SyncAlarmNotify(a) => idle::alarm_fired(&host, a.alarm),
            Event::KeyPress(k) => hotkey::key_event(&host, k.detail, true),
            Event::KeyRelease(k) => hotkey::key_event(&host, k.detail, false),
            Event::Error(e) => tracing::debug!(error = ?e, "X11 error event"),
            _ => {}
        }
    }
}

impl DesktopHost for X11Desktop {
    fn desktop(&self) -> Result<Desktop, HostError> {
        let monitors = monitors::monitors(self)?;
        let (windows, current_desktop) = windows::windows(self)?;
        Ok(Desktop {
            monitors,
            windows,
            current_desktop,
        })
    }
    fn active_app(&self) -> Result<Option<String>, HostError> {
        active::active_app(self)
    }
    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }
    fn capture(&self, area: Rect) -> Result<Capture, HostError> {
        capture::capture(self, area)
    }
}
