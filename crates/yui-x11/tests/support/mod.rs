//! Real X servers for the tests: an Xvfb (or Xephyr with two Xinerama heads on an Xvfb host)
//! with openbox managing windows, started and stopped by each test, plus small real windows made
//! with x11rb and a body window (an X window the avatar moves) for the executor.
//!
//! The servers are yui-testkit's ([`Desktop`]: each on a free display number). Tests take
//! [`lock`] so that a binary's tests run one at a time: their timings assume a quiet display.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::*;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;
use yui_core::avatar::{BodyWindow, HostError};
pub use yui_testkit::xserver::{intern, Desktop};

static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub async fn lock() -> tokio::sync::MutexGuard<'static, ()> {
    LOCK.lock().await
}

/// X servers and a window manager, stopped on drop (on a display of their own choosing).
pub type Session = Desktop;

/// A real top-level window with a class, a title and a solid background.
pub struct TestWindow {
    pub conn: Arc<RustConnection>,
    pub id: Window,
}

impl TestWindow {
    pub fn open(
        conn: &Arc<RustConnection>,
        class: &str,
        title: &str,
        (x, y, w, h): (i16, i16, u16, u16),
        color: u32,
        pid: Option<u32>,
    ) -> Self {
        let root = conn.setup().roots[0].root;
        let id = conn.generate_id().unwrap();
        conn.create_window(
            x11rb::COPY_DEPTH_FROM_PARENT,
            id,
            root,
            x,
            y,
            w,
            h,
            0,
            WindowClass::INPUT_OUTPUT,
            x11rb::COPY_FROM_PARENT,
            &CreateWindowAux::new().background_pixel(color),
        )
        .unwrap();
        let class_prop = format!("{}\0{}\0", class.to_lowercase(), class);
        conn.change_property8(
            PropMode::REPLACE,
            id,
            AtomEnum::WM_CLASS,
            AtomEnum::STRING,
            class_prop.as_bytes(),
        )
        .unwrap();
        let utf8 = intern(conn, "UTF8_STRING");
        conn.change_property8(
            PropMode::REPLACE,
            id,
            intern(conn, "_NET_WM_NAME"),
            utf8,
            title.as_bytes(),
        )
        .unwrap();
        // Ask the window manager to keep the position we give (USPosition).
        let hints = [
            1u32 | 4,
            x as u32,
            y as u32,
            w as u32,
            h as u32,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
        ];
        conn.change_property32(
            PropMode::REPLACE,
            id,
            AtomEnum::WM_NORMAL_HINTS,
            AtomEnum::WM_SIZE_HINTS,
            &hints,
        )
        .unwrap();
        if let Some(pid) = pid {
            conn.change_property32(
                PropMode::REPLACE,
                id,
                intern(conn, "_NET_WM_PID"),
                AtomEnum::CARDINAL,
                &[pid],
            )
            .unwrap();
        }
        conn.map_window(id).unwrap();
        conn.flush().unwrap();
        Self {
            conn: conn.clone(),
            id,
        }
    }

    fn root(&self) -> Window {
        self.conn.setup().roots[0].root
    }

    fn client_message(&self, kind: &str, data: [u32; 5]) {
        let ev = ClientMessageEvent::new(32, self.id, intern(&self.conn, kind), data);
        self.conn
            .send_event(
                false,
                self.root(),
                EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
                ev,
            )
            .unwrap();
        self.conn.flush().unwrap();
    }

    /// `_NET_WM_STATE` add (1) or remove (0) of `state`, through the window manager.
    pub fn set_state(&self, state: &str, on: bool) {
        let atom = intern(&self.conn, state);
        self.client_message("_NET_WM_STATE", [u32::from(on), atom, 0, 1, 0]);
    }
    pub fn fullscreen(&self, on: bool) {
        self.set_state("_NET_WM_STATE_FULLSCREEN", on);
    }
    /// Make it the active window (EWMH `_NET_ACTIVE_WINDOW`, source: a pager, as a user's click).
    pub fn activate(&self) {
        self.client_message("_NET_ACTIVE_WINDOW", [2, 0, 0, 0, 0]);
    }
    /// Minimise (ICCCM WM_CHANGE_STATE to IconicState).
    pub fn minimize(&self) {
        self.client_message("WM_CHANGE_STATE", [3, 0, 0, 0, 0]);
    }
    pub fn restore(&self) {
        self.conn.map_window(self.id).unwrap();
        self.conn.flush().unwrap();
    }
    /// Move the window (the window manager moves its frame).
    pub fn move_to(&self, x: i32, y: i32) {
        self.conn
            .configure_window(self.id, &ConfigureWindowAux::new().x(x).y(y))
            .unwrap();
        self.conn.flush().unwrap();
    }
    pub fn close(&self) {
        self.conn.destroy_window(self.id).unwrap();
        self.conn.flush().unwrap();
    }
}

/// The character's window in the tests: an override-redirect X window (like a pet that is never
/// managed or focused) the avatar moves; it unmaps itself for a capture.
pub struct XBody {
    pub conn: Arc<RustConnection>,
    pub id: Window,
    pub size: (u32, u32),
    pub hides: Mutex<Vec<bool>>,
}

impl XBody {
    pub fn open(
        conn: &Arc<RustConnection>,
        at: (i32, i32),
        size: (u32, u32),
        color: u32,
    ) -> Arc<Self> {
        let root = conn.setup().roots[0].root;
        let id = conn.generate_id().unwrap();
        conn.create_window(
            x11rb::COPY_DEPTH_FROM_PARENT,
            id,
            root,
            at.0 as i16,
            at.1 as i16,
            size.0 as u16,
            size.1 as u16,
            0,
            WindowClass::INPUT_OUTPUT,
            x11rb::COPY_FROM_PARENT,
            &CreateWindowAux::new()
                .background_pixel(color)
                .override_redirect(1),
        )
        .unwrap();
        conn.map_window(id).unwrap();
        conn.flush().unwrap();
        Arc::new(Self {
            conn: conn.clone(),
            id,
            size,
            hides: Mutex::new(Vec::new()),
        })
    }
}

impl BodyWindow for XBody {
    fn size(&self) -> (u32, u32) {
        self.size
    }
    fn position(&self) -> Option<(i32, i32)> {
        let g = self.conn.get_geometry(self.id).ok()?.reply().ok()?;
        Some((g.x.into(), g.y.into()))
    }
    fn place(&self, (x, y): (i32, i32)) -> Result<(), HostError> {
        self.conn
            .configure_window(self.id, &ConfigureWindowAux::new().x(x).y(y))
            .map_err(|e| HostError::platform("X11", e))?;
        self.conn.flush().map_err(|e| HostError::platform("X11", e))
    }
    fn hide_own_windows(&self, hidden: bool) {
        self.hides.lock().unwrap().push(hidden);
        if hidden {
            self.conn.unmap_window(self.id).unwrap();
        } else {
            self.conn.map_window(self.id).unwrap();
        }
        self.conn.flush().unwrap();
    }
}

/// Poll `f` until it holds (at most 5 s): the window manager acts on its own time.
pub async fn eventually(mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}
