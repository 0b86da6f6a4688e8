//! A typed question answered aloud, end to end: the scripted model streams the reply, the
//! scripted speech server (`yui_testkit::speech`) makes each sentence's audio, the app plays it
//! on the PulseAudio null sink tests/e2e/run.sh starts (`PULSE_SERVER`), `parec` records the
//! sink's monitor and hears sound, and the main character's mouth moves by the clips' envelopes
//! (data-mouth on the character, sampled by a MutationObserver in the page).
//!
//! `YUI_E2E_VOICE_SHOT=path.png` saves a screenshot while the character speaks
//! (docs/img/voice.png).

use super::{fake_backend, launch_showing, say_in_chat, seed};
use base64::Engine as _;
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::Duration;
use yui_core::backend::Transport;
use yui_core::settings;
use yui_testkit::speech::{patterned_tone, SpeechReply, SpeechServer};
use yui_testkit::sse::{self, Part, Reply};

const T: Duration = Duration::from_secs(30);
const REPLY: &str = "Hello there! I can hear you loud and clear.";

/// Loudness per 100 ms of every sentence's clip: words and gaps, so the mouth opens and shuts.
const PATTERN: [f32; 16] = [
    0.8, 0.2, 0.9, 0.9, 0.05, 0.7, 0.8, 0.05, 0.9, 0.6, 0.05, 0.8, 0.9, 0.3, 0.7, 0.05,
];

/// From now on the page notes each change of the character's mouth in `window.__mouths`.
pub async fn watch_mouth(s: &super::webdriver::Session) {
    s.exec(
        "const c = document.querySelector('#character .yui-char');
         window.__mouths = [];
         new MutationObserver(() => window.__mouths.push(c.dataset.mouth))
           .observe(c, { attributes: true, attributeFilter: ['data-mouth'] });
         return true",
        json!([]),
    )
    .await
    .unwrap();
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver + the null sink: run tests/e2e/run.sh"]
async fn a_typed_question_is_answered_aloud_with_the_mouth_moving() {
    let pulse = std::env::var("PULSE_SERVER")
        .expect("PULSE_SERVER: tests/e2e/run.sh starts a PulseAudio null sink for this test");
    let dir = tempfile::tempdir().unwrap();
    let (model, _requests) = fake_backend::serve(|_| {
        // The second sentence comes a moment later: the first is already being said.
        Reply::Sse(vec![
            sse::c_text("Hello there! I can"),
            Part::Sleep(Duration::from_millis(400)),
            sse::c_text(" hear you loud and clear."),
            sse::c_finish("stop"),
            sse::done(),
        ])
    })
    .await;
    let speech = SpeechServer::start(
        vec![],
        Some(Box::new(|_| {
            SpeechReply::wav(22_050, &patterned_tone(22_050, &PATTERN))
        })),
    );
    let (model_url, speech_url) = (model.base_url.clone(), speech.base_url.clone());
    seed(dir.path(), |st| {
        fake_backend::point_at(st, &model_url, Transport::ChatCompletions);
        settings::set(
            st,
            "yui.voice",
            &json!({"enabled": true, "engine": "openai"}),
        )
        .unwrap();
        settings::set(
            st,
            "yui.voice.tts",
            &json!({"base_url": speech_url, "use_backend_key": false}),
        )
        .unwrap();
    });

    // The sink's monitor, recorded from before the question to after the answer.
    let rec_file = dir.path().join("heard.raw");
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
        .expect("parec (apt install pulseaudio-utils; scripts/dev.sh does)");

    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script("return !!document.querySelector('#character .yui-char')", T)
        .await
        .expect("Yui drawn");
    watch_mouth(&s).await;
    say_in_chat(&s, "#character [data-emotion]", "Can you hear me?").await;

    s.wait_script(
        "return Number(document.getElementById('stage').dataset.clips || 0) >= 1",
        T,
    )
    .await
    .expect("the first sentence plays");
    if let Ok(path) = std::env::var("YUI_E2E_VOICE_SHOT") {
        // Where the mouth is open, in the middle of a loud stretch.
        let _ = s
            .wait_script(
                "return Number(document.querySelector('#character .yui-char').dataset.mouth) > 0.8",
                Duration::from_secs(3),
            )
            .await;
        let b64 = s.screenshot().await.expect("screenshot");
        let png = base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .unwrap();
        std::fs::write(&path, png).expect("write the voice screenshot");
    }
    s.wait_script(
        "return !!document.getElementById('stage').dataset.speechEnded",
        T,
    )
    .await
    .expect("the speech ends");
    let stage: Value = s
        .exec(
            "const d = document.getElementById('stage').dataset;
             const b = document.getElementById('bubble');
             return { clips: d.clips, bubble: b.hidden ? '' : b.textContent,
                      note: document.getElementById('voice-note')?.textContent ?? null,
                      mouths: window.__mouths,
                      mouth: document.querySelector('#character .yui-char').dataset.mouth }",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(stage["clips"], "2", "two sentences, two clips: {stage}");
    assert_eq!(stage["bubble"], REPLY, "the reply's text shows: {stage}");
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
        open >= 10 && shut >= 4,
        "the mouth opens and shuts with the voice: {mouths:?}"
    );
    let inputs: Vec<String> = speech
        .seen()
        .iter()
        .map(|r| r.json["input"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(inputs, ["Hello there!", "I can hear you loud and clear."]);

    // The null sink buffers a few seconds: keep recording until the sound is through.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let _ = rec.kill();
    let _ = rec.wait();
    let raw = std::fs::read(&rec_file).unwrap();
    let samples: Vec<f32> = raw
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32 / 32768.0)
        .collect();
    let loud_frames = samples
        .chunks(320)
        .filter(|f| yui_core::voice::pcm::rms(f) > 0.05)
        .count();
    assert!(
        loud_frames >= 25,
        "the monitor heard {loud_frames} loud 20 ms frames in {} s of recording",
        samples.len() / 16_000
    );
}
