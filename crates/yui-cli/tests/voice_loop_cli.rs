//! Real audio through a real PulseAudio: the test starts its own daemon (own runtime dir, so it
//! never meets the user's or another test's) with a null sink whose monitor is the default
//! source. `yui listen --mic` records that monitor while `yui say` plays a scripted speech
//! server's clip into the sink: the microphone hears what was said, the transcription server
//! gets it, and its loudness follows the envelope `yui say` reported. The loopback adds about
//! 3.5 s of delay (PulseAudio's buffering of a null sink), so this checks correctness, not latency.

use crate::support::yui_command;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use yui_testkit::pulse::Pulse;
use yui_testkit::speech::{patterned_tone, SpeechReply, SpeechServer};

/// One audio test at a time: two real-time audio loops beside each other (and the rest of the
/// suite) starve each other's playback into gaps.
pub(crate) static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn yui(dir: &Path, pulse: &Pulse, args: &[&str]) -> Command {
    let mut c = yui_command(dir);
    c.args(args).envs(pulse.env());
    c
}

fn json_lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The best Pearson correlation of `b` against `a` shifted by up to `lag` frames either way.
fn best_correlation(a: &[f32], b: &[f32], lag: usize) -> f32 {
    let mut best = -1f32;
    for shift in 0..=lag {
        best = best.max(yui_core::voice::pcm::correlation(
            &a[shift.min(a.len())..],
            b,
        ));
        best = best.max(yui_core::voice::pcm::correlation(
            a,
            &b[shift.min(b.len())..],
        ));
    }
    best
}

#[test]
fn said_aloud_through_a_null_sink_is_heard_by_the_microphone_with_the_same_envelope() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let pulse = Pulse::start();
    let dir = tempfile::tempdir().unwrap();
    let pattern = [
        0.8, 0.8, 0.05, 0.05, 0.6, 0.6, 0.6, 0.05, 0.9, 0.9, 0.3, 0.3, 0.8, 0.05, 0.7,
    ];
    let tone = patterned_tone(22_050, &pattern);
    let tts = SpeechServer::start(vec![SpeechReply::wav(22_050, &tone)], None);
    let stt = SpeechServer::start(vec![], Some(Box::new(|_| SpeechReply::text("heard you"))));

    // The device list is PulseAudio's, with the null sink and its monitor.
    let out = yui(dir.path(), &pulse, &["say", "--devices"])
        .output()
        .unwrap();
    let devices = json_lines(&out.stdout);
    assert_eq!(devices[0]["host"], "PulseAudio", "{devices:?}");
    assert!(
        devices[0]["inputs"].to_string().contains("Monitor"),
        "{devices:?}"
    );

    let listen = yui(
        dir.path(),
        &pulse,
        &[
            "listen",
            "--mic",
            "--seconds",
            "7",
            "--base-url",
            &stt.base_url,
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    let said = yui(
        dir.path(),
        &pulse,
        &[
            "say",
            "--engine",
            "openai",
            "--base-url",
            &tts.base_url,
            "--text",
            "Hello.",
        ],
    )
    .output()
    .unwrap();
    let said_took = t.elapsed();
    assert!(
        said.status.success(),
        "{}",
        String::from_utf8_lossy(&said.stderr)
    );
    let events = json_lines(&said.stdout);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["sentence", "played", "done"], "{events:?}");
    assert_eq!(events[2]["played_ms"], 1500);
    assert_eq!(events[2]["outcome"], "spoken");
    // "Played" means the last sample reached the speaker: never before the clip's length.
    assert!(said_took >= Duration::from_millis(1500), "{said_took:?}");
    let played: Vec<f32> = events[0]["envelope"]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    assert_eq!(played.len(), 75);

    let heard = listen.wait_with_output().unwrap();
    assert!(
        heard.status.success(),
        "{}",
        String::from_utf8_lossy(&heard.stderr)
    );
    let utterances = json_lines(&heard.stdout);
    assert!(!utterances.is_empty());
    assert!(utterances
        .iter()
        .all(|u| u["type"] == "utterance" && u["text"] == "heard you"));
    // What the server got is the clip: not silence, the same length, the same loudness shape.
    let uploads = stt.seen();
    if std::env::var_os("YUI_VOICE_DEBUG").is_some() {
        for u in &uploads {
            let f = u.form.iter().find(|p| p.name == "file").unwrap();
            std::fs::write(format!("/tmp/loop-upload-{}.wav", u.n), &f.data).unwrap();
        }
        eprintln!("{utterances:?}");
    }
    let (rate, _, _, samples) = uploads[0].wav().expect("a WAV upload");
    assert_eq!(rate, 16_000);
    let rec = yui_core::voice::pcm::Pcm::new(rate, samples);
    assert!(
        rec.rms() > 0.05,
        "the recording is silence: rms {}",
        rec.rms()
    );
    let ms = rec.duration_ms();
    // A loaded machine can leave short gaps in the loop (playback underruns): longer, not shorter.
    assert!(
        (1_400..=3_500).contains(&ms),
        "recorded utterance of {ms} ms"
    );
    let heard_env = rec.envelope().levels;
    let r = best_correlation(&played, &heard_env, 25);
    assert!(
        r > 0.6,
        "the recording's envelope does not follow the played one: r = {r}"
    );
    eprintln!("audio loop: say took {said_took:?} for 1500 ms, heard {ms} ms, envelope r = {r:.3}");
}

/// A device that is not there, one that vanishes mid-clip, and no audio server at all: one plain
/// sentence each, exit 1, nothing hangs.
#[test]
fn missing_and_vanishing_devices_are_plain_words_within_a_bound() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let pulse = Pulse::start();
    let dir = tempfile::tempdir().unwrap();
    let five_s: Vec<f32> = (0..80_000).map(|i| 0.3 * (i as f32 * 0.1).sin()).collect();
    let tts = SpeechServer::start(
        vec![],
        Some(Box::new(move |_| SpeechReply::wav(16_000, &five_s))),
    );
    let say = |extra: &[&str], env: Option<&Path>| {
        let mut args = vec![
            "say",
            "--engine",
            "openai",
            "--base-url",
            &tts.base_url,
            "--text",
            "Hi.",
        ];
        args.extend_from_slice(extra);
        let mut c = yui(dir.path(), &pulse, &args);
        if let Some(empty) = env {
            c.env("XDG_RUNTIME_DIR", empty).env_remove("PULSE_SERVER");
        }
        c.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let message = |out: std::process::Output| {
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        // ALSA (tried when no server runs) prints its own lines first: the error is the last.
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or_default();
        let v: Value = serde_json::from_str(last).unwrap_or_else(|_| panic!("{err}"));
        v["message"].as_str().unwrap().to_string()
    };

    let m = message(say(&["--device", "Nope"], None).wait_with_output().unwrap());
    assert!(
        m.starts_with("the audio output device \"Nope\" is not there"),
        "{m}"
    );

    let child = say(&[], None);
    // Unplugged while it plays: once its stream is on the server (a loaded machine can take
    // seconds to get there; a sink unloaded before that is a missing device, not a vanished one).
    let playing = Instant::now();
    loop {
        let inputs = Command::new("pactl")
            .args(["list", "short", "sink-inputs"])
            .envs(pulse.env())
            .output()
            .unwrap();
        if !inputs.stdout.is_empty() {
            break;
        }
        assert!(
            playing.elapsed() < Duration::from_secs(30),
            "`yui say` never started playing"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    let unloaded = Command::new("pactl")
        .args(["unload-module", "module-null-sink"])
        .envs(pulse.env())
        .status()
        .unwrap();
    assert!(unloaded.success());
    let m = message(child.wait_with_output().unwrap());
    assert!(m.contains("went away"), "{m}");
    // The clip had seconds left: it ended because the device went, not because it was done.
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());

    let empty = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let m = message(say(&[], Some(empty.path())).wait_with_output().unwrap());
    assert!(
        m.contains("no audio output device found") || m.contains("cannot be used"),
        "{m}"
    );
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}
