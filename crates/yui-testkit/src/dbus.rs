//! A D-Bus session bus of the test's own (`dbus-daemon --session` on a socket in a temporary
//! dir), for the parts of YUI that talk to other programs over D-Bus: media players (MPRIS) and
//! the desktop's portals. Tests serve their doubles on it, speaking the real interfaces.
//! Stopped when dropped. Needs `dbus-daemon` (`scripts/dev.sh` installs it).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Bus {
    child: Child,
    /// `unix:path=…`, for a client's connection builder.
    pub address: String,
    _dir: tempfile::TempDir,
}

impl Bus {
    /// Start one; `None` (and a line saying why) when `dbus-daemon` is not installed.
    pub fn start() -> Option<Bus> {
        let dir = tempfile::tempdir().expect("a temporary dir");
        let socket = dir.path().join("bus");
        let address = format!("unix:path={}", socket.display());
        let child = Command::new("dbus-daemon")
            .args([
                "--session",
                "--nofork",
                "--nopidfile",
                &format!("--address={address}"),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(child) = child else {
            eprintln!("skipped: dbus-daemon is not installed (scripts/dev.sh installs it)");
            return None;
        };
        let t = Instant::now();
        while !socket.exists() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "dbus-daemon did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Bus {
            child,
            address,
            _dir: dir,
        })
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
