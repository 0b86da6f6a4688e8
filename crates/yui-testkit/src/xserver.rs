//! Real X servers for the tests: an Xvfb (or Xephyr with two Xinerama heads on an Xvfb host)
//! with openbox managing windows, started by a test and stopped when dropped.
//!
//! Each server picks a free display number itself (`-displayfd`) and writes it once it takes
//! connections, so test binaries running side by side (scripts/test-lanes.sh) never share a
//! display and nobody connects to a server that is not up yet. Needs `Xvfb`, `Xephyr` and
//! `openbox` (`scripts/dev.sh` installs them).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::*;
use x11rb::rust_connection::RustConnection;

/// X servers and a window manager, stopped on drop.
pub struct Desktop {
    /// `:N`, for `DISPLAY` and `x11rb::connect`.
    pub display: String,
    children: Vec<Child>,
    nudging: Arc<AtomicBool>,
}

impl Drop for Desktop {
    fn drop(&mut self) {
        self.nudging.store(false, Ordering::Relaxed);
        // SIGTERM, so an X server removes its lock file and socket.
        for c in self.children.iter_mut().rev() {
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
            let _ = c.wait();
        }
    }
}

impl Desktop {
    /// One 1920×1080 Xvfb screen with openbox.
    pub fn xvfb() -> Self {
        Self::xvfb_of("1920x1080x24")
    }

    /// One Xvfb screen of `size` (`"1600x900x24"`) with openbox.
    pub fn xvfb_of(size: &str) -> Self {
        let (xvfb, display) = server(
            "Xvfb",
            &["-screen", "0", size, "-nolisten", "tcp", "-noreset"],
            None,
        );
        Self::managed(display, vec![xvfb])
    }

    /// Two 1280×1080 heads side by side: Xephyr with Xinerama on an Xvfb host, with openbox.
    pub fn two_heads() -> Self {
        let (host_server, host) = server(
            "Xvfb",
            &[
                "-screen",
                "0",
                "2600x1100x24",
                "-nolisten",
                "tcp",
                "-noreset",
            ],
            None,
        );
        let (xephyr, display) = server(
            "Xephyr",
            &[
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
        Self::managed(display, vec![host_server, xephyr])
    }

    fn managed(display: String, mut children: Vec<Child>) -> Self {
        let wm = Command::new("openbox")
            .env("DISPLAY", &display)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("openbox: {e}"));
        children.push(wm);
        // Dropped (and so stopped) if openbox never comes up.
        let mut d = Desktop {
            display,
            children,
            nudging: Arc::new(AtomicBool::new(false)),
        };
        wait_for_wm(&d.display);
        d.nudging = nudge(&d.display);
        d
    }

    pub fn conn(&self) -> Arc<RustConnection> {
        Arc::new(x11rb::connect(Some(&self.display)).unwrap().0)
    }
}

/// Start an X server on a display number of its own choosing; it writes the number to its
/// stdout once it takes connections.
fn server(program: &str, args: &[&str], host: Option<&str>) -> (Child, String) {
    let mut c = Command::new(program);
    c.arg("-displayfd")
        .arg("1")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(d) = host {
        c.env("DISPLAY", d);
    }
    let mut child = c.spawn().unwrap_or_else(|e| panic!("{program}: {e}"));
    // One line once it takes connections, or end of file if it dies first.
    let mut line = String::new();
    let out = child.stdout.take().expect("piped stdout");
    BufReader::new(out)
        .read_line(&mut line)
        .expect("its stdout");
    let n: u32 = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{program} did not start: it printed {line:?}"));
    (child, format!(":{n}"))
}

pub fn intern(conn: &RustConnection, name: &str) -> Atom {
    conn.intern_atom(false, name.as_bytes())
        .unwrap()
        .reply()
        .unwrap()
        .atom
}

/// Wait until a window manager owns the display (`_NET_SUPPORTING_WM_CHECK`).
fn wait_for_wm(display: &str) {
    let (conn, s) = x11rb::connect(Some(display)).unwrap();
    let root = conn.setup().roots[s].root;
    let atom = intern(&conn, "_NET_SUPPORTING_WM_CHECK");
    let what = format!("openbox did not start on {display}");
    wait_for_property(&conn, root, atom, AtomEnum::WINDOW, 1, &what);
}

/// Poll `window`'s `property` until it holds `len` values of `kind` (at most 30 s, else panic
/// with `what`).
fn wait_for_property(
    conn: &RustConnection,
    window: Window,
    property: Atom,
    kind: AtomEnum,
    len: u32,
    what: &str,
) {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let r = conn
            .get_property(false, window, property, kind, 0, len)
            .unwrap()
            .reply()
            .unwrap();
        if r.value_len >= len {
            return;
        }
        assert!(Instant::now() < until, "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// openbox reads X events into its queue while it waits for a reply and only looks at that queue
/// again when more data arrives on its socket, so on a display where nothing else happens a map
/// request can wait there for good (a real desktop always has traffic). Send openbox a
/// client message every 20 ms, to its own check window only: no other client sees it, so
/// the host's change signal stays quiet.
fn nudge(display: &str) -> Arc<AtomicBool> {
    let on = Arc::new(AtomicBool::new(true));
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
        while flag.load(Ordering::Relaxed) {
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

/// Wait until the window manager has handled everything sent to it before this call (focus
/// events of earlier activations included): it handles its events in order, so its answer to a
/// `_NET_REQUEST_FRAME_EXTENTS` for a new, unmapped window comes after them. Under load openbox
/// can act on a stale focus event long after a test saw the next window active.
pub fn wm_sync(conn: &RustConnection) {
    let root = conn.setup().roots[0].root;
    let w = conn.generate_id().unwrap();
    conn.create_window(
        x11rb::COPY_DEPTH_FROM_PARENT,
        w,
        root,
        0,
        0,
        1,
        1,
        0,
        WindowClass::INPUT_OUTPUT,
        x11rb::COPY_FROM_PARENT,
        &CreateWindowAux::new(),
    )
    .unwrap();
    let extents = intern(conn, "_NET_FRAME_EXTENTS");
    let ev = ClientMessageEvent::new(32, w, intern(conn, "_NET_REQUEST_FRAME_EXTENTS"), [0u32; 5]);
    conn.send_event(
        false,
        root,
        EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
        ev,
    )
    .unwrap();
    conn.flush().unwrap();
    let what = "the window manager did not answer _NET_REQUEST_FRAME_EXTENTS";
    wait_for_property(conn, w, extents, AtomEnum::CARDINAL, 4, what);
    conn.destroy_window(w).unwrap();
    conn.flush().unwrap();
}
