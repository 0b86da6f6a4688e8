//! A spoken question becomes the user's message in the main character's window, end to end: the
//! suite's PulseAudio (run.sh: a null sink whose monitor is the default source) carries an
//! espeak-ng recording of "What time is it?" played with `paplay` into the app's hands-free
//! microphone; voice activity cuts the utterance, the test kit's scripted speech server gets it
//! as a 16 kHz WAV and answers the text, and the turn runs exactly as if typed (the transcript
//! has the user's line and the reply). The badge shows while the microphone is live and one
//! click on it stops it.
//!
//! `YUI_E2E_MIC_SHOT=path.png` saves a screenshot of the window listening (docs/img/microphone.png).

use super::{fake_backend, launch_showing, open_settings, read_store, seed, settings_section};
use serde_json::json;
use std::process::Command;
use std::time::Duration;
use yui_core::backend::Transport;
use yui_core::settings;
use yui_core::transcript::{self, Role};
use yui_testkit::speech::{SpeechReply, SpeechServer};
use yui_testkit::sse::{self, Reply};

const T: Duration = Duration::from_secs(40);

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver + PulseAudio: run tests/e2e/run.sh"]
async fn a_spoken_question_becomes_the_users_message_and_the_badge_stops_the_microphone() {
    let (dir, question) = spoken_wav("What time is it?");
    let stt = SpeechServer::start(
        vec![],
        Some(Box::new(|_| SpeechReply::text("What time is it?"))),
    );
    let (server, _requests) = fake_backend::serve(|_| {
        Reply::Sse(vec![
            sse::c_text("It is noon."),
            sse::c_finish("stop"),
            sse::done(),
        ])
    })
    .await;
    let (base, stt_base) = (server.base_url.clone(), stt.base_url.clone());
    seed(dir.path(), |st| {
        fake_backend::point_at(st, &base, Transport::ChatCompletions);
        settings::set(st, "yui.voice.listen", &json!({"mode": "hands_free"})).unwrap();
        settings::set(st, "yui.voice.stt", &json!({"base_url": stt_base})).unwrap();
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    // Hands-free follows the setting at start: the badge shows on the main character.
    s.wait_script(
        "const d = document.getElementById('stage').dataset; return ['listening', 'hearing', 'paused'].includes(d.mic) && !document.getElementById('mic-badge').hidden",
        T,
    )
    .await
    .expect("the microphone is live and the badge shows");
    if let Some(path) = std::env::var_os("YUI_E2E_MIC_SHOT") {
        use base64::Engine;
        let b64 = s.screenshot().await.expect("screenshot");
        let png = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("png");
        std::fs::write(&path, png).expect("write the microphone screenshot");
    }
    let played = Command::new("paplay")
        .arg(&question)
        .status()
        .expect("paplay (pulseaudio-utils)");
    assert!(played.success(), "paplay into the suite's null sink");
    s.wait_script(
        "const d = document.getElementById('stage').dataset; return d.heard === 'What time is it?' && d.voiceReply === 'It is noon.'",
        T,
    )
    .await
    .expect("the spoken question was heard and answered in the window");
    // The speech server got the utterance as a 16 kHz mono WAV of about the question's length.
    let seen = stt.seen();
    let (rate, channels, _, samples) = seen[0].wav().expect("a WAV upload");
    assert_eq!((rate, channels), (16_000, 1));
    let ms = samples.len() as u64 / 16;
    assert!((600..=6_000).contains(&ms), "{ms} ms uploaded");
    let lines = transcript::lines(&read_store(dir.path()), "yui", 10).unwrap();
    let said: Vec<(Role, &str)> = lines.iter().map(|l| (l.role, l.text.as_str())).collect();
    assert_eq!(
        said,
        [
            (Role::User, "What time is it?"),
            (Role::Assistant, "It is noon.")
        ]
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
    // The shortcut is taken shortly after start: press until the microphone opens.
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

/// The suite's PulseAudio is there (run.sh starts one per lane), and `text` said by espeak-ng
/// into a WAV in a new temp dir (kept alive by the returned guard).
fn spoken_wav(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
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
