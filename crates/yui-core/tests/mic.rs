//! Listening in the app through the stage: a microphone in memory (an `AudioHost` whose capture
//! plays a scripted clip, then silence, or vanishes), the test kit's scripted speech server
//! (multipart WAV in, JSON out) and scripted Chat Completions server, and a fake `spd-say` for the
//! characters' speech. Off by default (nothing opened), push-to-talk and hands-free utterances
//! becoming the user's turn, a vanished device in plain words, half duplex, and barge-in cutting
//! the stored reply to what was heard with the marker the next history carries.

use crate::turn_support::backends;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;
use yui_core::backend::Transport;
use yui_core::clock::SystemClock;
use yui_core::paths::Paths;
use yui_core::stage::TurnTo;
use yui_core::stage::UserTurn;
use yui_core::stage::{AudioChoice, MicState, MicStatus, Stage, StageEvent, StageOptions};
use yui_core::transcript::{self, Role, INTERRUPTED_MARKER};
use yui_core::turn::{TurnEvent, TurnStatus};
use yui_core::voice::audio::{AudioError, AudioHost, Capture, DeviceList, Played};
use yui_core::voice::pcm::Pcm;
use yui_core::{settings, Store, WindowKind};
use yui_testkit::speech::{patterned_tone, SpeechReply, SpeechServer};
use yui_testkit::sse::*;

/// What the microphone in memory hears, in order; silence after the last step.
#[derive(Clone)]
pub(crate) enum Step {
    Audio(Vec<f32>),
    Vanish,
}

/// A microphone in memory at 16 kHz: 20 ms blocks every `pace`, counting opened devices.
pub(crate) struct MicHost {
    steps: Vec<Step>,
    pace: Duration,
    opened: AtomicUsize,
    open_now: Arc<AtomicUsize>,
}

struct Open(Arc<AtomicUsize>);
impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[async_trait::async_trait]
impl AudioHost for MicHost {
    fn devices(&self) -> Result<DeviceList, AudioError> {
        Ok(Default::default())
    }
    async fn play(
        &self,
        _pcm: &Pcm,
        _device: Option<&str>,
        _cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Played, AudioError> {
        Err(AudioError::no_device("no speakers here"))
    }
    async fn capture(&self, _device: Option<&str>) -> Result<Capture, AudioError> {
        self.opened.fetch_add(1, Ordering::SeqCst);
        self.open_now.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let (steps, pace) = (self.steps.clone(), self.pace);
        tokio::spawn(async move {
            for step in steps {
                match step {
                    Step::Audio(a) => {
                        for b in a.chunks(320) {
                            tokio::time::sleep(pace).await;
                            if tx.send(Ok(b.to_vec())).await.is_err() {
                                return;
                            }
                        }
                    }
                    Step::Vanish => {
                        let gone = AudioError::device("the microphone \"test mic\" went away");
                        let _ = tx.send(Err(gone)).await;
                        return;
                    }
                }
            }
            loop {
                tokio::time::sleep(pace).await;
                if tx.send(Ok(vec![0.0; 320])).await.is_err() {
                    return;
                }
            }
        });
        Ok(Capture::new(
            16_000,
            "test mic".into(),
            rx,
            Box::new(Open(self.open_now.clone())),
        ))
    }
}

pub(crate) fn host(steps: Vec<Step>, pace_ms: u64) -> Arc<MicHost> {
    Arc::new(MicHost {
        steps,
        pace: Duration::from_millis(pace_ms),
        opened: AtomicUsize::new(0),
        open_now: Arc::new(AtomicUsize::new(0)),
    })
}

pub(crate) fn quiet(ms: u64) -> Step {
    Step::Audio(vec![0.0; ms as usize * 16])
}

/// A voice-like tone of `ms` (voice activity hears it as speech).
pub(crate) fn spoken(ms: u64) -> Step {
    Step::Audio(patterned_tone(16_000, &vec![0.3; (ms / 100) as usize]))
}

struct Rig {
    _dir: tempfile::TempDir,
    _fake: tempfile::TempDir,
    store: Store,
    chat: ScriptServer,
    stt: SpeechServer,
    stage: Stage,
    rx: UnboundedReceiver<StageEvent>,
}

/// A fake `spd-say` that "speaks" for `secs` (killed when stopped).
fn fake_spd_say(dir: &std::path::Path, secs: f32) {
    use std::os::unix::fs::PermissionsExt;
    let prog = dir.join("spd-say");
    std::fs::write(
        &prog,
        format!("#!/bin/sh\n[ \"$1\" = --cancel ] && exit 0\nexec sleep {secs}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
}

async fn rig(
    replies: Vec<Reply>,
    heard: Vec<&str>,
    mic: Arc<MicHost>,
    mode: &str,
    duplex: bool,
    voice: bool,
) -> Rig {
    let chat = ScriptServer::start(replies).await;
    let stt = SpeechServer::start(heard.into_iter().map(SpeechReply::text).collect(), None);
    let fake = tempfile::tempdir().unwrap();
    fake_spd_say(fake.path(), 10.0);
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let opts = StageOptions {
        backend: backends::fixed(Transport::ChatCompletions, &chat.base_url),
        headless: !voice,
        voice_path: Some(fake.path().as_os_str().to_owned()),
        // Speech plays on the same host in memory: no test here makes the process's host.
        audio: Some(mic.clone()),
        mic_audio: AudioChoice(Some(mic.clone())),
        duplex: Some(duplex),
        ..StageOptions::default()
    };
    let (stage, rx) = Stage::new(store.clone(), Arc::new(SystemClock), paths, opts);
    settings::set(&store, "yui.voice.listen", &json!({ "mode": mode })).unwrap();
    settings::set(
        &store,
        "yui.voice.stt",
        &json!({ "base_url": stt.base_url }),
    )
    .unwrap();
    if voice {
        yui_core::voice::update(&store, true, None).unwrap();
    }
    Rig {
        _dir: dir,
        _fake: fake,
        store,
        chat,
        stt,
        stage,
        rx,
    }
}

/// Read events until `stop` says so (or 15 s): every event read.
pub(crate) async fn until(
    rx: &mut UnboundedReceiver<StageEvent>,
    mut stop: impl FnMut(&StageEvent) -> bool,
) -> Vec<StageEvent> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    let mut out = Vec::new();
    while let Ok(Some(ev)) = tokio::time::timeout_at(deadline, rx.recv()).await {
        let done = stop(&ev);
        out.push(ev);
        if done {
            break;
        }
    }
    out
}

pub(crate) fn turn_end(ev: &StageEvent) -> Option<(TurnStatus, String)> {
    match ev {
        StageEvent::Turn {
            event: TurnEvent::TurnEnd { status, text, .. },
            ..
        } => Some((*status, text.clone())),
        _ => None,
    }
}

fn mics(events: &[StageEvent]) -> Vec<MicStatus> {
    events
        .iter()
        .filter_map(|e| match e {
            StageEvent::Mic { status } => Some(status.clone()),
            _ => None,
        })
        .collect()
}

fn heard(events: &[StageEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            StageEvent::Heard { preset_id, text } => Some((preset_id.clone(), text.clone())),
            _ => None,
        })
        .collect()
}

fn last_user(body: &Value) -> String {
    let msgs = body["messages"].as_array().unwrap();
    let last = msgs.iter().rev().find(|m| m["role"] == "user").unwrap();
    last["content"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn the_microphone_is_off_by_default_and_opens_nothing() {
    let mic = host(vec![spoken(500)], 5);
    let r = rig(vec![], vec![], mic.clone(), "off", false, false).await;
    settings::set(&r.store, "yui.voice.listen", &json!({})).unwrap();
    assert_eq!(r.stage.mic_status(), MicStatus::default());
    let e = r
        .stage
        .mic_press(TurnTo::preset("yui", WindowKind::Main))
        .unwrap_err();
    assert!(e.message.contains("the microphone is off"), "{}", e.message);
    assert!(r
        .stage
        .mic_listen(TurnTo::preset("yui", WindowKind::Main))
        .is_err());
    let s = r
        .stage
        .mic_follow_settings(TurnTo::preset("yui", WindowKind::Main))
        .unwrap();
    assert!(!s.live);
    assert!(!r.stage.mic_release() && !r.stage.mic_stop());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(mic.opened.load(Ordering::SeqCst), 0, "no device opened");
}

#[tokio::test]
async fn a_push_to_talk_hold_becomes_the_users_message_in_that_window() {
    let mic = host(vec![quiet(300), spoken(800)], 5);
    let mut r = rig(
        vec![chat_say("It is noon.")],
        vec!["What time is it?"],
        mic.clone(),
        "push_to_talk",
        false,
        false,
    )
    .await;
    let s = r
        .stage
        .mic_press(TurnTo::preset("kai", WindowKind::Pet))
        .unwrap();
    assert!(s.live && s.state == MicState::Listening, "{s:?}");
    assert_eq!(s.preset_id.as_deref(), Some("kai"));
    // 1.1 s of audio arrive in about 280 ms at this pace; hold a little longer, then let go.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(mic.open_now.load(Ordering::SeqCst), 1, "open while held");
    assert!(r.stage.mic_release());
    let events = until(&mut r.rx, |e| turn_end(e).is_some()).await;
    assert_eq!(heard(&events), [("kai".into(), "What time is it?".into())]);
    let end = events.iter().find_map(turn_end).unwrap();
    assert_eq!(end, (TurnStatus::Ok, "It is noon.".to_string()));
    let states: Vec<(MicState, bool)> = mics(&events).iter().map(|m| (m.state, m.live)).collect();
    assert_eq!(
        states,
        [
            (MicState::Listening, true),
            (MicState::Transcribing, false),
            (MicState::Off, false)
        ]
    );
    assert_eq!(mic.open_now.load(Ordering::SeqCst), 0, "closed on release");
    // The exact upload: a 16 kHz mono 16-bit WAV of the speech, not the whole hold.
    let seen = r.stt.seen();
    assert_eq!(seen.len(), 1);
    let (rate, ch, bits, samples) = seen[0].wav().unwrap();
    assert_eq!((rate, ch, bits), (16_000, 1, 16));
    let ms = samples.len() as u64 / 16;
    assert!((800..=1_300).contains(&ms), "{ms} ms uploaded");
    // The turn is the typed kind: the user's line stored, the message sent as history would be.
    assert_eq!(
        last_user(&r.chat.bodies()[0]).lines().last(),
        Some("What time is it?")
    );
    let lines = transcript::lines(&r.store, "kai", 10).unwrap();
    let said: Vec<(Role, &str)> = lines.iter().map(|l| (l.role, l.text.as_str())).collect();
    assert_eq!(
        said,
        [
            (Role::User, "What time is it?"),
            (Role::Assistant, "It is noon.")
        ]
    );
}

#[tokio::test]
async fn hands_free_hears_an_utterance_and_a_vanished_microphone_is_said_in_plain_words() {
    let mic = host(vec![quiet(400), spoken(900), quiet(1_200), Step::Vanish], 5);
    let mut r = rig(
        vec![chat_say("Hello!"), chat_say("Still here.")],
        vec!["Good morning"],
        mic.clone(),
        "hands_free",
        false,
        false,
    )
    .await;
    let s = r
        .stage
        .mic_follow_settings(TurnTo::preset("yui", WindowKind::Main))
        .unwrap();
    assert!(s.live && s.mode == yui_core::voice::config::MicMode::HandsFree);
    let events = until(
        &mut r.rx,
        |e| matches!(e, StageEvent::Mic { status } if status.message.is_some()),
    )
    .await;
    assert_eq!(heard(&events), [("yui".into(), "Good morning".into())]);
    let states: Vec<MicState> = mics(&events).iter().map(|m| m.state).collect();
    assert!(
        states.contains(&MicState::Hearing) && states.last() == Some(&MicState::Off),
        "{states:?}"
    );
    let gone = mics(&events).last().unwrap().clone();
    assert_eq!(
        gone.message.as_deref(),
        Some("the microphone \"test mic\" went away; text chat goes on")
    );
    assert!(!gone.live);
    assert_eq!(mic.open_now.load(Ordering::SeqCst), 0);
    if !events.iter().any(|e| turn_end(e).is_some()) {
        until(&mut r.rx, |e| turn_end(e).is_some()).await;
    }
    // Text chat goes on.
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "typed"))
        .unwrap();
    let typed = until(&mut r.rx, |e| turn_end(e).is_some()).await;
    assert_eq!(typed.iter().find_map(turn_end).unwrap().0, TurnStatus::Ok);
}

const LONG: &str = "One two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen.";

/// Start a spoken reply of `LONG` on yui; returns its turn id once speech has run ~`ms`.
async fn speaking(r: &mut Rig, ms: u64) -> String {
    let turn = r
        .stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "count"))
        .unwrap();
    until(&mut r.rx, |e| turn_end(e).is_some()).await;
    r.stage.bubble_done(&turn);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    assert!(r.stage.is_speaking());
    turn
}

fn reply_of(store: &Store, turn: &str) -> String {
    transcript::lines(store, "yui", 50)
        .unwrap()
        .into_iter()
        .find(|l| l.role == Role::Assistant && l.turn_id.as_deref() == Some(turn))
        .unwrap()
        .text
}

#[tokio::test]
async fn barge_in_stops_the_voice_and_cuts_the_stored_reply_to_what_was_heard_with_the_marker() {
    let mic = host(vec![], 20);
    let mut r = rig(
        vec![chat_say(LONG), chat_say("Sure.")],
        vec![],
        mic,
        "off",
        false,
        true,
    )
    .await;
    let turn = speaking(&mut r, 1_000).await;
    let t0 = Instant::now();
    assert_eq!(r.stage.barge_in(), ["yui"]);
    let events = until(&mut r.rx, |e| {
        matches!(e, StageEvent::PlaybackFinished { .. })
    })
    .await;
    let stopped = t0.elapsed();
    assert!(events
        .iter()
        .any(|e| matches!(e, StageEvent::PlaybackFinished { turn_id, .. } if *turn_id == turn)));
    // Bounded, not a benchmark (scripts/voice-barge-in.sh measures it): a loaded machine is slow.
    assert!(stopped < Duration::from_secs(3), "{stopped:?}");
    assert!(!r.stage.is_speaking());
    let stored = reply_of(&r.store, &turn);
    let heard = stored
        .strip_suffix(&format!(" {INTERRUPTED_MARKER}"))
        .unwrap_or_else(|| panic!("{stored}"));
    assert!(
        LONG.starts_with(heard) && heard.len() < LONG.len() && heard.starts_with("One two"),
        "{stored}"
    );
    // The next turn's history carries the reply as heard, marker and all.
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "sorry, go on"))
        .unwrap();
    until(&mut r.rx, |e| turn_end(e).is_some()).await;
    let body = r.chat.bodies()[1].clone();
    let assistant: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(assistant, [stored.as_str()]);
}

#[tokio::test]
async fn hands_free_in_full_duplex_barges_in_and_the_words_become_the_next_turn() {
    let mic = host(vec![quiet(400), spoken(900)], 20);
    let mut r = rig(
        vec![chat_say(LONG), chat_say("Yes?")],
        vec!["wait a moment"],
        mic,
        "hands_free",
        true,
        true,
    )
    .await;
    let turn = speaking(&mut r, 500).await;
    r.stage
        .mic_listen(TurnTo::preset("yui", WindowKind::Main))
        .unwrap();
    let events = until(&mut r.rx, |e| {
        matches!(e, StageEvent::Turn { turn_id, event: TurnEvent::TurnEnd { .. }, .. } if *turn_id != turn)
    })
    .await;
    assert!(events
        .iter()
        .any(|e| matches!(e, StageEvent::PlaybackFinished { turn_id, .. } if *turn_id == turn)));
    assert!(reply_of(&r.store, &turn).ends_with(INTERRUPTED_MARKER));
    assert_eq!(heard(&events), [("yui".into(), "wait a moment".into())]);
    assert!(mics(&events).iter().all(|m| m.full_duplex));
    r.stage.mic_stop();
}

#[tokio::test]
async fn half_duplex_drops_what_the_microphone_hears_while_a_character_speaks() {
    let mic = host(vec![quiet(200), spoken(900), quiet(600)], 20);
    let mut r = rig(
        vec![chat_say(LONG)],
        vec!["an echo"],
        mic,
        "hands_free",
        false,
        true,
    )
    .await;
    let turn = speaking(&mut r, 300).await;
    r.stage
        .mic_listen(TurnTo::preset("yui", WindowKind::Main))
        .unwrap();
    let events = until(&mut r.rx, |e| matches!(e, StageEvent::Heard { .. }));
    let events = tokio::time::timeout(Duration::from_secs(3), events).await;
    assert!(events.is_err(), "nothing heard while the character speaks");
    assert_eq!(r.stage.mic_status().state, MicState::Paused);
    assert!(r.stage.is_speaking(), "not interrupted");
    assert_eq!(reply_of(&r.store, &turn), LONG);
    assert!(r.stt.seen().is_empty());
    r.stage.mic_stop();
}
