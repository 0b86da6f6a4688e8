//! A realtime voice session in the app, end to end (issue 32): the main character's backend is
//! the test kit's scripted realtime server answering with audio; push-to-talk (F9 held) streams
//! the suite's PulseAudio null sink monitor (an espeak-ng question played with `paplay`) to the
//! session as appends, the release commits and asks; the server's answer (the user's words, then
//! speech in 20 ms audio deltas with gaps) plays through the null sink (`parec` hears it on the
//! monitor), the mouth opens and shuts with it by the streamed lip-sync batches, playback
//! finishes, and the transcript has the user's words and the reply.
//!
//! Hands-free: the scripted server's own voice activity (`auto_vad`) hears the question in the
//! appends and starts the response itself; the turn is the user's, stored and answered aloud.
//! Its transcribed words come 4 s after the reply (past the app's 2.5 s wait): the turn starts
//! with the placeholder, and the words replace it in the window and the store.
//!
//! Prints the figures docs/PERFORMANCE.md quotes (release or end of speech → first reply audio,
//! appends, heard ms). `YUI_E2E_RT_SHOT=path.png` saves a screenshot while the reply plays
//! (docs/img/realtime-voice.png).

use super::realtime::use_realtime;
use super::voice_listen::{hold_f9_until_listening, spoken_wav};
use super::{launch_showing, read_store, seed};
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use yui_core::settings;
use yui_core::transcript::{self, Role};
use yui_testkit::realtime::{self as rt, RealtimeServer};

const T: Duration = Duration::from_secs(40);
/// F9's keysym.
const F9: u32 = 0xffc6;

/// The spoken answer: the user's words as transcribed, then per word 240 ms of tone and 120 ms
/// of silence (so the mouth opens and shuts), with the transcript beside it.
fn spoken_answer() -> Vec<Value> {
    let item = "msg_r1";
    let mut v = vec![
        rt::input_transcript("item_u1", "Good night"),
        rt::created("r1"),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": item, "type": "message", "role": "assistant", "status": "in_progress", "content": []}}),
    ];
    for (i, word) in ["Sleep ", "well, ", "see ", "you ", "tomorrow."]
        .iter()
        .enumerate()
    {
        v.push(rt::transcript_delta(item, word));
        let tone = rt::tone(240);
        for chunk in tone.chunks(480) {
            v.push(rt::audio_delta(item, chunk));
        }
        if i < 4 {
            for _ in 0..6 {
                v.push(rt::audio_delta(item, &[0; 480]));
            }
        }
    }
    v.push(json!({"type": "response.output_audio.done", "item_id": item}));
    v.push(rt::done("r1", "completed"));
    v
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver + PulseAudio: run tests/e2e/run.sh"]
async fn push_to_talk_to_a_realtime_backend_is_answered_aloud_with_the_mouth_moving() {
    let (dir, question) = spoken_wav("Good night");
    let srv = RealtimeServer::auto(vec![spoken_answer()]).await;
    let url = srv.url.clone();
    seed(dir.path(), |st| {
        use_realtime(st, &url);
        settings::set(
            st,
            "yui.voice.listen",
            &json!({"mode": "push_to_talk", "shortcut": "F9"}),
        )
        .unwrap();
        settings::set(
            st,
            "yui.voice",
            &json!({"enabled": true, "engine": "openai"}),
        )
        .unwrap();
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return document.getElementById('stage').dataset.mic === 'off' && !!document.querySelector('#character .yui-char')",
        T,
    )
    .await
    .expect("push-to-talk: the microphone waits, off");
    super::voice::watch_mouth(&s).await;
    let hands = super::xinput::Hands::connect().expect("the X display");
    hold_f9_until_listening(&s, &hands).await;
    let played = Command::new("paplay").arg(&question).status().unwrap();
    assert!(played.success());
    // The null sink's loopback lags the playback by a few seconds (voice_loop_cli.rs).
    tokio::time::sleep(Duration::from_secs(5)).await;
    // From here on the sink carries only the answer: its monitor is recorded, each 20 ms block
    // stamped as it arrives (the figures below are wall-clock, not parec's start).
    let (mut rec, blocks, reader) = stamp_monitor();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let release = Instant::now();
    hands.key(F9, false).unwrap();
    s.wait_script(
        "return Number(document.getElementById('stage').dataset.lipBatches || 0) >= 1",
        T,
    )
    .await
    .expect("the reply's lip-sync batches reach the window");
    let first_batch = release.elapsed();
    if let Some(path) = std::env::var_os("YUI_E2E_RT_SHOT") {
        let _ = s
            .wait_script(
                "return Number(document.querySelector('#character .yui-char').dataset.mouth) > 0.5 && !document.getElementById('bubble').hidden && document.getElementById('bubble').textContent.length > 12",
                Duration::from_secs(3),
            )
            .await;
        super::voice_listen::screenshot(&path, &s.screenshot().await.expect("screenshot"));
    }
    s.wait_script(
        "const d = document.getElementById('stage').dataset; return d.heard === 'Good night' && !!d.voiceTurnId && d.voiceReply === 'Sleep well, see you tomorrow.' && d.speechEnded === d.voiceTurnId && d.playbackFinished === d.voiceTurnId",
        T,
    )
    .await
    .expect("the spoken turn's reply was heard to its end (playback finished)");
    let stage: Value = s
        .exec(
            "const d = document.getElementById('stage').dataset;
             return { batches: d.lipBatches, heardMs: d.heardMs, mouths: window.__mouths, mic: d.mic,
                      note: document.getElementById('voice-note')?.textContent ?? null,
                      mouth: document.querySelector('#character .yui-char').dataset.mouth }",
            json!([]),
        )
        .await
        .unwrap();
    assert!(stage["note"].is_null(), "no voice note: {stage}");
    assert_eq!(stage["mouth"], "0", "the mouth shut at the end: {stage}");
    let heard_ms: u64 = stage["heardMs"].as_str().unwrap().parse().unwrap();
    assert!(
        (1600..=1800).contains(&heard_ms),
        "1680 ms of speech heard: {stage}"
    );
    let mouths: Vec<f64> = stage["mouths"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m.as_str()?.parse().ok())
        .collect();
    let open = mouths.iter().filter(|m| **m > 0.35).count();
    let shut = mouths.iter().filter(|m| **m < 0.1).count();
    assert!(
        open >= 8 && shut >= 4,
        "the mouth opens and shuts with the voice: {mouths:?}"
    );
    // What went over the socket: the audio session, push-to-talk's turn detection, the held
    // audio as appends, its end and one ask.
    let sent = srv.events();
    let first_update = sent.iter().find(|e| e["type"] == "session.update").unwrap();
    assert_eq!(
        first_update["session"]["output_modalities"],
        json!(["audio"])
    );
    let kinds: Vec<&str> = sent.iter().filter_map(|e| e["type"].as_str()).collect();
    let appends = kinds
        .iter()
        .filter(|k| **k == "input_audio_buffer.append")
        .count();
    assert!(
        appends >= 100,
        "at least 2 s held in 20 ms appends: {appends}"
    );
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == "input_audio_buffer.commit")
            .count(),
        1
    );
    assert_eq!(kinds.iter().filter(|k| **k == "response.create").count(), 1);
    assert!(!kinds.contains(&"conversation.item.create"), "{kinds:?}");
    let lines = transcript::lines(&read_store(dir.path()), "yui", 10).unwrap();
    let said: Vec<(Role, &str)> = lines.iter().map(|l| (l.role, l.text.as_str())).collect();
    assert_eq!(
        said,
        [
            (Role::User, "Good night"),
            (Role::Assistant, "Sleep well, see you tomorrow.")
        ]
    );
    // The monitor heard the answer (the sink holds a little: record a moment longer).
    tokio::time::sleep(Duration::from_millis(800)).await;
    let _ = rec.kill();
    let _ = rec.wait();
    let _ = reader.join();
    let blocks = blocks.lock().unwrap().clone();
    let loud: Vec<Instant> = blocks
        .iter()
        .filter(|(_, l)| *l > 0.05)
        .map(|(t, _)| *t)
        .collect();
    // 5 × 240 ms of tone: 60 frames of 20 ms.
    assert!(
        loud.len() >= 45,
        "the monitor heard {} loud 20 ms frames of the answer in {} blocks",
        loud.len(),
        blocks.len()
    );
    let first_loud = loud[0].saturating_duration_since(release);
    eprintln!(
        "realtime voice e2e: appends {appends}; heard {heard_ms} ms; loud frames {}; \
         release → first lip-sync batch seen {} ms; release → first reply audio read at the monitor {} ms",
        loud.len(),
        first_batch.as_millis(),
        first_loud.as_millis()
    );
    let _ = s.delete().await;
}

/// The monitor's 20 ms blocks: when each arrived, and its RMS.
type Blocks = Arc<Mutex<Vec<(Instant, f32)>>>;

/// Each 20 ms block of the null sink's monitor, stamped with the wall clock as `parec` delivers
/// it: its RMS. Ends when `rec` is killed.
fn stamp_monitor() -> (std::process::Child, Blocks, std::thread::JoinHandle<()>) {
    let pulse = std::env::var("PULSE_SERVER").expect("the suite's PulseAudio");
    let mut rec = Command::new("parec")
        .args([
            "--device=yuisink.monitor",
            "--format=s16le",
            "--rate=16000",
            "--channels=1",
            "--raw",
            "--latency-msec=10",
        ])
        .env("PULSE_SERVER", &pulse)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("parec (pulseaudio-utils)");
    let blocks = Arc::new(Mutex::new(Vec::new()));
    let mut out = rec.stdout.take().unwrap();
    let into = blocks.clone();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut buf = [0u8; 640];
        while out.read_exact(&mut buf).is_ok() {
            let f: Vec<f32> = buf
                .chunks_exact(2)
                .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32 / 32768.0)
                .collect();
            into.lock()
                .unwrap()
                .push((Instant::now(), yui_core::voice::pcm::rms(&f)));
        }
    });
    (rec, blocks, reader)
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver + PulseAudio: run tests/e2e/run.sh"]
async fn hands_free_to_a_realtime_backend_the_servers_voice_activity_starts_the_turn() {
    let (dir, question) = spoken_wav("What time is it?");
    let mut answer = spoken_answer();
    // The user's words come late: after the reply, past the app's 2.5 s wait for them. The turn
    // starts with "(spoken; no transcript)" and the words replace it when they come.
    answer.remove(0);
    answer.push(rt::sleep(4000));
    answer.push(rt::input_transcript("item_u1", "What time is it?"));
    let srv = RealtimeServer::auto_vad(vec![answer]).await;
    let url = srv.url.clone();
    seed(dir.path(), |st| {
        use_realtime(st, &url);
        settings::set(st, "yui.voice.listen", &json!({"mode": "hands_free"})).unwrap();
        settings::set(
            st,
            "yui.voice",
            &json!({"enabled": true, "engine": "openai"}),
        )
        .unwrap();
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "const d = document.getElementById('stage').dataset; return ['listening', 'hearing', 'paused'].includes(d.mic) && !!document.querySelector('#character .yui-char')",
        T,
    )
    .await
    .expect("hands-free: the microphone is live");
    let (mut rec, blocks, reader) = stamp_monitor();
    let played = Command::new("paplay").arg(&question).status().unwrap();
    assert!(played.success());
    s.wait_script(
        "const d = document.getElementById('stage').dataset; return d.heard === 'What time is it?' && !!d.voiceTurnId && d.heardLaterTurnId === d.voiceTurnId && d.voiceReply === 'Sleep well, see you tomorrow.' && d.playbackFinished === d.voiceTurnId",
        T,
    )
    .await
    .expect("the server's voice activity started the turn; its reply was heard to its end; the words came later");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let _ = rec.kill();
    let _ = rec.wait();
    let _ = reader.join();
    let commit = *srv
        .commits()
        .first()
        .expect("the server ended the utterance");
    let blocks = blocks.lock().unwrap().clone();
    let loud: Vec<Instant> = blocks
        .iter()
        .filter(|(t, l)| *t > commit && *l > 0.05)
        .map(|(t, _)| *t)
        .collect();
    assert!(
        loud.len() >= 45,
        "the reply at the monitor: {} loud blocks",
        loud.len()
    );
    let sent = srv.events();
    let appends = sent
        .iter()
        .filter(|e| e["type"] == "input_audio_buffer.append")
        .count();
    assert!(
        !sent
            .iter()
            .any(|e| e["type"] == "input_audio_buffer.commit" || e["type"] == "response.create"),
        "hands-free leaves the turn to the server"
    );
    let lines = transcript::lines(&read_store(dir.path()), "yui", 10).unwrap();
    let said: Vec<(Role, &str)> = lines.iter().map(|l| (l.role, l.text.as_str())).collect();
    assert_eq!(
        said[..2],
        [
            (Role::User, "What time is it?"),
            (Role::Assistant, "Sleep well, see you tomorrow.")
        ]
    );
    eprintln!(
        "realtime hands-free e2e: appends {appends}; server commit (end of speech + 500 ms) → first reply audio read at the monitor {} ms; lines stored {}",
        loud[0].saturating_duration_since(commit).as_millis(),
        said.len()
    );
    let _ = s.delete().await;
}
