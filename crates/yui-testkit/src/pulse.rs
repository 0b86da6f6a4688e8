//! A PulseAudio daemon of the test's own: a null sink `yuisink` whose monitor is the default
//! source, so what is played is what the microphone hears (the voice loops), plus any modules a
//! test adds (a null source as a microphone for the manners' probe). Its socket is anonymous and
//! under a temporary runtime dir, so runs side by side never hear each other. Stopped when
//! dropped. Needs `pulseaudio` and `pactl` (`scripts/dev.sh` installs them).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Pulse {
    child: Child,
    runtime: tempfile::TempDir,
}

impl Pulse {
    /// The daemon with the null sink only.
    pub fn start() -> Pulse {
        Self::with_modules(&[])
    }

    /// The daemon with the null sink and `modules` (`"module-null-source source_name=mic"`).
    pub fn with_modules(modules: &[&str]) -> Pulse {
        let runtime = tempfile::tempdir().expect("a temporary runtime dir");
        let dir = runtime.path().to_path_buf();
        std::fs::create_dir_all(dir.join("home")).expect("its home");
        let mut args: Vec<String> = [
            "--daemonize=no",
            "-n",
            "--exit-idle-time=-1",
            "--disable-shm=yes",
            "--load=module-null-sink sink_name=yuisink",
            "--load=module-native-protocol-unix auth-anonymous=1",
        ]
        .map(String::from)
        .to_vec();
        args.extend(modules.iter().map(|m| format!("--load={m}")));
        let child = Command::new("pulseaudio")
            .args(&args)
            .env("XDG_RUNTIME_DIR", &dir)
            .env("HOME", dir.join("home"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pulseaudio (apt install pulseaudio pulseaudio-utils; scripts/dev.sh does)");
        let p = Pulse { child, runtime };
        // The socket file exists from bind() on and a connect before listen() is refused (seen
        // under load): ready is when pactl gets an answer.
        let t = Instant::now();
        loop {
            let ok = Command::new("pactl")
                .arg("info")
                .envs(p.env())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("pactl");
            if ok.success() {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "pulseaudio did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        for args in [
            ["set-default-sink", "yuisink"],
            ["set-default-source", "yuisink.monitor"],
        ] {
            let ok = Command::new("pactl")
                .args(args)
                .envs(p.env())
                .status()
                .expect("pactl");
            assert!(ok.success(), "pactl {args:?}");
        }
        p
    }

    /// The daemon's socket.
    pub fn socket(&self) -> PathBuf {
        self.runtime.path().join("pulse/native")
    }

    /// The environment that finds this daemon (libpulse, pactl and the `pulseaudio` crate).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("XDG_RUNTIME_DIR", self.runtime.path().display().to_string()),
            ("PULSE_SERVER", format!("unix:{}", self.socket().display())),
        ]
    }
}

impl Drop for Pulse {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
