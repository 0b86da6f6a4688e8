//! A D-Bus session bus of the test's own (`dbus-daemon --session` on a socket in a temporary
//! dir), for the parts of YUI that talk to other programs over D-Bus: media players (MPRIS) and
//! the desktop's portals. Tests serve their doubles on it, speaking the real interfaces.
//! Stopped when dropped. Needs `dbus-daemon` (`scripts/dev.sh` installs it).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

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
        // `--print-address` writes the address once the daemon listens: the socket file alone
        // exists from bind() on, and a connect before listen() is refused (seen under load).
        let child = Command::new("dbus-daemon")
            .args([
                "--session",
                "--nofork",
                "--nopidfile",
                "--print-address",
                &format!("--address={address}"),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = child else {
            eprintln!("skipped: dbus-daemon is not installed (scripts/dev.sh installs it)");
            return None;
        };
        // One line once it listens, or end of file if it dies first.
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("dbus-daemon's stdout");
        assert!(
            line.starts_with("unix:"),
            "dbus-daemon did not start: it printed {line:?}"
        );
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
