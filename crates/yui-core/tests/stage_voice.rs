//! The stage speaking through an OpenAI-compatible speech server (the test kit's scripted one)
//! while the scripted model still streams: the first sentence is heard before the turn ends,
//! the rest in order; two characters never talk over each other, each in its own voice; a stop
//! says how much was heard; a speech server that fails, stalls or sends garbage leaves the
//! reply's text and a note in plain words, and nothing waits forever.

use crate::turn_support::backends;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use yui_core::backend::Transport;
use yui_core::clock::SystemClock;
use yui_core::paths::Paths;
use yui_core::stage::UserTurn;
use yui_core::stage::{Stage, StageEvent, StageOptions};
use yui_core::turn::TurnEvent;
use yui_core::voice::audio::{AudioError, AudioHost, Capture, DeviceList, Played};
use yui_core::voice::pcm::Pcm;
use yui_core::{presets, settings, Store, WindowKind};
use yui_testkit::speech::{patterned_tone, SpeechReply, SpeechServer};
use yui_testkit::sse::*;

/// One clip as the output device played it: its loudest sample, when it started and ended.
#[derive(Debug, Clone)]
struct Clip {
    peak: f32,
    start: Instant,
    end: Instant,
}

/// An output device that takes a clip's own time to play it (stopped at once on cancel).
#[derive(Default)]
struct TimedHost(Mutex<Vec<Clip>>);

#[async_trait::async_trait]
impl AudioHost for TimedHost {
    fn devices(&self) -> Result<DeviceList, AudioError> {
        Ok(Default::default())
    }
    async fn play(
        &self,
        pcm: &Pcm,
        _device: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Played, AudioError> {
        let start = Instant::now();
        let peak = pcm.samples.iter().fold(0f32, |m, s| m.max(s.abs()));
        let full = Duration::from_millis(pcm.duration_ms());
        let played = tokio::select! {
            _ = tokio::time::sleep(full) => Played::Finished { ms: pcm.duration_ms() },
            _ = cancel.cancelled() => Played::Cancelled { ms: start.elapsed().as_millis() as u64 },
        };
        self.0.lock().unwrap().push(Clip {
            peak,
            start,
            end: Instant::now(),
        });
        Ok(played)
    }
    async fn capture(&self, _device: Option<&str>) -> Result<Capture, AudioError> {
        Err(AudioError::no_device("no microphone here"))
    }
}

struct Rig {
    _dir: tempfile::TempDir,
    store: Store,
    stage: Stage,
    rx: UnboundedReceiver<StageEvent>,
    host: Arc<TimedHost>,
}

fn rig(model_url: &str, speech_url: &str, tts: serde_json::Value) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let host = Arc::new(TimedHost::default());
    let opts = StageOptions {
        backend: backends::fixed(Transport::ChatCompletions, model_url),
        headless: false,
        audio: Some(host.clone()),
        ..StageOptions::default()
    };
    let (stage, rx) = Stage::new(store.clone(), Arc::new(SystemClock), paths, opts);
    settings::set(
        &store,
        "yui.voice",
        &json!({"enabled": true, "engine": "openai"}),
    )
    .unwrap();
    let mut tts = tts;
    tts["base_url"] = json!(speech_url);
    tts["use_backend_key"] = json!(false);
    settings::set(&store, "yui.voice.tts", &tts).unwrap();
    Rig {
        _dir: dir,
        store,
        stage,
        rx,
        host,
    }
}

/// A tone of `tenths` × 100 ms whose loudness tells the voice apart (alloy 0.6, others 0.3).
fn voiced(seen: &yui_testkit::speech::SpeechSeen, tenths: usize) -> SpeechReply {
    let level = if seen.json["voice"] == "alloy" {
        0.6
    } else {
        0.3
    };
    SpeechReply::wav(16_000, &patterned_tone(16_000, &vec![level; tenths]))
}

/// Events until `stop` says so (or 10 s pass: then the test fails).
async fn until(
    rx: &mut UnboundedReceiver<StageEvent>,
    mut stop: impl FnMut(&StageEvent) -> bool,
) -> Vec<StageEvent> {
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let ev = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("the awaited stage event came in time")
            .expect("stage alive");
        let done = stop(&ev);
        out.push(ev);
        if done {
            return out;
        }
    }
}

fn is_end(ev: &StageEvent) -> bool {
    matches!(
        ev,
        StageEvent::Turn {
            event: TurnEvent::TurnEnd { .. },
            ..
        }
    )
}

fn spoken(events: &[StageEvent]) -> Vec<(String, usize, String, usize)> {
    events
        .iter()
        .filter_map(|e| match e {
            StageEvent::Speaking {
                preset_id,
                index,
                text,
                envelope,
                ..
            } => Some((
                preset_id.clone(),
                *index,
                text.clone(),
                envelope.as_ref().map_or(0, |e| e.levels.len()),
            )),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_first_sentence_is_heard_while_the_model_still_streams_and_the_rest_follows_in_order() {
    let gate = Arc::new(Notify::new());
    let model = ScriptServer::start(vec![Reply::Sse(vec![
        c_text("Hello there. How"),
        Part::Gate(gate.clone(), Duration::from_secs(8)),
        c_text(" are you? Fine"),
        c_finish("stop"),
        done(),
    ])])
    .await;
    let speech = SpeechServer::start(vec![], Some(Box::new(|s| voiced(s, 3))));
    let mut r = rig(&model.base_url, &speech.base_url, json!({}));
    let turn = r
        .stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "hi"))
        .unwrap();

    // The model is held mid-reply: the first sentence plays all the same, with its envelope.
    let before = until(&mut r.rx, |e| matches!(e, StageEvent::Speaking { .. })).await;
    assert!(!before.iter().any(is_end), "the turn is still streaming");
    assert_eq!(
        spoken(&before),
        [("yui".into(), 0, "Hello there.".into(), 15)],
        "one envelope level per 20 ms of the 300 ms clip"
    );
    assert_eq!(r.stage.speaking(), ["yui"]);
    gate.notify_one();
    let rest = until(&mut r.rx, |e| matches!(e, StageEvent::SpeechEnded { .. })).await;
    let said: Vec<String> = spoken(&rest).into_iter().map(|s| s.2).collect();
    assert_eq!(said, ["How are you?", "Fine"]);
    assert!(matches!(
        rest.last(),
        Some(StageEvent::SpeechEnded {
            complete: true,
            note: None,
            heard_ms: 900,
            ..
        })
    ));
    let inputs: Vec<String> = speech
        .seen()
        .iter()
        .map(|s| s.json["input"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(inputs, ["Hello there.", "How are you?", "Fine"]);
    // Clips played back to back, never two at once.
    let clips = r.host.0.lock().unwrap().clone();
    assert_eq!(clips.len(), 3);
    assert!(clips.windows(2).all(|w| w[0].end <= w[1].start));
    // Playback finished once the bubble is shown too.
    r.stage.bubble_done(&turn);
    until(
        &mut r.rx,
        |e| matches!(e, StageEvent::PlaybackFinished { turn_id, .. } if *turn_id == turn),
    )
    .await;
    assert!(r.stage.speaking().is_empty());
}

#[tokio::test]
async fn two_characters_never_talk_over_each_other_and_each_speaks_in_its_own_voice() {
    let model = ScriptServer::start(vec![
        chat_say("I am Yui. I speak first."),
        chat_say("I am Kai. I wait my turn."),
    ])
    .await;
    let speech = SpeechServer::start(vec![], Some(Box::new(|s| voiced(s, 3))));
    let mut r = rig(&model.base_url, &speech.base_url, json!({}));
    let kai_voice = presets::PresetUpdate {
        voice: Some(json!({"name": "echo"})),
        ..Default::default()
    };
    presets::update(&r.store, "kai", &kai_voice).unwrap();
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "hi"))
        .unwrap();
    until(&mut r.rx, |e| matches!(e, StageEvent::Speaking { .. })).await;
    r.stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "hi"))
        .unwrap();
    let mut ended = 0;
    until(&mut r.rx, |e| {
        ended += matches!(e, StageEvent::SpeechEnded { .. }) as usize;
        ended == 2
    })
    .await;
    let clips = r.host.0.lock().unwrap().clone();
    let voices: Vec<f32> = clips.iter().map(|c| (c.peak * 10.0).round()).collect();
    assert_eq!(
        voices,
        [6.0, 6.0, 3.0, 3.0],
        "Yui's two sentences, then Kai's"
    );
    assert!(
        clips.windows(2).all(|w| w[0].end <= w[1].start),
        "nobody talks over anybody: {clips:?}"
    );
    let by_voice: Vec<(String, String)> = speech
        .seen()
        .iter()
        .map(|s| {
            (
                s.json["voice"].as_str().unwrap().into(),
                s.json["input"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(by_voice.contains(&("echo".into(), "I wait my turn.".into())));
    assert!(by_voice.contains(&("alloy".into(), "I speak first.".into())));
}

#[tokio::test]
async fn with_overlap_allowed_two_characters_speak_at_once() {
    let model = ScriptServer::start(vec![chat_say("One."), chat_say("Two.")]).await;
    let speech = SpeechServer::start(vec![], Some(Box::new(|s| voiced(s, 8))));
    let mut r = rig(&model.base_url, &speech.base_url, json!({}));
    settings::set(
        &r.store,
        "yui.voice",
        &json!({"enabled": true, "engine": "openai", "overlap": true}),
    )
    .unwrap();
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "hi"))
        .unwrap();
    r.stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "hi"))
        .unwrap();
    let mut ended = 0;
    until(&mut r.rx, |e| {
        ended += matches!(e, StageEvent::SpeechEnded { .. }) as usize;
        ended == 2
    })
    .await;
    let clips = r.host.0.lock().unwrap().clone();
    assert_eq!(clips.len(), 2);
    assert!(clips[1].start < clips[0].end, "they overlap: {clips:?}");
}

#[tokio::test]
async fn stopping_a_character_mid_sentence_says_how_much_was_heard() {
    let model = ScriptServer::start(vec![chat_say(
        "First sentence. Then a much longer second sentence that goes on and on.",
    )])
    .await;
    let speech = SpeechServer::start(vec![], Some(Box::new(|s| voiced(s, 10))));
    let mut r = rig(&model.base_url, &speech.base_url, json!({}));
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "hi"))
        .unwrap();
    until(&mut r.rx, |e| {
        matches!(e, StageEvent::Speaking { index: 1, .. })
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let t = Instant::now();
    let heard = r
        .stage
        .stop_voice_heard("yui")
        .await
        .expect("it was speaking");
    assert!(t.elapsed() < Duration::from_millis(200), "stops at once");
    assert!(!heard.complete);
    assert!((1_300..1_900).contains(&heard.ms), "{heard:?}");
    assert!(
        heard.text.starts_with("First sentence. Then a")
            && heard.text.len()
                < "First sentence. Then a much longer second sentence that goes on and on.".len(),
        "{heard:?}"
    );
    assert!(r.stage.stop_voice_heard("yui").await.is_none());
}

async fn fault(reply: SpeechReply, tts: serde_json::Value, expect: &str) {
    let model = ScriptServer::start(vec![chat_say("The text still shows. All of it.")]).await;
    let speech = SpeechServer::start(vec![reply], None);
    let mut r = rig(&model.base_url, &speech.base_url, tts);
    let turn = r
        .stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "hi"))
        .unwrap();
    r.stage.bubble_done(&turn);
    let t = Instant::now();
    let events = until(&mut r.rx, |e| {
        matches!(e, StageEvent::PlaybackFinished { .. })
    })
    .await;
    assert!(t.elapsed() < Duration::from_secs(4), "nothing hangs");
    let text = events.iter().find_map(|e| match e {
        StageEvent::Turn {
            event: TurnEvent::TurnEnd { text, .. },
            ..
        } => Some(text.clone()),
        _ => None,
    });
    assert_eq!(text.as_deref(), Some("The text still shows. All of it."));
    let note = events.iter().find_map(|e| match e {
        StageEvent::SpeechEnded { note, .. } => note.clone(),
        _ => None,
    });
    let note = note.expect("a note in plain words");
    assert!(note.contains(expect), "{note}");
    assert!(!note.contains("os error"), "{note}");
}

#[tokio::test]
async fn a_speech_server_answering_500_leaves_the_text_and_a_note() {
    fault(
        SpeechReply::Json(500, r#"{"error":"boom"}"#.into()),
        json!({}),
        "500",
    )
    .await;
}

#[tokio::test]
async fn a_stalled_speech_server_ends_in_its_timeout_with_a_note() {
    fault(
        SpeechReply::Hang,
        json!({"timeout_secs": 1}),
        "speech server",
    )
    .await;
}

#[tokio::test]
async fn garbage_audio_leaves_the_text_and_a_note() {
    fault(
        SpeechReply::Bytes("audio/wav".into(), b"not a wav at all".to_vec()),
        json!({}),
        "speech server",
    )
    .await;
}

#[tokio::test]
async fn a_speech_server_that_is_down_leaves_the_text_and_a_note() {
    let model = ScriptServer::start(vec![chat_say("Still here.")]).await;
    let mut r = rig(&model.base_url, "http://127.0.0.1:9/v1", json!({}));
    let turn = r
        .stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "hi"))
        .unwrap();
    r.stage.bubble_done(&turn);
    let events = until(&mut r.rx, |e| {
        matches!(e, StageEvent::PlaybackFinished { .. })
    })
    .await;
    assert!(
        events.iter().any(|e| matches!(
            e,
            StageEvent::SpeechEnded { note: Some(n), complete: false, .. } if !n.contains("os error")
        )),
        "{events:?}"
    );
}

#[tokio::test]
async fn with_the_voice_off_nothing_is_spoken_and_no_device_is_touched() {
    let model = ScriptServer::start(vec![chat_say("Quiet. Very quiet.")]).await;
    let speech = SpeechServer::start(vec![], Some(Box::new(|s| voiced(s, 3))));
    let mut r = rig(&model.base_url, &speech.base_url, json!({}));
    settings::set(
        &r.store,
        "yui.voice",
        &json!({"enabled": false, "engine": "openai"}),
    )
    .unwrap();
    let turn = r
        .stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "hi"))
        .unwrap();
    r.stage.bubble_done(&turn);
    let events = until(&mut r.rx, |e| {
        matches!(e, StageEvent::PlaybackFinished { .. })
    })
    .await;
    assert!(!events.iter().any(|e| matches!(
        e,
        StageEvent::Speaking { .. } | StageEvent::SpeechEnded { .. }
    )));
    assert!(r.host.0.lock().unwrap().is_empty(), "no clip played");
    assert!(speech.seen().is_empty(), "no speech asked for");
}
