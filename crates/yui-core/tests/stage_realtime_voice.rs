//! The stage's realtime session with voice (issue 32, the app side of the audio), against the
//! test kit's realtime server driven by hand: a response the server starts by itself becomes the
//! user's turn (their transcribed words stored and shown, the reply stored, its tools run); with
//! voice on the session is an audio one whose reply plays on the output device (a device in
//! memory playing in real time) with lip-sync events to the character's window and playback
//! finished only once it was heard; push-to-talk streams the microphone (a microphone in memory)
//! to the session as appends, then commits and asks for the answer; a device that fails mid-reply
//! is one note and the text goes on.

use crate::mic::{host, quiet, spoken, turn_end, until};
use crate::realtime_audio::{FakeOut, Mode};
use crate::turn_support::backends::realtime_fixed;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use yui_core::clock::SystemClock;
use yui_core::paths::Paths;
use yui_core::stage::TurnTo;
use yui_core::stage::UserTurn;
use yui_core::stage::{AudioChoice, Stage, StageEvent, StageOptions, Window};
use yui_core::transcript::{self, Role};
use yui_core::turn::{TurnEvent, TurnStatus};
use yui_core::{settings, Store, WindowKind};
use yui_testkit::realtime::{self as rt, RealtimeServer, RtConn};

pub(crate) struct Rig {
    _dir: tempfile::TempDir,
    pub store: Store,
    pub stage: Stage,
    pub rx: UnboundedReceiver<StageEvent>,
    pub srv: RealtimeServer,
}

/// A stage whose backend is the scripted realtime server; `voice`: voice output on, replies
/// playing on `out`; the microphone in memory says `mic` (push-to-talk).
async fn rig(voice: bool, out: Option<Arc<FakeOut>>, mic: Vec<crate::mic::Step>) -> Rig {
    rig_in(voice, out, mic, "push_to_talk").await
}

pub(crate) async fn rig_in(
    voice: bool,
    out: Option<Arc<FakeOut>>,
    mic: Vec<crate::mic::Step>,
    mode: &str,
) -> Rig {
    rig_with(voice, out, mic, mode, |_| {}).await
}

/// [`rig_in`] with the stage's options changed by `tweak`.
pub(crate) async fn rig_with(
    voice: bool,
    out: Option<Arc<FakeOut>>,
    mic: Vec<crate::mic::Step>,
    mode: &str,
    tweak: impl FnOnce(&mut StageOptions),
) -> Rig {
    let srv = RealtimeServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let opts = StageOptions {
        backend: realtime_fixed(&srv.url),
        headless: !voice,
        audio: out.map(|o| o as Arc<dyn yui_core::voice::audio::AudioHost>),
        mic_audio: AudioChoice(Some(host(mic, 20))),
        duplex: Some(false),
        ..StageOptions::default()
    };
    let mut opts = opts;
    tweak(&mut opts);
    let (stage, rx) = Stage::new(store.clone(), Arc::new(SystemClock), paths, opts);
    settings::set(&store, "yui.voice.listen", &json!({ "mode": mode })).unwrap();
    if voice {
        settings::set(
            &store,
            "yui.voice",
            &json!({"enabled": true, "engine": "openai"}),
        )
        .unwrap();
    }
    Rig {
        _dir: dir,
        store,
        stage,
        rx,
        srv,
    }
}

impl Rig {
    /// Kai's desktop window opens: its session is set up; the `session` of its update.
    pub(crate) async fn open_kai(&mut self) -> (RtConn, Value) {
        self.stage.window_opened(Window::Pet("kai".into()));
        let got = self.srv.accept_session().await;
        until(&mut self.rx, |e| {
            matches!(e, StageEvent::Connection { state, .. }
                if serde_json::to_value(state).unwrap()["state"] == "connected")
        })
        .await;
        got
    }

    pub(crate) fn stored(&self) -> Vec<(Role, String)> {
        transcript::recent(&self.store, "kai", 10)
            .unwrap()
            .into_iter()
            .map(|e| (e.role, e.text))
            .collect()
    }
}

/// The client's events within `ms` (after what was read already).
async fn drain(c: &mut RtConn, ms: u64) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(v) = c.recv_within(Duration::from_millis(ms)).await {
        out.push(v);
    }
    out
}

#[tokio::test]
async fn a_turn_the_server_starts_is_the_users_turn_stored_shown_and_its_tools_run() {
    let mut r = rig(false, None, vec![]).await;
    let (mut c, session) = r.open_kai().await;
    assert_eq!(session["output_modalities"], json!(["text"]), "voice off");
    // Server voice activity heard the user and answers at once: its words come after the
    // response started (the push-to-talk test has them before), then the reply with a cue.
    let mut events = vec![rt::speech_started("item_u1", 0)];
    let mut reply = rt::text_reply("r1", &["It is ", "noon."]);
    reply.insert(1, rt::input_transcript("item_u1", "what time is it"));
    let done = reply.pop().unwrap();
    reply.extend(rt::call_events(
        "call_1",
        "generate_express",
        r#"{"emotion_id":"happy"}"#,
    ));
    reply.push(done);
    events.extend(reply);
    c.play(&events);
    let seen = until(&mut r.rx, |e| turn_end(e).is_some()).await;
    let heard = seen.iter().find_map(|e| match e {
        StageEvent::Heard { preset_id, text } => Some((preset_id.as_str(), text.as_str())),
        _ => None,
    });
    assert_eq!(heard, Some(("kai", "what time is it")), "shown as heard");
    assert!(
        seen.iter().any(|e| matches!(e, StageEvent::Turn { event: TurnEvent::Cue { name, .. }, .. } if name == "generate_express")),
        "the cue ran"
    );
    assert_eq!(
        seen.iter().find_map(turn_end),
        Some((TurnStatus::Ok, "It is noon.".to_string()))
    );
    assert_eq!(
        r.stored(),
        [
            (Role::User, "what time is it".to_string()),
            (Role::Assistant, "It is noon.".to_string())
        ]
    );
    // Nothing was sent for it: the server answers by itself, and a cue-only call answers nothing.
    let sent = drain(&mut c, 300).await;
    assert!(
        sent.iter()
            .all(|e| e["type"] != "response.create" && e["type"] != "conversation.item.create"),
        "{sent:?}"
    );
    // A typed turn still works on the same session afterwards.
    r.stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "thanks"))
        .unwrap();
    assert_eq!(c.user_turn().await, "thanks");
    c.play(&rt::text_reply("r2", &["You're welcome."]));
    let seen = until(&mut r.rx, |e| turn_end(e).is_some()).await;
    assert_eq!(
        seen.iter().find_map(turn_end),
        Some((TurnStatus::Ok, "You're welcome.".to_string()))
    );
}

#[tokio::test]
async fn push_to_talk_streams_appends_and_the_spoken_reply_plays_with_lip_sync() {
    let out = FakeOut::new(Mode::RealTime);
    let mut r = rig(true, Some(out), vec![spoken(600), quiet(2000)]).await;
    let (mut c, session) = r.open_kai().await;
    assert_eq!(session["output_modalities"], json!(["audio"]), "voice on");
    r.stage
        .mic_press(TurnTo::preset("kai", WindowKind::Pet))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(r.stage.mic_release());
    let mut sent = Vec::new();
    while let Some(v) = c.recv().await {
        let last = v["type"] == "response.create";
        sent.push(v);
        if last {
            break;
        }
    }
    let kinds: Vec<&str> = sent.iter().filter_map(|e| e["type"].as_str()).collect();
    // Push-to-talk: the session leaves turns to the client, the buffer starts empty, then the
    // held audio, its end and the ask.
    let update = sent.iter().find(|e| e["type"] == "session.update").unwrap();
    assert_eq!(
        update["session"]["audio"]["input"]["turn_detection"],
        Value::Null
    );
    let appends = kinds
        .iter()
        .filter(|k| **k == "input_audio_buffer.append")
        .count();
    assert!(appends >= 20, "about 700 ms in 20 ms appends: {appends}");
    let tail = &kinds[kinds.len() - 2..];
    assert_eq!(tail, ["input_audio_buffer.commit", "response.create"]);
    assert!(
        kinds.iter().position(|k| *k == "input_audio_buffer.clear")
            < kinds.iter().position(|k| *k == "input_audio_buffer.append")
    );
    let audio = sent
        .iter()
        .filter(|e| e["type"] == "input_audio_buffer.append")
        .map(|e| e["audio"].as_str().unwrap().len())
        .max()
        .unwrap();
    // 20 ms of pcm16 at 24 kHz: 960 bytes, 1280 in base64.
    assert_eq!(audio, 1280);

    // The server answers: the user's words, then 400 ms of speech.
    let mut reply = vec![rt::input_transcript("item_u1", "hello there")];
    reply.extend(rt::audio_reply("r1", &["Hi ", "there."], 200));
    c.play(&reply);
    let seen = until(&mut r.rx, |e| matches!(e, StageEvent::SpeechEnded { .. })).await;
    let batches: Vec<_> = seen
        .iter()
        .filter_map(|e| match e {
            StageEvent::LipSync {
                preset_id, batch, ..
            } if preset_id == "kai" => Some(batch),
            _ => None,
        })
        .collect();
    assert!(batches.len() >= 2, "{} batches", batches.len());
    let levels: Vec<f32> = batches.iter().flat_map(|b| b.levels.clone()).collect();
    assert!(
        levels.iter().any(|l| *l > 0.5),
        "the mouth opens: {levels:?}"
    );
    assert!(
        batches.last().unwrap().last,
        "the last batch closes the mouth"
    );
    let lip = StageEvent::LipSync {
        to: vec![],
        preset_id: "kai".into(),
        batch: (*batches[0]).clone(),
    };
    assert_eq!(lip.payload()["type"], "lip_sync");
    assert_eq!(lip.payload()["batch"]["frame_ms"], 20);
    let turn_id = seen
        .iter()
        .find_map(|e| match e {
            StageEvent::Turn { turn_id, .. } => Some(turn_id.clone()),
            _ => None,
        })
        .expect("the spoken turn runs");
    match seen.last().unwrap() {
        StageEvent::SpeechEnded {
            heard_ms,
            complete,
            note,
            ..
        } => {
            assert!(*complete, "{note:?}");
            assert!((380..=420).contains(heard_ms), "{heard_ms} ms heard");
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(
        seen.iter().find_map(turn_end),
        Some((TurnStatus::Ok, "Hi there.".to_string()))
    );
    // The bubble is done too: playback finished.
    r.stage.bubble_done(&turn_id);
    let fin = until(&mut r.rx, |e| {
        matches!(e, StageEvent::PlaybackFinished { .. })
    })
    .await;
    assert!(
        matches!(fin.last(), Some(StageEvent::PlaybackFinished { turn_id: t, .. }) if *t == turn_id)
    );
    assert_eq!(
        r.stored(),
        [
            (Role::User, "hello there".to_string()),
            (Role::Assistant, "Hi there.".to_string())
        ]
    );
}

#[tokio::test]
async fn an_output_device_that_fails_mid_reply_is_one_note_and_the_text_goes_on() {
    let out = FakeOut::new(Mode::Broken);
    let mut r = rig(true, Some(out), vec![]).await;
    let (mut c, _) = r.open_kai().await;
    r.stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "sing"))
        .unwrap();
    assert_eq!(c.user_turn().await, "sing");
    let mut reply = rt::audio_reply("r1", &["La ", "la."], 200);
    // The device fails while the reply arrives: a pause, so the failure is seen mid-reply.
    reply.insert(5, rt::sleep(300));
    for e in reply {
        match e["test.sleep_ms"].as_u64() {
            Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
            None => c.send(&e),
        }
    }
    let seen = until(&mut r.rx, |e| matches!(e, StageEvent::SpeechEnded { .. })).await;
    assert_eq!(
        seen.iter().find_map(turn_end),
        Some((TurnStatus::Ok, "La la.".to_string()))
    );
    match seen.last().unwrap() {
        StageEvent::SpeechEnded { complete, note, .. } => {
            assert!(!complete);
            let n = note.as_deref().unwrap_or("");
            assert!(
                n.contains("went away") && n.contains("goes on as text"),
                "{n}"
            );
        }
        e => panic!("{e:?}"),
    }
}

#[tokio::test]
async fn hands_free_streams_to_the_server_and_its_speech_started_stops_the_reply_where_it_was_heard(
) {
    let out = FakeOut::new(Mode::RealTime);
    let mut r = rig_in(true, Some(out), vec![quiet(100_000)], "hands_free").await;
    let (mut c, _) = r.open_kai().await;
    r.stage
        .mic_listen(TurnTo::preset("kai", WindowKind::Pet))
        .unwrap();
    // The session's own voice activity decides (server VAD by default); the audio streams.
    let up = c.recv_type("session.update").await.unwrap();
    assert_eq!(
        up["session"]["audio"]["input"]["turn_detection"]["type"],
        "server_vad"
    );
    for _ in 0..5 {
        c.recv_type("input_audio_buffer.append").await.unwrap();
    }
    r.stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "tell me a story"))
        .unwrap();
    assert_eq!(c.user_turn().await, "tell me a story");
    // Two seconds of speech; the user speaks over it after about 400 ms.
    c.play(&rt::audio_reply(
        "r1",
        &["Once upon a time ", "there was a fox."],
        1000,
    ));
    until(&mut r.rx, |e| matches!(e, StageEvent::LipSync { .. })).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    c.send(&rt::speech_started("item_u2", 5000));
    let cut = c.recv_type("conversation.item.truncate").await.unwrap();
    let ms = cut["audio_end_ms"].as_u64().unwrap();
    assert!(
        (250..=900).contains(&ms),
        "{ms} ms heard when the user spoke"
    );
    assert_eq!(cut["item_id"], "msg_r1");
    let seen = until(&mut r.rx, |e| matches!(e, StageEvent::SpeechEnded { .. })).await;
    assert!(
        seen.iter()
            .any(|e| matches!(e, StageEvent::LipSync { batch, .. } if batch.stopped)),
        "the mouth shuts at once"
    );
    // The reply had all arrived (audio comes faster than it plays): the turn had ended.
    assert_eq!(
        seen.iter().find_map(turn_end).map(|t| t.0),
        Some(TurnStatus::Ok)
    );
    match seen.last().unwrap() {
        StageEvent::SpeechEnded {
            complete, heard_ms, ..
        } => {
            assert!(!complete);
            assert!(*heard_ms < 1000, "{heard_ms}");
        }
        e => panic!("{e:?}"),
    }
    let stored = r.stored();
    let reply = &stored.last().unwrap().1;
    assert!(
        reply.ends_with(yui_core::transcript::INTERRUPTED_MARKER) && !reply.contains("fox"),
        "the stored reply is what was heard: {reply}"
    );
    assert!(r.stage.mic_stop());
}

#[tokio::test]
async fn push_to_talk_over_a_reply_still_playing_stops_it_and_tells_the_server_what_was_heard() {
    let out = FakeOut::new(Mode::RealTime);
    let mut r = rig(true, Some(out), vec![quiet(100_000)]).await;
    let (mut c, _) = r.open_kai().await;
    r.stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "a long one"))
        .unwrap();
    assert_eq!(c.user_turn().await, "a long one");
    c.play(&rt::audio_reply(
        "r1",
        &["One two three ", "four five six."],
        1000,
    ));
    // The reply has all arrived (the turn ends) while its audio still plays.
    let seen = until(&mut r.rx, |e| turn_end(e).is_some()).await;
    assert_eq!(seen.iter().find_map(turn_end).unwrap().0, TurnStatus::Ok);
    tokio::time::sleep(Duration::from_millis(500)).await;
    r.stage
        .mic_press(TurnTo::preset("kai", WindowKind::Pet))
        .unwrap();
    let cut = c.recv_type("conversation.item.truncate").await.unwrap();
    let ms = cut["audio_end_ms"].as_u64().unwrap();
    assert!((300..=1100).contains(&ms), "{ms} ms heard at the press");
    let seen = until(&mut r.rx, |e| matches!(e, StageEvent::SpeechEnded { .. })).await;
    assert!(matches!(
        seen.last(),
        Some(StageEvent::SpeechEnded {
            complete: false,
            ..
        })
    ));
    let stored = r.stored();
    let reply = &stored.last().unwrap().1;
    assert!(
        reply.ends_with(yui_core::transcript::INTERRUPTED_MARKER) && !reply.contains("six"),
        "the stored reply is what was heard: {reply}"
    );
    assert!(r.stage.mic_release());
}

#[tokio::test]
async fn without_transcription_a_spoken_turn_stores_a_placeholder_for_the_words() {
    let mut r = rig(false, None, vec![]).await;
    settings::set(
        &r.store,
        yui_core::backend::realtime::KEY,
        &json!({"transcription_model": null}),
    )
    .unwrap();
    let (c, _) = r.open_kai().await;
    c.play(&rt::text_reply("r1", &["Hello."]));
    let seen = until(&mut r.rx, |e| turn_end(e).is_some()).await;
    assert_eq!(
        seen.iter().find_map(turn_end),
        Some((TurnStatus::Ok, "Hello.".to_string()))
    );
    assert_eq!(
        r.stored(),
        [
            (Role::User, yui_core::stage::UNHEARD.to_string()),
            (Role::Assistant, "Hello.".to_string())
        ]
    );
}
