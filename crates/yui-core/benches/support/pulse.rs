//! A PulseAudio daemon of the bench's own with a null sink (`yuisink`) whose monitor is the
//! default source, as `voice_loop_cli` starts one: the voice benches play and record real audio
//! with no sound card. Shared by `barge_in` and `voice_latency` (`#[path]`-included).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The daemon, and its runtime dir (kept until the daemon is stopped).
pub struct Pulse(Child, #[allow(dead_code)] tempfile::TempDir);

impl Drop for Pulse {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start the daemon and point this process's PulseAudio client (cpal's) at it.
pub fn pulse() -> Pulse {
    let rt = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(rt.path().join("home")).unwrap();
    let child = Command::new("pulseaudio")
        .args([
            "--daemonize=no",
            "-n",
            "--exit-idle-time=-1",
            "--disable-shm=yes",
            "--load=module-null-sink sink_name=yuisink",
            "--load=module-native-protocol-unix auth-anonymous=1",
        ])
        .env("XDG_RUNTIME_DIR", rt.path())
        .env("HOME", rt.path().join("home"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("pulseaudio (apt install pulseaudio)");
    let socket = rt.path().join("pulse/native");
    let t = Instant::now();
    while !socket.exists() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::env::set_var("PULSE_SERVER", format!("unix:{}", socket.display()));
    std::env::set_var("XDG_RUNTIME_DIR", rt.path());
    Pulse(child, rt)
}
