//! Real headless compositors for the tests, from Debian's packages: sway (wlroots: the overlay
//! layer) and weston (no layer shell; Xwayland on demand). sway refuses to run as root, so as
//! root (CI) both run as the plain user [`USER`], made here when missing, with a runtime
//! directory of their own; the tests (root) can still open its sockets.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The plain user compositors run as when the tests run as root.
pub const USER: &str = "yui-wayland-test";

/// A compositor, stopped (and its runtime directory removed) on drop.
pub struct Compositor {
    child: Child,
    pub runtime_dir: PathBuf,
    /// The socket's name in `runtime_dir` (`WAYLAND_DISPLAY`).
    pub display: String,
    /// The X display Xwayland serves (weston with `--xwayland`).
    pub x_display: Option<String>,
    _dir: tempfile::TempDir,
}

impl Drop for Compositor {
    fn drop(&mut self) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// The uid and gid of [`USER`], made first when missing.
fn plain_user() -> (u32, u32) {
    let id = |flag: &str| {
        Command::new("id")
            .args([flag, USER])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
    };
    if id("-u").is_none() {
        let made = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                USER,
            ])
            .status()
            .expect("useradd");
        assert!(
            made.success() || id("-u").is_some(),
            "cannot make user {USER}"
        );
    }
    (id("-u").unwrap(), id("-g").unwrap())
}

/// A runtime directory (mode 0700) owned by whoever runs the compositor.
fn runtime_dir() -> (tempfile::TempDir, Option<(u32, u32)>) {
    let dir = tempfile::Builder::new()
        .prefix("yui-wl-")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let owner = is_root().then(plain_user);
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).unwrap();
    }
    (dir, owner)
}

fn command(program: &str, owner: Option<(u32, u32)>) -> Command {
    match owner {
        Some(_) => {
            let mut c = Command::new("runuser");
            c.args(["-u", USER, "--", program]);
            c
        }
        None => Command::new(program),
    }
}

fn wait_for_socket(path: &Path, child: &mut Child, what: &str, log: &Path) {
    let until = Instant::now() + Duration::from_secs(15);
    while std::os::unix::net::UnixStream::connect(path).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            panic!("{what} exited ({status}) before listening:\n{log}");
        }
        assert!(
            Instant::now() < until,
            "{what} did not listen at {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// sway with its headless backend, one output of `width`×`height`, and the config `extra`.
pub fn sway(width: u32, height: u32, extra: &str) -> Compositor {
    let (dir, owner) = runtime_dir();
    let config = dir.path().join("sway.conf");
    std::fs::write(
        &config,
        format!("output HEADLESS-1 resolution {width}x{height} position 0 0\n{extra}\n"),
    )
    .unwrap();
    let log = dir.path().join("sway.log");
    let mut c = command("sway", owner);
    c.args(["-c", config.to_str().unwrap()])
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
        .env("XDG_RUNTIME_DIR", dir.path())
        .env("WLR_BACKENDS", "headless")
        .env("WLR_RENDERER", "pixman")
        .env("WLR_LIBINPUT_NO_DEVICES", "1")
        .env("WLR_HEADLESS_OUTPUTS", "1")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    let mut child = c.spawn().expect("sway (Debian package sway)");
    let display = "wayland-1".to_string();
    wait_for_socket(&dir.path().join(&display), &mut child, "sway", &log);
    Compositor {
        child,
        runtime_dir: dir.path().to_path_buf(),
        display,
        x_display: None,
        _dir: dir,
    }
}

/// weston's headless backend (pixman), one output of `width`×`height`, with Xwayland when
/// `xwayland` (its X display is ready at once; the server starts when the first X client comes).
pub fn weston(width: u32, height: u32, xwayland: bool) -> Compositor {
    let (dir, owner) = runtime_dir();
    let log = dir.path().join("weston.log");
    let display = "wayland-y".to_string();
    let mut c = command("weston", owner);
    c.args([
        "--backend=headless-backend.so",
        "--use-pixman",
        "--idle-time=0",
        &format!("--width={width}"),
        &format!("--height={height}"),
        &format!("--socket={display}"),
    ]);
    if xwayland {
        c.arg("--xwayland");
    }
    c.env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
        .env("XDG_RUNTIME_DIR", dir.path())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    let mut child = c.spawn().expect("weston (Debian package weston)");
    wait_for_socket(&dir.path().join(&display), &mut child, "weston", &log);
    let x_display = xwayland.then(|| x_display_of(&log));
    Compositor {
        child,
        runtime_dir: dir.path().to_path_buf(),
        display,
        x_display,
        _dir: dir,
    }
}

/// The X display weston's Xwayland listens on, from its log ("xserver listening on display :1").
fn x_display_of(log: &Path) -> String {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(at) = text.find("listening on display ") {
            let rest = &text[at + "listening on display ".len()..];
            return rest.split_whitespace().next().unwrap().to_string();
        }
        assert!(
            Instant::now() < until,
            "weston's Xwayland did not listen:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Compositor {
    /// Let the caller (root in CI) onto the Xwayland of a compositor run as [`USER`]: Xwayland
    /// admits only its own user's local clients (`xhost`, said by that user).
    pub fn admit_caller_to_x(&self) {
        let Some(x) = &self.x_display else { return };
        if !is_root() {
            return;
        }
        let ok = Command::new("runuser")
            .args(["-u", USER, "--", "xhost", "+si:localuser:root"])
            .env("DISPLAY", x)
            .stdout(Stdio::null())
            .status()
            .expect("xhost (Debian package x11-xserver-utils)");
        assert!(ok.success(), "xhost refused");
    }
}
