//! `yui say` and `yui listen` as real processes against the test kit's scripted speech server
//! (multipart in / JSON out; JSON in / WAV or PCM out): the exact wire, every bad input and
//! server fault as one plain sentence within a bound. The audio loop through a real PulseAudio
//! null sink is in `voice_loop_cli.rs`.

use crate::support::yui_command;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use yui_testkit::speech::{patterned_tone, wav_bytes, SpeechReply, SpeechServer};

fn run(dir: &Path, args: &[&str]) -> (Option<i32>, Vec<Value>, String, Duration) {
    let t = Instant::now();
    let out = yui_command(dir).args(args).output().unwrap();
    let lines = match args.first() {
        // `settings set` prints one pretty object.
        Some(&"settings") => vec![],
        _ => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect(),
    };
    (
        out.status.code(),
        lines,
        String::from_utf8_lossy(&out.stderr).to_string(),
        t.elapsed(),
    )
}

fn set(dir: &Path, key: &str, value: Value) {
    let v = value.to_string();
    let (code, _, err, _) = run(dir, &["settings", "set", key, &v]);
    assert_eq!(code, Some(0), "{err}");
}

/// The error message of a failed command's stderr.
fn message(stderr: &str) -> String {
    let v: Value = serde_json::from_str(stderr.trim()).unwrap_or_else(|_| panic!("{stderr}"));
    v["message"].as_str().unwrap().to_string()
}

#[test]
fn say_sends_openais_speech_body_per_sentence_and_writes_one_wav_with_its_envelope() {
    let tone = patterned_tone(22_050, &[0.8, 0.1, 0.5]);
    let srv = SpeechServer::start(
        vec![],
        Some(Box::new({
            let tone = tone.clone();
            move |_| SpeechReply::wav(22_050, &tone)
        })),
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("said.wav");
    let (code, lines, err, _) = run(
        dir.path(),
        &[
            "say",
            "--engine",
            "openai",
            "--base-url",
            &srv.base_url,
            "--model",
            "tts-x",
            "--voice",
            "nova",
            "--text",
            "Hello there. How are you?",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let seen = srv.seen();
    assert_eq!(seen.len(), 2, "one request per sentence");
    assert_eq!(seen[0].path, "/v1/audio/speech");
    assert_eq!(seen[0].header("content-type"), Some("application/json"));
    assert_eq!(
        seen[0].json,
        json!({"model": "tts-x", "input": "Hello there.", "voice": "nova", "response_format": "wav", "speed": 1.0})
    );
    assert_eq!(seen[1].json["input"], "How are you?");
    assert!(seen[0].json.get("instructions").is_none());
    let done = &lines[0];
    assert_eq!(done["type"], "done");
    assert_eq!(done["sentences"], 2);
    assert_eq!(done["rate"], 22_050);
    assert_eq!(done["ms"], 600);
    let levels = done["envelope"]["levels"].as_array().unwrap();
    assert_eq!(done["envelope"]["frame_ms"], 20);
    assert_eq!(levels.len(), 30);
    assert!(
        levels[0].as_f64().unwrap() > 0.95,
        "the loud 100 ms: {}",
        levels[0]
    );
    assert!(
        levels[7].as_f64().unwrap() < 0.2,
        "the quiet 100 ms: {}",
        levels[7]
    );
    let wav = std::fs::read(&out).unwrap();
    let r = hound::WavReader::new(std::io::Cursor::new(wav)).unwrap();
    assert_eq!(
        (
            r.spec().sample_rate,
            r.spec().channels,
            r.spec().bits_per_sample
        ),
        (22_050, 1, 16)
    );
    assert_eq!(r.len() as usize, tone.len() * 2);
}

#[test]
fn say_reads_pcm_at_the_configured_rate_and_sends_the_stored_settings() {
    let srv = SpeechServer::start(
        vec![SpeechReply::pcm(&patterned_tone(24_000, &[0.5; 5]))],
        None,
    );
    let dir = tempfile::tempdir().unwrap();
    set(
        dir.path(),
        "yui.voice.tts",
        json!({"base_url": srv.base_url, "model": "m1", "voice": "v1", "response_format": "pcm", "speed": 1.5}),
    );
    let out = dir.path().join("p.wav");
    let (code, lines, err, _) = run(
        dir.path(),
        &[
            "say",
            "--engine",
            "openai",
            "--text",
            "Just one.",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        srv.seen()[0].json,
        json!({"model": "m1", "input": "Just one.", "voice": "v1", "response_format": "pcm", "speed": 1.5})
    );
    assert_eq!(
        (lines[0]["rate"].clone(), lines[0]["ms"].clone()),
        (json!(24_000), json!(500))
    );
}

/// Each fault of the speech server as `yui say` reports it.
#[test]
fn say_faults_are_one_plain_sentence_within_a_bound() {
    let dir = tempfile::tempdir().unwrap();
    set(dir.path(), "yui.voice.tts", json!({"timeout_secs": 2}));
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    let cases: Vec<(Option<SpeechReply>, &str)> = vec![
        (None, "cannot reach the speech server at"),
        (
            Some(SpeechReply::Json(
                500,
                r#"{"error":{"message":"voice model crashed"}}"#.into(),
            )),
            "answered 500 Internal Server Error: voice model crashed",
        ),
        (Some(SpeechReply::Hang), "did not answer within 2 s"),
        (
            Some(SpeechReply::Bytes(
                "audio/wav".into(),
                b"\x00\x01garbage".to_vec(),
            )),
            "the speech server's reply is not a WAV file YUI can read",
        ),
        (
            Some(SpeechReply::text("oops")),
            "answered application/json instead of audio",
        ),
        (Some(SpeechReply::wav(16_000, &[])), "sent no audio"),
    ];
    for (reply, want) in cases {
        let srv = reply.map(|r| SpeechServer::start(vec![r], None));
        let base = srv.as_ref().map_or(down.clone(), |s| s.base_url.clone());
        let out = dir.path().join("x.wav");
        let (code, _, err, took) = run(
            dir.path(),
            &[
                "say",
                "--engine",
                "openai",
                "--base-url",
                &base,
                "--text",
                "Hi.",
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(code, Some(1), "{want}: {err}");
        let m = message(&err);
        assert!(m.contains(want), "want {want:?} in {m:?}");
        assert!(took < Duration::from_secs(8), "{want}: took {took:?}");
    }
    let (code, _, err, _) = run(
        dir.path(),
        &[
            "say",
            "--engine",
            "speech_dispatcher",
            "--text",
            "Hi.",
            "--out",
            "/tmp/never.wav",
        ],
    );
    assert_eq!(code, Some(1));
    let m = message(&err);
    assert!(
        m.contains("cannot write a WAV") || m.contains("spd-say not found"),
        "{m}"
    );
}

/// 16 kHz mono: `bursts` of speech-like tone (start ms, length ms) over a quiet floor.
fn clip(total_ms: u32, bursts: &[(u32, u32)]) -> Vec<f32> {
    let mut s: Vec<f32> = (0..total_ms as u64 * 16)
        .map(|i| 0.001 * ((i * 7919 % 13) as f32 / 13.0 - 0.5))
        .collect();
    for &(at, len) in bursts {
        for i in at * 16..(at + len) * 16 {
            s[i as usize] = 0.4 * (i as f32 * 0.13).sin() * (0.6 + 0.4 * (i as f32 * 0.003).sin());
        }
    }
    s
}

#[test]
fn listen_splits_a_wav_into_utterances_and_uploads_each_as_16k_mono_multipart() {
    let srv = SpeechServer::start(
        vec![
            SpeechReply::text(" first one "),
            SpeechReply::text("second"),
        ],
        None,
    );
    let dir = tempfile::tempdir().unwrap();
    // Stereo on disk: mixed down before upload.
    let mono = clip(5_000, &[(500, 1_000), (3_000, 1_200)]);
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let path = dir.path().join("in.wav");
    let mut w = hound::WavWriter::create(&path, spec).unwrap();
    for s in &mono {
        w.write_sample((s * 32767.0) as i16).unwrap();
        w.write_sample((s * 32767.0) as i16).unwrap();
    }
    w.finalize().unwrap();
    let (code, lines, err, _) = run(
        dir.path(),
        &[
            "listen",
            "--wav",
            path.to_str().unwrap(),
            "--base-url",
            &srv.base_url,
            "--model",
            "whisper-x",
            "--language",
            "en",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["type"], "utterance");
    assert_eq!(lines[0]["text"], "first one");
    assert_eq!(lines[1]["text"], "second");
    let ms = |l: &Value, k: &str| l[k].as_i64().unwrap();
    assert!(
        (ms(&lines[0], "start_ms") - 300).abs() <= 60,
        "{}",
        lines[0]
    );
    assert!(
        (ms(&lines[0], "end_ms") - 1_700).abs() <= 60,
        "{}",
        lines[0]
    );
    assert!(
        (ms(&lines[1], "start_ms") - 2_800).abs() <= 60,
        "{}",
        lines[1]
    );
    let keys: Vec<&String> = lines[0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["end_ms", "start_ms", "text", "type"]);
    let seen = srv.seen();
    assert_eq!(seen.len(), 2);
    let s = &seen[0];
    assert_eq!(s.path, "/v1/audio/transcriptions");
    assert!(s
        .header("content-type")
        .unwrap()
        .starts_with("multipart/form-data; boundary="));
    assert_eq!(s.field("model").as_deref(), Some("whisper-x"));
    assert_eq!(s.field("model_name").as_deref(), Some("whisper-x"));
    assert_eq!(s.field("response_format").as_deref(), Some("json"));
    assert_eq!(s.field("language").as_deref(), Some("en"));
    assert_eq!(s.field("prompt"), None);
    let file = s.form.iter().find(|p| p.name == "file").unwrap();
    assert_eq!(file.filename.as_deref(), Some("speech.wav"));
    assert_eq!(file.content_type.as_deref(), Some("audio/wav"));
    let (rate, ch, bits, samples) = s.wav().unwrap();
    assert_eq!((rate, ch, bits), (16_000, 1, 16));
    assert_eq!(
        samples.len() as i64,
        (ms(&lines[0], "end_ms") - ms(&lines[0], "start_ms")) * 16
    );
    assert!(
        s.header("authorization").is_none(),
        "no key configured, none sent"
    );
}

#[test]
fn listen_bad_input_and_server_faults_are_plain_words_and_nothing_hangs() {
    let dir = tempfile::tempdir().unwrap();
    set(dir.path(), "yui.voice.stt", json!({"timeout_secs": 2}));
    let speech = dir.path().join("speech.wav");
    std::fs::write(&speech, wav_bytes(16_000, &clip(2_000, &[(300, 900)]))).unwrap();
    let silence = dir.path().join("silence.wav");
    std::fs::write(&silence, wav_bytes(16_000, &vec![0.0; 48_000])).unwrap();
    let float = dir.path().join("float.wav");
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut w = hound::WavWriter::create(&float, spec).unwrap();
    w.write_sample(0.1f32).unwrap();
    w.finalize().unwrap();
    let text = dir.path().join("notes.wav");
    std::fs::write(&text, "not audio at all").unwrap();

    let ok = SpeechServer::start(vec![], Some(Box::new(|_| SpeechReply::text("x"))));
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    let s500 = SpeechServer::start(
        vec![SpeechReply::Json(
            500,
            r#"{"detail":"model not loaded"}"#.into(),
        )],
        None,
    );
    let stall = SpeechServer::start(vec![SpeechReply::Hang], None);
    let garbage = SpeechServer::start(vec![SpeechReply::Json(200, "<html>hi</html>".into())], None);
    let p = |f: &Path| f.to_str().unwrap().to_string();
    let cases: Vec<(String, String, &str)> = vec![
        (
            p(&float),
            ok.base_url.clone(),
            "float.wav is 32-bit float WAV; YUI reads 16-bit PCM WAV",
        ),
        (
            p(&text),
            ok.base_url.clone(),
            "notes.wav is not a WAV file YUI can read",
        ),
        (
            p(&dir.path().join("missing.wav")),
            ok.base_url.clone(),
            "cannot read",
        ),
        (p(&silence), ok.base_url.clone(), "no speech heard in"),
        (
            p(&speech),
            down,
            "cannot reach the speech-to-text server at",
        ),
        (
            p(&speech),
            s500.base_url.clone(),
            "answered 500 Internal Server Error: model not loaded",
        ),
        (
            p(&speech),
            stall.base_url.clone(),
            "did not answer within 2 s",
        ),
        (
            p(&speech),
            garbage.base_url.clone(),
            "answered something that is not a transcription",
        ),
    ];
    for (file, base, want) in cases {
        let (code, _, err, took) =
            run(dir.path(), &["listen", "--wav", &file, "--base-url", &base]);
        assert_eq!(code, Some(1), "{want}: {err}");
        let m = message(&err);
        assert!(m.contains(want), "want {want:?} in {m:?}");
        assert!(took < Duration::from_secs(8), "{want}: {took:?}");
    }
    assert!(ok.seen().is_empty(), "bad files never reach the server");
}

#[test]
fn listen_reads_a_ten_minute_file_in_seconds() {
    let srv = SpeechServer::start(
        vec![],
        Some(Box::new(|s| SpeechReply::text(&format!("u{}", s.n)))),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.wav");
    std::fs::write(
        &path,
        wav_bytes(
            16_000,
            &clip(
                600_000,
                &[(10_000, 1_500), (300_000, 2_000), (590_000, 1_000)],
            ),
        ),
    )
    .unwrap();
    let (code, lines, err, took) = run(
        dir.path(),
        &[
            "listen",
            "--wav",
            path.to_str().unwrap(),
            "--base-url",
            &srv.base_url,
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let texts: Vec<&str> = lines.iter().map(|l| l["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["u1", "u2", "u3"]);
    assert!(
        (lines[2]["start_ms"].as_i64().unwrap() - 589_800).abs() <= 60,
        "{}",
        lines[2]
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
}

#[test]
fn doctor_adds_timed_speech_checks_when_voice_is_configured() {
    let backend = yui_testkit::sse::ScriptServer::builder()
        .responder(|_| yui_testkit::sse::Reply::Status(401, r#"{"error":{"message":"no"}}"#.into()))
        .start_blocking();
    let tts = SpeechServer::start(
        vec![SpeechReply::wav(22_050, &patterned_tone(22_050, &[0.5; 8]))],
        None,
    );
    let stt = SpeechServer::start(vec![SpeechReply::text("Testing one two three.")], None);
    let dir = tempfile::tempdir().unwrap();
    let (_, before, _, _) = run(
        dir.path(),
        &["doctor", "--json", "--base-url", &backend.base_url],
    );
    assert!(
        before[0].get("speech").is_none(),
        "no speech checks without voice configured"
    );
    set(
        dir.path(),
        "yui.voice.tts",
        json!({"base_url": tts.base_url}),
    );
    set(
        dir.path(),
        "yui.voice.stt",
        json!({"base_url": stt.base_url}),
    );
    let (code, lines, err, _) = run(
        dir.path(),
        &["doctor", "--json", "--base-url", &backend.base_url],
    );
    assert_eq!(code, Some(0), "{err}");
    let speech = lines[0]["speech"].as_array().unwrap();
    let names: Vec<&str> = speech.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["text_to_speech", "speech_to_text"]);
    assert!(speech.iter().all(|c| c["ok"] == true), "{speech:?}");
    assert!(speech[1]["detail"]
        .as_str()
        .unwrap()
        .contains("\"Testing one two three.\""));
    assert_eq!(tts.seen()[0].json["input"], "Testing one two three.");
    let (rate, _, _, samples) = stt.seen()[0].wav().unwrap();
    assert_eq!(
        (rate, samples.len()),
        (16_000, 12_800),
        "the synthesised sentence, at 16 kHz"
    );
}
