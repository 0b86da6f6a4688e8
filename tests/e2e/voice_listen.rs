//! A spoken question answered aloud, end to end, and the microphone's other ways in: the suite's
//! PulseAudio (run.sh: a null sink whose monitor is the default source) carries an espeak-ng
//! recording of "What time is it?" played with `paplay` into the app's hands-free microphone;
//! voice activity cuts the utterance, the test kit's scripted speech server gets it as a 16 kHz
//! WAV and answers the text, the turn runs exactly as if typed (the transcript has the user's line
//! and the reply), and the reply is spoken through the same scripted server's `/audio/speech` on
//! the null sink (`parec` hears it on the monitor) with the character's mouth moving by the clips'
//! envelopes. The badge shows while the microphone is live and one click on it stops it.
//!
//! `YUI_E2E_MIC_SHOT=path.png` saves a screenshot of the window listening (docs/img/microphone.png);
//! `YUI_E2E_ROUND_SHOT=path.png` one of the spoken answer (docs/img/voice-round.png).

use super::webdriver::Session;
use super::{fake_backend, launch_showing, open_settings, read_store, seed, settings_section};
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use yui_core::backend::Transport;
use yui_core::settings;
use yui_core::transcript::{self, Role};
use yui_testkit::speech::{patterned_tone, SpeechReply, SpeechServer};
use yui_testkit::sse::{self, Part, Reply};

const T: Duration = Duration::from_secs(40);

/// Loudness per 100 ms of each spoken sentence: words and gaps, so the mouth opens and shuts.
const PATTERN: [f32; 12] = [
    0.8, 0.2, 0.9, 0.9, 0.05, 0.7, 0.8, 0.05, 0.9, 0.6, 0.8, 0.05,
];

pub(super) fn screenshot(path: &std::ffi::OsStr, b64: &str) {
    use base64::Engine;
    let png = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .expect("png");
    std::fs::write(path, png).expect("write the screenshot");
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver + PulseAudio: run tests/e2e/run.sh"]
async fn a_spoken_question_is_answered_aloud_with_the_mouth_moving_and_the_badge_stops_the_microphone(
) {
    let (dir, question) = spoken_wav("What time is it?");
    // One server for both directions. Only the first utterance is the question: anything heard
    // later (half duplex keeps the character's own voice out; this guards the assertion that
    // only one user turn ran) is transcribed as nothing, as a real server does with a tone.
    let heard = AtomicUsize::new(0);
    let speech = SpeechServer::start(
        vec![],
        Some(Box::new(move |seen| {
            if seen.path.ends_with("/transcriptions") {
                let first = heard.fetch_add(1, Ordering::SeqCst) == 0;
                SpeechReply::text(if first { "What time is it?" } else { "" })
            } else {
                SpeechReply::wav(22_050, &patterned_tone(22_050, &PATTERN))
            }
        })),
    );
    let (server, _requests) = fake_backend::serve(|_| {
        Reply::Sse(vec![
            sse::c_text("It is noon."),
            Part::Sleep(Duration::from_millis(300)),
            sse::c_text(" Time for lunch!"),
            sse::c_finish("stop"),
            sse::done(),
        ])
    })
    .await;
    let (base, speech_base) = (server.base_url.clone(), speech.base_url.clone());
    seed(dir.path(), |st| {
        fake_backend::point_at(st, &base, Transport::ChatCompletions);
        settings::set(st, "yui.voice.listen", &json!({"mode": "hands_free"})).unwrap();
        settings::set(st, "yui.voice.stt", &json!({"base_url": speech_base})).unwrap();
        settings::set(
            st,
            "yui.voice",
            &json!({"enabled": true, "engine": "openai"}),
        )
        .unwrap();
        settings::set(
            st,
            "yui.voice.tts",
            &json!({"base_url": speech_base, "use_backend_key": false}),
        )
        .unwrap();
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    // Hands-free follows the setting at start: the badge shows on the main character.
    s.wait_script(
        "const d = document.getElementById('stage').dataset; return ['listening', 'hearing', 'paused'].includes(d.mic) && !document.getElementById('mic-badge').hidden && !!document.querySelector('#character .yui-char')",
        T,
    )
    .await
    .expect("the microphone is live and the badge shows");
    if let Some(path) = std::env::var_os("YUI_E2E_MIC_SHOT") {
        screenshot(&path, &s.screenshot().await.expect("screenshot"));
    }
    super::voice::watch_mouth(&s).await;
    let played = Command::new("paplay")
        .arg(&question)
        .status()
        .expect("paplay (pulseaudio-utils)");
    assert!(played.success(), "paplay into the suite's null sink");
    s.wait_script(
        "return document.getElementById('stage').dataset.heard === 'What time is it?'",
        T,
    )
    .await
    .expect("the spoken question was heard");
    // From here on the sink carries only the answer: its monitor is recorded.
    let pulse = std::env::var("PULSE_SERVER").unwrap();
    let rec_file = dir.path().join("answer.raw");
    let mut rec = Command::new("parec")
        .args([
            "--device=yuisink.monitor",
            "--format=s16le",
            "--rate=16000",
            "--channels=1",
            "--raw",
        ])
        .env("PULSE_SERVER", &pulse)
        .stdout(std::fs::File::create(&rec_file).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("parec (pulseaudio-utils)");
    s.wait_script(
        "return Number(document.getElementById('stage').dataset.clips || 0) >= 1",
        T,
    )
    .await
    .expect("the answer is being said");
    if let Some(path) = std::env::var_os("YUI_E2E_ROUND_SHOT") {
        let _ = s
            .wait_script(
                "return Number(document.querySelector('#character .yui-char').dataset.mouth) > 0.8",
                Duration::from_secs(3),
            )
            .await;
        screenshot(&path, &s.screenshot().await.expect("screenshot"));
    }
    s.wait_script(
        "const d = document.getElementById('stage').dataset; return !!d.voiceTurnId && d.voiceReply === 'It is noon. Time for lunch!' && d.speechEnded === d.voiceTurnId && d.playbackFinished === d.voiceTurnId",
        T,
    )
    .await
    .expect("the answer was said to its end (playback finished)");
    let stage: Value = s
        .exec(
            "const d = document.getElementById('stage').dataset;
             return { clips: d.clips, mouths: window.__mouths,
                      note: document.getElementById('voice-note')?.textContent ?? null,
                      mouth: document.querySelector('#character .yui-char').dataset.mouth }",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(stage["clips"], "2", "two sentences, two clips: {stage}");
    assert!(stage["note"].is_null(), "no voice note: {stage}");
    assert_eq!(stage["mouth"], "0", "the mouth shut at the end: {stage}");
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
    // The question went up as a 16 kHz mono WAV of about its length; the answer came back as
    // one request per sentence.
    let seen = speech.seen();
    let uploads: Vec<_> = seen
        .iter()
        .filter(|r| r.path.ends_with("/transcriptions"))
        .collect();
    let (rate, channels, _, samples) = uploads[0].wav().expect("a WAV upload");
    assert_eq!((rate, channels), (16_000, 1));
    let ms = samples.len() as u64 / 16;
    assert!((600..=6_000).contains(&ms), "{ms} ms uploaded");
    let inputs: Vec<&str> = seen
        .iter()
        .filter(|r| r.path.ends_with("/audio/speech"))
        .map(|r| r.json["input"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(inputs, ["It is noon.", "Time for lunch!"]);
    let lines = transcript::lines(&read_store(dir.path()), "yui", 10).unwrap();
    let said: Vec<(Role, &str)> = lines.iter().map(|l| (l.role, l.text.as_str())).collect();
    assert_eq!(
        said,
        [
            (Role::User, "What time is it?"),
            (Role::Assistant, "It is noon. Time for lunch!")
        ]
    );
    // The monitor heard the answer (the sink holds a little: record a moment longer).
    tokio::time::sleep(Duration::from_millis(800)).await;
    let _ = rec.kill();
    let _ = rec.wait();
    let raw = std::fs::read(&rec_file).unwrap();
    let heard: Vec<f32> = raw
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32 / 32768.0)
        .collect();
    let loud = heard
        .chunks(320)
        .filter(|f| yui_core::voice::pcm::rms(f) > 0.05)
        .count();
    assert!(
        loud >= 25,
        "the monitor heard {loud} loud 20 ms frames of the answer in {} ms",
        heard.len() / 16
    );
    // One click on the badge stops the microphone.
    let badge = s.find("#mic-badge").await.expect("the badge");
    s.click(&badge).await.expect("click the badge");
    s.wait_script(
        "return document.getElementById('stage').dataset.mic === 'off' && document.getElementById('mic-badge').hidden",
        Duration::from_secs(10),
    )
    .await
    .expect("the microphone stopped and the badge went");
    let _ = s.delete().await;
}

/// F9's keysym.
const F9: u32 = 0xffc6;

/// Hold F9 until the main window's microphone listens (the shortcut is taken shortly after
/// start, so a press that came too early is released and tried again).
pub(crate) async fn hold_f9_until_listening(s: &Session, hands: &super::xinput::Hands) {
    let mut open = false;
    for _ in 0..20 {
        hands.key(F9, true).unwrap();
        if s.wait_script(
            "return document.getElementById('stage').dataset.mic === 'listening'",
            Duration::from_secs(1),
        )
        .await
        .is_ok()
        {
            open = true;
            break;
        }
        hands.key(F9, false).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(open, "holding F9 opened the microphone");
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver + PulseAudio: run tests/e2e/run.sh"]
async fn holding_the_global_shortcut_is_push_to_talk_for_the_main_character() {
    let (dir, question) = spoken_wav("Good night");
    let stt = SpeechServer::start(vec![], Some(Box::new(|_| SpeechReply::text("Good night"))));
    let (server, _requests) = fake_backend::serve(|_| {
        Reply::Sse(vec![
            sse::c_text("Sleep well."),
            sse::c_finish("stop"),
            sse::done(),
        ])
    })
    .await;
    let (base, stt_base) = (server.base_url.clone(), stt.base_url.clone());
    seed(dir.path(), |st| {
        fake_backend::point_at(st, &base, Transport::ChatCompletions);
        settings::set(
            st,
            "yui.voice.listen",
            &json!({"mode": "push_to_talk", "shortcut": "F9"}),
        )
        .unwrap();
        settings::set(st, "yui.voice.stt", &json!({"base_url": stt_base})).unwrap();
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return document.getElementById('stage').dataset.mic === 'off'",
        T,
    )
    .await
    .expect("push-to-talk: the microphone waits, off");
    let hands = super::xinput::Hands::connect().expect("the X display");
    hold_f9_until_listening(&s, &hands).await;
    let played = Command::new("paplay").arg(&question).status().unwrap();
    assert!(played.success());
    // The null sink's loopback lags the playback by a few seconds (voice_loop_cli.rs).
    tokio::time::sleep(Duration::from_secs(5)).await;
    hands.key(F9, false).unwrap();
    s.wait_script(
        "const d = document.getElementById('stage').dataset; return d.heard === 'Good night' && d.voiceReply === 'Sleep well.' && d.mic === 'off'",
        T,
    )
    .await
    .expect("what was said while F9 was held became the user's message");
    assert_eq!(stt.seen().len(), 1, "one hold, one transcription");
    let _ = s.delete().await;
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn settings_voice_turns_hands_free_on_and_the_quick_controls_stop_it() {
    let dir = tempfile::tempdir().unwrap();
    let s = launch_showing(dir.path(), &["main"]).await;
    open_settings(&s).await;
    settings_section(&s, "voice-listen").await;
    s.wait_script(
        "const v = document.getElementById('voice-listen'); return v.dataset.listenLoaded === 'true' && document.getElementById('listen-mode').value === 'off' && document.getElementById('listen-echo').textContent.includes('duplex')",
        T,
    )
    .await
    .expect("the microphone block shows: off by default, and what echo cancellation was found");
    s.exec(
        "document.getElementById('listen-mode').value = 'hands_free'; document.getElementById('listen-hangover').value = '800'",
        json!([]),
    )
    .await
    .unwrap();
    let save = s.find("#listen-save").await.unwrap();
    s.click(&save).await.unwrap();
    s.wait_script(
        "return document.getElementById('listen-status').dataset.live === 'true'",
        T,
    )
    .await
    .expect("saving hands-free opens the microphone for the main character");
    let stored = yui_core::voice::config::load_listen(&read_store(dir.path())).unwrap();
    assert_eq!(stored.mode, yui_core::voice::config::MicMode::HandsFree);
    assert_eq!(stored.hangover_ms, 800);
    // The quick controls show it and one click stops it.
    s.switch_to_label("main").await.unwrap();
    let r = s
        .invoke("window_open", json!({"which": "quick"}))
        .await
        .unwrap();
    assert!(r["ok"].as_bool().unwrap_or(false), "{r}");
    s.wait_for_label("quick", T).await.unwrap();
    s.switch_to_label("quick").await.unwrap();
    s.wait_script(
        "return document.getElementById('mic-state').dataset.live === 'true' && !document.getElementById('mic-stop').hidden",
        T,
    )
    .await
    .expect("the quick controls show the live microphone");
    let stop = s.find("#mic-stop").await.unwrap();
    s.click(&stop).await.unwrap();
    s.wait_script(
        "return document.getElementById('mic-state').dataset.live === 'false'",
        T,
    )
    .await
    .expect("one click stopped it");
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return document.getElementById('mic-badge').hidden",
        Duration::from_secs(10),
    )
    .await
    .expect("the badge went");
    let _ = s.delete().await;
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver + PulseAudio: run tests/e2e/run.sh"]
async fn settings_voice_test_listening_hears_the_microphone_and_the_speech_servers_sample() {
    let (dir, question) = spoken_wav("Good morning");
    let speech = SpeechServer::start(
        vec![],
        Some(Box::new(|seen| {
            if seen.path.ends_with("/transcriptions") {
                SpeechReply::text("Good morning")
            } else {
                SpeechReply::wav(22_050, &patterned_tone(22_050, &PATTERN))
            }
        })),
    );
    let base = speech.base_url.clone();
    seed(dir.path(), |st| {
        settings::set(st, "yui.voice.stt", &json!({"base_url": base})).unwrap();
        settings::set(
            st,
            "yui.voice.tts",
            &json!({"base_url": base, "use_backend_key": false}),
        )
        .unwrap();
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    open_settings(&s).await;
    settings_section(&s, "voice").await;
    s.wait_script(
        "return document.getElementById('voice').dataset.voiceLoaded === 'true'",
        T,
    )
    .await
    .expect("Settings → Voice loaded");
    // The microphone (the null sink's monitor) hears espeak-ng's words while the test records.
    let listen = s.find("#voice-test-listen").await.unwrap();
    s.click(&listen).await.unwrap();
    // The words again and again until the 4 s recording is over: the device opens some time
    // after the click (longer on a loaded machine), and the test must not depend on when.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let speaker = {
        let (done, question) = (done.clone(), question.clone());
        std::thread::spawn(move || {
            for _ in 0..8 {
                if done.load(Ordering::SeqCst) {
                    break;
                }
                let played = Command::new("paplay").arg(&question).status();
                assert!(played.is_ok_and(|p| p.success()), "paplay");
                std::thread::sleep(Duration::from_millis(300));
            }
        })
    };
    let finished = s
        .wait_script(
            "return ['ok', 'error'].includes(document.getElementById('voice').dataset.listenTest)",
            T,
        )
        .await;
    done.store(true, Ordering::SeqCst);
    let _ = speaker.join();
    finished.expect("the microphone test ended");
    let shown: String = s
        .exec(
            "return document.getElementById('voice-test-listen-result').textContent",
            json!([]),
        )
        .await
        .unwrap()
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(
        shown.starts_with("Heard “Good morning” (") && shown.contains("from the microphone"),
        "the microphone test heard the words: {shown}"
    );
    // With no microphone needed: the speech server's sentence, transcribed.
    let sample = s.find("#voice-test-sample").await.unwrap();
    s.click(&sample).await.unwrap();
    s.wait_script(
        "const t = document.getElementById('voice-test-listen-result').textContent; return document.getElementById('voice').dataset.listenTest === 'ok' && t.includes('the speech server')",
        T,
    )
    .await
    .expect("the sample check heard the speech server's sentence");
    let seen = speech.seen();
    let paths: Vec<&str> = seen.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths.len(), 3, "{paths:?}");
    assert!(paths[0].ends_with("/audio/transcriptions") && paths[1].ends_with("/audio/speech"));
    assert_eq!(seen[1].json["input"], "Testing one two three.");
    let _ = s.delete().await;
}

/// The suite's PulseAudio is there (run.sh starts one per lane), and `text` said by espeak-ng
/// into a WAV in a new temp dir (kept alive by the returned guard).
pub(super) fn spoken_wav(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    assert!(
        std::env::var_os("PULSE_SERVER").is_some(),
        "no PulseAudio for the suite: install pulseaudio (scripts/dev.sh deps) and use tests/e2e/run.sh"
    );
    let dir = tempfile::tempdir().unwrap();
    let question = dir.path().join("question.wav");
    let spoken = Command::new("espeak-ng")
        .args(["-s", "150", "-w"])
        .arg(&question)
        .arg(text)
        .status()
        .expect("espeak-ng (apt install espeak-ng; scripts/dev.sh deps installs it)");
    assert!(spoken.success());
    (dir, question)
}
