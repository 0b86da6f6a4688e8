//! The busy probes on real parts: a real process holding a "video device" open, a real
//! PulseAudio with a real recording client, real processes named like screen recorders. Each
//! probe must see the program and name it, and must stop seeing it when it ends.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use yui_core::manners::microphone::PulseMicrophone;
use yui_core::manners::probes::{busy, Busy};
use yui_core::manners::screen::ProcScreen;
use yui_testkit::pulse::Pulse;

/// Ask `probe` until it says something (a child takes a moment to start).
fn until_busy(probe: &dyn yui_core::manners::probes::BusyProbes) -> Option<Busy> {
    let t = Instant::now();
    loop {
        let seen = busy(probe);
        if seen.is_some() || t.elapsed() > Duration::from_secs(5) {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stop(mut c: Child) {
    let _ = c.kill();
    let _ = c.wait();
}

#[test]
fn the_camera_probe_sees_another_process_holding_a_video_device_open() {
    use yui_core::manners::camera::ProcCamera;
    let dir = tempfile::tempdir().unwrap();
    let device = dir.path().join("video0");
    std::fs::write(&device, b"").unwrap();
    let probe = ProcCamera {
        proc_root: "/proc".into(),
        prefix: dir.path().join("video"),
        own_pid: std::process::id(),
    };
    assert_eq!(busy(&probe), None);
    // A real process (named camholder) holds the "device" open.
    let holder = dir.path().join("camholder");
    std::os::unix::fs::symlink("/bin/sleep", &holder).unwrap();
    let mut child = std::process::Command::new(&holder)
        .arg("30")
        .stdin(std::fs::File::open(&device).unwrap())
        .spawn()
        .unwrap();
    let mut seen = None;
    for _ in 0..50 {
        seen = busy(&probe);
        if seen.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(seen, Some(Busy::Camera(Some("camholder".into()))));
    assert_eq!(seen.unwrap().reason(), "camera in use by camholder");
    assert_eq!(busy(&probe), None, "gone when the process ends");
}

/// A PulseAudio of its own with a null source as the microphone (its sink's monitor is not one).
fn pulse() -> Pulse {
    Pulse::with_modules(&["module-null-source source_name=mic"])
}

/// `parecord` recording from `device` under the client name `name`.
fn record(pulse: &Pulse, device: &str, name: &str) -> Child {
    Command::new("parecord")
        .args([
            &format!("--device={device}"),
            &format!("--client-name={name}"),
            "--raw",
        ])
        .envs(pulse.env())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("parecord (pulseaudio-utils)")
}

#[test]
fn the_microphone_probe_sees_another_program_recording_and_not_a_monitor_or_yui_itself() {
    let pulse = pulse();
    let probe = PulseMicrophone {
        socket: Some(pulse.socket()),
        own_pid: std::process::id(),
    };
    assert_eq!(busy(&probe), None, "nobody records yet");
    // Recording the speakers' monitor (what a screen recorder does with the desktop's sound) is
    // not the microphone.
    let monitor = record(&pulse, "yuisink.monitor", "DesktopAudio");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(busy(&probe), None, "a monitor is not a microphone");
    let call = record(&pulse, "mic", "Meeting");
    let seen = until_busy(&probe);
    assert_eq!(seen, Some(Busy::Microphone(Some("Meeting".into()))));
    assert_eq!(seen.unwrap().reason(), "microphone in use by Meeting");
    // The same stream seen as YUI's own is never counted.
    let own = PulseMicrophone {
        socket: Some(pulse.socket()),
        own_pid: call.id(),
    };
    assert_eq!(
        busy(&own),
        None,
        "YUI's own recording is not another program's"
    );
    stop(call);
    let t = Instant::now();
    while busy(&probe).is_some() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(busy(&probe), None, "gone when the program stops");
    stop(monitor);
}

#[test]
fn a_microphone_probe_with_no_sound_server_cannot_tell_and_reads_as_not_busy() {
    let dir = tempfile::tempdir().unwrap();
    let probe = PulseMicrophone {
        socket: Some(dir.path().join("pulse/native")),
        own_pid: std::process::id(),
    };
    let e = probe.recorder().unwrap_err();
    assert!(
        e.to_string().starts_with(
            "asking the sound server who records: could not connect to the sound server at "
        ),
        "{e}"
    );
    assert_eq!(busy(&probe), None);
}

#[test]
fn the_screen_probe_sees_a_screen_recorder_and_ffmpeg_grabbing_the_screen_only() {
    let dir = tempfile::tempdir().unwrap();
    let probe = ProcScreen {
        proc_root: "/proc".into(),
        own_pid: std::process::id(),
    };
    assert_eq!(
        busy(&probe),
        None,
        "this machine records nothing to begin with"
    );
    // A real process the kernel names wf-recorder.
    let recorder = dir.path().join("wf-recorder");
    std::os::unix::fs::symlink("/bin/sleep", &recorder).unwrap();
    let child = Command::new(&recorder).arg("30").spawn().unwrap();
    assert_eq!(until_busy(&probe), Some(Busy::ScreenShared));
    assert_eq!(probe.recorder().as_deref(), Some("wf-recorder"));
    stop(child);
    assert_eq!(busy(&probe), None, "gone when it ends");
    // ffmpeg counts only while it grabs the screen: a script named ffmpeg, waiting on stdin.
    let ffmpeg = dir.path().join("ffmpeg");
    std::fs::write(&ffmpeg, "#!/bin/sh\nread line\n").unwrap();
    std::fs::set_permissions(&ffmpeg, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = |args: &[&str]| {
        Command::new(&ffmpeg)
            .args(args)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let converting = run(&["-i", "talk.wav", "talk.mp3"]);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        busy(&probe),
        None,
        "ffmpeg converting a file is not recording the screen"
    );
    let grabbing = run(&["-f", "x11grab", "-i", ":0", "out.mkv"]);
    assert_eq!(until_busy(&probe), Some(Busy::ScreenShared));
    assert_eq!(probe.recorder().as_deref(), Some("ffmpeg"));
    stop(grabbing);
    stop(converting);
}
