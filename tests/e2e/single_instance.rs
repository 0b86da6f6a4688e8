//! One instance (src-tauri/src/instance.rs): a second launch on the same data dir hands its
//! arguments to the running app over the D-Bus session bus and exits; the running app shows its
//! characters (here: out of the minimized state the window manager put them in) and, for
//! `--settings`, opens Settings. A launch on another data dir runs on its own.
//!
//! The app is started directly (not through tauri-driver) so both launches share this process's
//! session bus: tests/e2e/run.sh runs it under a `dbus-run-session` of its own, in one of its
//! lanes (the rest of the suite has no session bus). The windows are read from the X server.

use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{
    AtomEnum, ClientMessageEvent, ConnectionExt as _, EventMask, MapState, Window,
};
use x11rb::rust_connection::RustConnection;

struct X {
    conn: RustConnection,
    root: Window,
}

impl X {
    fn connect() -> Self {
        let (conn, screen) = x11rb::connect(None).expect("X display (run through run.sh)");
        let root = conn.setup().roots[screen].root;
        Self { conn, root }
    }

    fn atom(&self, name: &str) -> u32 {
        self.conn
            .intern_atom(false, name.as_bytes())
            .unwrap()
            .reply()
            .unwrap()
            .atom
    }

    /// The managed windows titled `title` (the window manager's `_NET_CLIENT_LIST`, which keeps
    /// minimized windows).
    fn windows(&self, title: &str) -> Vec<Window> {
        let (list, name, utf8) = (
            self.atom("_NET_CLIENT_LIST"),
            self.atom("_NET_WM_NAME"),
            self.atom("UTF8_STRING"),
        );
        let clients = self
            .conn
            .get_property(false, self.root, list, AtomEnum::WINDOW, 0, 4096)
            .unwrap()
            .reply()
            .unwrap();
        clients
            .value32()
            .into_iter()
            .flatten()
            .filter(|&w| {
                self.conn
                    .get_property(false, w, name, utf8, 0, 1024)
                    .ok()
                    .and_then(|c| c.reply().ok())
                    .is_some_and(|p| p.value == title.as_bytes())
            })
            .collect()
    }

    fn viewable(&self, w: Window) -> bool {
        self.conn
            .get_window_attributes(w)
            .ok()
            .and_then(|c| c.reply().ok())
            .is_some_and(|a| a.map_state == MapState::VIEWABLE)
    }

    /// Ask the window manager to minimize `w` (ICCCM WM_CHANGE_STATE, IconicState), as a user
    /// clicking its minimize button would.
    fn minimize(&self, w: Window) {
        let event =
            ClientMessageEvent::new(32, w, self.atom("WM_CHANGE_STATE"), [3u32, 0, 0, 0, 0]);
        self.conn
            .send_event(
                false,
                self.root,
                EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
                event,
            )
            .unwrap();
        self.conn.flush().unwrap();
    }

    /// Wait until the one window titled `title` is viewable (or not); panics after `secs`.
    fn wait_viewable(&self, title: &str, want: bool, secs: u64) -> Window {
        let until = Instant::now() + Duration::from_secs(secs);
        loop {
            let found = self.windows(title);
            if let [w] = found[..] {
                if self.viewable(w) == want {
                    return w;
                }
            }
            assert!(
                Instant::now() < until,
                "window {title:?}: wanted viewable={want}; windows so far: {found:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn launch(data_dir: &Path, extra: &[&str]) -> Child {
    Command::new(super::app_binary())
        .arg("--data-dir")
        .arg(data_dir)
        .args(extra)
        .spawn()
        .expect("start the app")
}

/// The exit of a second launch, which must come within `secs`.
fn exits_within(mut child: Child, secs: u64) -> ExitStatus {
    let until = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the second launch was still running after {secs} s: it should hand over and exit"
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[ignore = "end-to-end: run under dbus-run-session through tests/e2e/run.sh"]
fn a_second_launch_brings_the_running_app_forward_and_exits() {
    assert!(
        std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some(),
        "no D-Bus session bus: run this test under dbus-run-session (tests/e2e/run.sh does)"
    );
    let dir = tempfile::tempdir().unwrap();
    let x = X::connect();
    // The windows are found by title, so none of an earlier test's app may linger: in a lane of
    // tests/e2e/run.sh the test before this one ended its session just now, and its app's windows
    // can outlive the session's end by a moment.
    let until = Instant::now() + Duration::from_secs(30);
    while !x.windows("YUI — Yui").is_empty() || !x.windows("YUI — Kai").is_empty() {
        assert!(
            Instant::now() < until,
            "an earlier app's characters are still on the display after 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut first = Running(launch(dir.path(), &[]));
    let yui = x.wait_viewable("YUI — Yui", true, 60);
    x.wait_viewable("YUI — Kai", true, 30);

    // Minimized by the user; a plain second launch shows it again and exits at once.
    x.minimize(yui);
    x.wait_viewable("YUI — Yui", false, 10);
    let status = exits_within(launch(dir.path(), &[]), 20);
    assert!(status.success(), "second launch: {status}");
    x.wait_viewable("YUI — Yui", true, 10);
    assert!(
        first.0.try_wait().unwrap().is_none(),
        "the first app must keep running"
    );
    // Still one set of characters, and no settings window yet.
    assert_eq!(x.windows("YUI — Yui").len(), 1);
    assert_eq!(x.windows("YUI — Kai").len(), 1);
    assert!(x.windows("YUI settings").is_empty());

    // `--settings` opens Settings in the running app.
    let status = exits_within(launch(dir.path(), &["--settings"]), 20);
    assert!(status.success(), "second launch with --settings: {status}");
    x.wait_viewable("YUI settings", true, 15);
    assert!(
        first.0.try_wait().unwrap().is_none(),
        "the first app must keep running"
    );

    // One instance per data dir: an app on another one is another YUI, and runs.
    let other_dir = tempfile::tempdir().unwrap();
    let mut other = Running(launch(other_dir.path(), &[]));
    let until = Instant::now() + Duration::from_secs(60);
    while x.windows("YUI — Yui").len() < 2 {
        assert!(
            other.0.try_wait().unwrap().is_none(),
            "the app on another data dir exited instead of running"
        );
        assert!(
            Instant::now() < until,
            "no second set of characters for the other data dir"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
