//! `yui turn --transport realtime --audio-in FILE.wav [--audio-out FILE.wav]` against the test
//! kit's realtime server answering with audio: the question goes out as 20 ms pcm16 24 kHz
//! appends and a commit, the reply's audio comes back into a WAV file sample for sample, or out
//! of a PulseAudio null sink (its monitor recorded with `parec`), and the transcript is the
//! stored reply.

use crate::support::yui_command;
use crate::voice_loop_cli::ONE_AT_A_TIME;
use base64::Engine as _;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;
use yui_testkit::pulse::Pulse;
use yui_testkit::realtime::{self as rt, RealtimeServer};

fn question_wav(path: &std::path::Path) {
    // 600 ms of a 300 Hz tone at 16 kHz, stereo: the CLI converts it.
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    for i in 0..9_600 {
        let s =
            (0.4 * (i as f32 * 300.0 * std::f32::consts::TAU / 16_000.0).sin() * 32767.0) as i16;
        w.write_sample(s).unwrap();
        w.write_sample(s).unwrap();
    }
    w.finalize().unwrap();
}

async fn yui(
    dir: &std::path::Path,
    args: &[&str],
    env: Vec<(&'static str, String)>,
) -> std::process::Output {
    let mut cmd = tokio::process::Command::from(yui_command(dir));
    cmd.args(args)
        .envs(env)
        .env_remove("YUI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().unwrap().wait_with_output().await.unwrap()
}

fn lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// What the client appended, decoded: the question at 24 kHz.
fn appended(events: &[Value]) -> Vec<i16> {
    events
        .iter()
        .filter(|e| e["type"] == "input_audio_buffer.append")
        .flat_map(|e| {
            let b = base64::engine::general_purpose::STANDARD
                .decode(e["audio"].as_str().unwrap())
                .unwrap();
            b.chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[tokio::test]
async fn a_spoken_question_is_appended_committed_and_the_spoken_reply_lands_in_a_wav() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("question.wav");
    let r = dir.path().join("reply.wav");
    question_wav(&q);
    let srv = RealtimeServer::auto(vec![rt::audio_reply("r1", &["Hello ", "there."], 300)]).await;
    let out = yui(
        dir.path(),
        &[
            "turn",
            "--transport",
            "realtime",
            "--realtime-url",
            &srv.url,
            "--audio-in",
            q.to_str().unwrap(),
            "--audio-out",
            r.to_str().unwrap(),
        ],
        vec![],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ev = lines(&out.stdout);
    let end = ev.last().unwrap();
    assert_eq!(end["type"], "turn_end");
    assert_eq!(end["status"], "ok");
    assert_eq!(end["text"], "Hello there.");

    // The wire: an audio session with push-to-talk, then the question, its end, a response.
    let sent = srv.events();
    let session = &sent[0]["session"];
    assert_eq!(session["output_modalities"], serde_json::json!(["audio"]));
    assert!(
        session["audio"]["input"]["turn_detection"].is_null(),
        "{session}"
    );
    let kinds: Vec<&str> = sent.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let n = kinds
        .iter()
        .filter(|k| **k == "input_audio_buffer.append")
        .count();
    assert_eq!(n, 30, "{kinds:?}"); // 600 ms in 20 ms chunks
    assert_eq!(
        &kinds[n + 1..],
        ["input_audio_buffer.commit", "response.create"]
    );
    assert!(!kinds.contains(&"conversation.item.create"), "{kinds:?}");
    let q24 = appended(&sent);
    assert_eq!(q24.len(), 14_400);
    let rms = (q24.iter().map(|s| (*s as f64).powi(2)).sum::<f64>() / q24.len() as f64).sqrt();
    assert!((rms / 32768.0 - 0.4 / 2f64.sqrt()).abs() < 0.02, "{rms}");

    // The reply's audio, sample for sample.
    let mut reader = hound::WavReader::open(&r).unwrap();
    assert_eq!(reader.spec().sample_rate, 24_000);
    assert_eq!(reader.spec().channels, 1);
    let got: Vec<i16> = reader.samples::<i16>().map(|s| s.unwrap()).collect();
    // The server sends each 20 ms delta as a fresh 20 ms of tone.
    let want: Vec<i16> = (0..30).flat_map(|_| rt::tone(20)).collect();
    assert_eq!(got.len(), want.len());
    assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() <= 1));

    // The transcript keeps the spoken turn and the reply as heard in full.
    let t = yui(dir.path(), &["transcript", "--preset", "yui"], vec![]).await;
    let rows = lines(&t.stdout);
    let texts: Vec<&str> = rows.iter().filter_map(|r| r["text"].as_str()).collect();
    assert!(texts.contains(&"(spoken: question.wav)"), "{rows:?}");
    assert!(texts.contains(&"Hello there."), "{rows:?}");
}

#[tokio::test]
async fn audio_flags_need_the_realtime_transport_and_a_readable_wav() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.wav");
    std::fs::write(&bad, b"RIFF not really").unwrap();
    let srv = RealtimeServer::auto(vec![]).await;
    let out = yui(
        dir.path(),
        &[
            "turn",
            "--transport",
            "chat_completions",
            "--audio-in",
            bad.to_str().unwrap(),
        ],
        vec![],
    )
    .await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("need the realtime transport"), "{err}");
    let out = yui(
        dir.path(),
        &[
            "turn",
            "--transport",
            "realtime",
            "--realtime-url",
            &srv.url,
            "--audio-in",
            bad.to_str().unwrap(),
        ],
        vec![],
    )
    .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.wav is not a WAV file YUI can read"),
        "{err}"
    );
    assert!(srv.events().is_empty(), "nothing was sent");
}

/// The reply played through a real PulseAudio null sink: its monitor hears 600 ms of tone.
#[tokio::test]
// The guard keeps the binary's other audio tests (other threads) off the sound server while this
// one runs; this test's runtime is its own, so holding it across awaits blocks nobody else's.
#[allow(clippy::await_holding_lock)]
async fn the_spoken_reply_plays_out_of_a_null_sink() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let pulse = Pulse::start();
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("question.wav");
    question_wav(&q);
    let srv = RealtimeServer::auto(vec![rt::audio_reply("r1", &["Hi ", "you."], 300)]).await;
    let rec = dir.path().join("monitor.raw");
    let mut parec = tokio::process::Command::new("parec")
        .args([
            "--device=yuisink.monitor",
            "--format=s16le",
            "--rate=24000",
            "--channels=1",
            "--latency-msec=20",
        ])
        .envs(pulse.env())
        .stdout(std::fs::File::create(&rec).unwrap())
        .spawn()
        .expect("parec (pulseaudio-utils)");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t = std::time::Instant::now();
    let out = yui(
        dir.path(),
        &[
            "turn",
            "--transport",
            "realtime",
            "--realtime-url",
            &srv.url,
            "--audio-in",
            q.to_str().unwrap(),
        ],
        pulse.env(),
    )
    .await;
    let took = t.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(lines(&out.stdout).last().unwrap()["text"], "Hi you.");
    // The command waits until the reply has been heard.
    assert!(took >= Duration::from_millis(600), "{took:?}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let _ = parec.kill().await;
    let raw = std::fs::read(&rec).unwrap();
    let s: Vec<f32> = raw
        .chunks_exact(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]) as f32 / 32768.0)
        .collect();
    // 20 ms frames loud like the tone (8000/32768 peak → rms ≈ 0.17).
    let loud = s
        .chunks(480)
        .filter(|f| {
            let r = (f.iter().map(|x| x * x).sum::<f32>() / f.len() as f32).sqrt();
            r > 0.1
        })
        .count();
    eprintln!("realtime audio cli: turn took {took:?}, {loud} loud 20 ms frames on the monitor");
    assert!(
        (25..=40).contains(&loud),
        "{loud} loud frames of the 30 played"
    );
}
