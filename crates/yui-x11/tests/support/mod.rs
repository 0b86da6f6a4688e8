//! Real X servers for the tests: an Xvfb (or Xephyr with two Xinerama heads on an Xvfb host)
//! with openbox managing windows, started and stopped by each test, plus small real windows made
//! with x11rb and a body window (an X window the avatar moves) for the executor.
//!
//! Tests take [`lock`] so they run one at a time on the display numbers `YUI_X11_TEST_DISPLAY`
//! (default 81) and the two above it.

#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::*;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;
use yui_core::avatar::{BodyWindow, HostError};

static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub async fn lock() -> tokio::sync::MutexGuard<'static, ()> {
    LOCK.lock().await
}

fn base() -> u32 {
    std::env::var("YUI_X11_TEST_DISPLAY")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(81)
}

/// X servers and a window manager, stopped on drop.
pub struct Session {
    pub display: String,
    children: Vec<Child>,
    nudging: Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.nudging
            .store(false, std::sync::atomic::Ordering::Relaxed);
        // SIGTERM, so an X server removes its lock file and socket for the next test.
        for c in self.children.iter_mut().rev() {
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
            let _ = c.wait();
        }
    }
}

fn spawn(cmd: &str, args: &[&str], display: Option<&str>) -> Child {
    let mut c = Command::new(cmd);
    c.args(args).stdout(Stdio::null()).stderr(Stdio::null());
    if let Some(d) = display {
        c.env("DISPLAY", d);
    }
    c.spawn().unwrap_or_else(|e| panic!("{cmd}: {e}"))
}

fn wait_for_server(display: &str) {
    let until = Instant::now() + Duration::from_secs(10);
    while x11rb::connect(Some(display)).is_err() {
        assert!(Instant::now() < until, "X server {display} did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait until a window manager owns the display (`_NET_SUPPORTING_WM_CHECK`).
fn wait_for_wm(display: &str) {
    let (conn, s) = x11rb::connect(Some(display)).unwrap();
    let root = conn.setup().roots[s].root;
    let atom = intern(&conn, "_NET_SUPPORTING_WM_CHECK");
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let r = conn
            .get_property(false, root, atom, AtomEnum::WINDOW, 0, 1)
            .unwrap()
            .reply()
            .unwrap();
        if r.value32().and_then(|mut v| v.next()).is_some() {
            return;
        }
        assert!(Instant::now() < until, "openbox did not start on {display}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// openbox reads X events into its queue while it waits for a reply and only looks at that queue
/// again when more data arrives on its socket, so on a display where nothing else happens a map
/// request can wait there for good (a real desktop always has traffic). Send openbox a
/// client message every 20 ms, to its own check window only: no other client sees it, so
/// the host's change signal stays quiet.
fn nudge(display: &str) -> Arc<std::sync::atomic::AtomicBool> {
    let on = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let (conn, s) = x11rb::connect(Some(display)).unwrap();
    let root = conn.setup().roots[s].root;
    let check = conn
        .get_property(
            false,
            root,
            intern(&conn, "_NET_SUPPORTING_WM_CHECK"),
            AtomEnum::WINDOW,
            0,
            1,
        )
        .unwrap()
        .reply()
        .unwrap()
        .value32()
        .and_then(|mut v| v.next())
        .unwrap();
    let kind = intern(&conn, "YUI_TEST_NUDGE");
    let flag = on.clone();
    std::thread::spawn(move || {
        while flag.load(std::sync::atomic::Ordering::Relaxed) {
            let ev = ClientMessageEvent::new(32, check, kind, [0u32; 5]);
            if conn
                .send_event(false, check, EventMask::NO_EVENT, ev)
                .is_err()
                || conn.flush().is_err()
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    on
}

impl Session {
    /// One 1920×1080 Xvfb screen with openbox.
    pub fn xvfb() -> Self {
        let display = format!(":{}", base());
        let xvfb = spawn(
            "Xvfb",
            &[
                &display,
                "-screen",
                "0",
                "1920x1080x24",
                "-nolisten",
                "tcp",
                "-noreset",
            ],
            None,
        );
        wait_for_server(&display);
        let wm = spawn("openbox", &[], Some(&display));
        wait_for_wm(&display);
        let nudging = nudge(&display);
        Session {
            display,
            children: vec![xvfb, wm],
            nudging,
        }
    }

    /// Two 1280×1080 heads side by side: Xephyr with Xinerama on an Xvfb host, with openbox.
    pub fn two_heads() -> Self {
        let host = format!(":{}", base() + 1);
        let display = format!(":{}", base() + 2);
        let xvfb = spawn(
            "Xvfb",
            &[
                &host,
                "-screen",
                "0",
                "2600x1100x24",
                "-nolisten",
                "tcp",
                "-noreset",
            ],
            None,
        );
        wait_for_server(&host);
        let xephyr = spawn(
            "Xephyr",
            &[
                &display,
                "+xinerama",
                "-screen",
                "1280x1080+0+0",
                "-screen",
                "1280x1080+1280+0",
                "-nolisten",
                "tcp",
                "-noreset",
            ],
            Some(&host),
        );
        wait_for_server(&display);
        let wm = spawn("openbox", &[], Some(&display));
        wait_for_wm(&display);
        let nudging = nudge(&display);
        Session {
            display,
            children: vec![xvfb, xephyr, wm],
            nudging,
        }
    }

    pub fn conn(&self) -> Arc<RustConnection> {
        Arc::new(x11rb::connect(Some(&self.display)).unwrap().0)
    }
}

pub fn intern(conn: &RustConnection, name: &str) -> Atom {
    conn.intern_atom(false, name.as_bytes())
        .unwrap()
        .reply()
        .unwrap()
        .atom
}

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
