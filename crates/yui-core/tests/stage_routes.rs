//! Where the stage's events go: each event names its windows (`StageEvent::to`) and the stage
//! decides them — a user turn on its own stream only, a phone's turn and an addressed turn also
//! on the character's desktop window, the main window as whichever preset it opened with — and
//! committed store changes (presets, switches, vocabulary, relations, other settings) become stage
//! events. Against the test kit's scripted server and real SQLite files.

use crate::turn_support::backends;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use yui_core::backend::Transport;
use yui_core::clock::SystemClock;
use yui_core::paths::Paths;
use yui_core::relations::Target;
use yui_core::stage::UserTurn;
use yui_core::stage::{Stage, StageEvent, StageOptions, To, Window};
use yui_core::turn::{TurnEvent, TurnStatus};
use yui_core::{presets, relations, settings, vocab, Store};
use yui_testkit::sse::*;

struct Rig {
    _dir: tempfile::TempDir,
    store: Store,
    _server: ScriptServer,
    stage: Stage,
    rx: UnboundedReceiver<StageEvent>,
}

async fn rig(replies: Vec<Reply>) -> Rig {
    let server = ScriptServer::start(replies).await;
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let opts = StageOptions {
        backend: backends::fixed(Transport::ChatCompletions, &server.base_url),
        headless: true,
        ..StageOptions::default()
    };
    let (stage, rx) = Stage::new(store.clone(), Arc::new(SystemClock), paths, opts);
    Rig {
        _dir: dir,
        store,
        _server: server,
        stage,
        rx,
    }
}

fn says(text: &str) -> Reply {
    Reply::Sse(vec![c_text(text), c_finish("stop"), done()])
}

/// A stream that keeps what it gets and answers `reading`.
fn stream(reading: bool) -> (yui_core::stage::Stream, Arc<Mutex<Vec<TurnEvent>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    let s: yui_core::stage::Stream = Box::new(move |ev: &TurnEvent| {
        sink.lock().unwrap().push(ev.clone());
        reading
    });
    (s, got)
}

/// Every `Turn` event's windows until `n` turns ended.
async fn turn_windows(rx: &mut UnboundedReceiver<StageEvent>, n: usize) -> Vec<(String, To)> {
    let mut out = Vec::new();
    let mut ends = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while ends < n {
        let ev = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("the turns ended in time")
            .expect("stage alive");
        if let StageEvent::Turn {
            preset_id, event, ..
        } = &ev
        {
            ends += usize::from(matches!(event, TurnEvent::TurnEnd { .. }));
            out.push((preset_id.clone(), ev.to()));
        }
    }
    out
}

#[tokio::test]
async fn a_user_turn_goes_to_its_stream_and_a_phones_turn_also_to_the_desktop_window() {
    let mut r = rig(vec![says("hello."), says("from the phone.")]).await;
    r.stage.window_opened(Window::Main);
    r.stage.window_opened(Window::Pet("kai".into()));

    let (s, got) = stream(true);
    r.stage
        .user_turn(UserTurn::in_window(Window::Main, "hi").streamed(s))
        .unwrap();
    let seen = turn_windows(&mut r.rx, 1).await;
    assert!(
        seen.iter()
            .all(|(p, to)| p == "yui" && *to == To::Only(vec![])),
        "{seen:?}"
    );
    let got = got.lock().unwrap().clone();
    assert!(
        matches!(
            got.last(),
            Some(TurnEvent::TurnEnd {
                status: TurnStatus::Ok,
                ..
            })
        ),
        "{got:?}"
    );
    assert!(got
        .iter()
        .any(|e| matches!(e, TurnEvent::Speech { delta } if delta == "hello.")));

    let (s, got) = stream(true);
    r.stage
        .user_turn(UserTurn::in_window(Window::Phone("kai".into()), "hi").streamed(s))
        .unwrap();
    let seen = turn_windows(&mut r.rx, 1).await;
    let pet = To::Only(vec![Window::Pet("kai".into())]);
    assert!(
        seen.iter().all(|(p, to)| p == "kai" && *to == pet),
        "{seen:?}"
    );
    assert_eq!(
        got.lock().unwrap().len(),
        seen.len(),
        "the phone's stream has every event"
    );
}

#[tokio::test]
async fn a_phones_turn_for_a_closed_character_plays_on_the_phone_alone() {
    let mut r = rig(vec![says("only here.")]).await;
    r.stage.window_opened(Window::Main);
    r.stage.window_opened(Window::Pet("kai".into()));
    r.stage.window_closed(Window::Pet("kai".into()));
    let (s, _) = stream(true);
    r.stage
        .user_turn(UserTurn::in_window(Window::Phone("kai".into()), "hi").streamed(s))
        .unwrap();
    let seen = turn_windows(&mut r.rx, 1).await;
    assert!(
        seen.iter().all(|(_, to)| *to == To::Only(vec![])),
        "{seen:?}"
    );
}

#[tokio::test]
async fn an_addressed_turn_plays_on_the_recipients_window_and_the_main_window_follows_the_main_preset(
) {
    let mut r = rig(vec![
        Reply::Sse(vec![
            c_text("Kai, say hi."),
            c_call(
                0,
                "call_a",
                "address_character",
                &json!({"to": "Kai"}).to_string(),
            ),
            c_finish("tool_calls"),
            done(),
        ]),
        Reply::Sse(vec![c_finish("stop"), done()]),
        says("hi."),
    ])
    .await;
    // Kai is the main character now: the main window shows Kai, Yui is a pet.
    presets::set_main(&r.store, "kai").unwrap();
    r.stage.window_opened(Window::Main);
    r.stage.window_opened(Window::Pet("yui".into()));
    assert_eq!(r.stage.preset_in(&Window::Main).unwrap(), "kai");

    let (s, _) = stream(true);
    r.stage
        .user_turn(UserTurn::in_window(Window::Pet("yui".into()), "go").streamed(s))
        .unwrap();
    let seen = turn_windows(&mut r.rx, 2).await;
    let kai: Vec<_> = seen.iter().filter(|(p, _)| p == "kai").collect();
    assert!(!kai.is_empty());
    assert!(
        kai.iter()
            .all(|(_, to)| *to == To::Only(vec![Window::Main])),
        "{kai:?}"
    );
    assert!(seen
        .iter()
        .filter(|(p, _)| p == "yui")
        .all(|(_, to)| *to == To::Only(vec![])));
}

#[tokio::test]
async fn a_stream_no_one_reads_stops_its_turn() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut r = rig(vec![Reply::Sse(vec![
        c_text("first."),
        Part::Gate(gate.clone(), Duration::from_secs(10)),
        c_text(" never heard."),
        c_finish("stop"),
        done(),
    ])])
    .await;
    r.stage.window_opened(Window::Main);
    let (s, got) = stream(false);
    r.stage
        .user_turn(UserTurn::in_window(Window::Main, "hi").streamed(s))
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        let ev = tokio::time::timeout_at(deadline, r.rx.recv())
            .await
            .expect("ends")
            .unwrap();
        if let StageEvent::Turn {
            event: TurnEvent::TurnEnd { status, .. },
            ..
        } = ev
        {
            break status;
        }
    };
    assert_eq!(status, TurnStatus::Stopped);
    assert_eq!(
        got.lock().unwrap().len(),
        1,
        "the stream heard only the first event"
    );
}

/// The next change event (skipping turn events).
async fn next_change(rx: &mut UnboundedReceiver<StageEvent>) -> StageEvent {
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("a change event")
            .unwrap();
        if !matches!(ev, StageEvent::Turn { .. } | StageEvent::Idle) {
            return ev;
        }
    }
}

#[tokio::test]
async fn committed_changes_become_events_for_the_windows() {
    let mut r = rig(vec![]).await;
    presets::update(
        &r.store,
        "kai",
        &presets::PresetUpdate {
            name: Some("Kaito".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let ev = next_change(&mut r.rx).await;
    assert_eq!(ev.to(), To::Every);
    assert!(
        ev.payload()
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "Kaito"),
        "{ev:?}"
    );

    settings::set_switch(&r.store, settings::BROWSER, true).unwrap();
    let ev = next_change(&mut r.rx).await;
    assert!(matches!(ev, StageEvent::SwitchesChanged { .. }), "{ev:?}");
    assert_eq!(ev.payload()["browser"], json!(true));

    let mut v = vocab::Vocab::default();
    v.motions.retain(|m| m.id != "wave");
    vocab::save(&r.store, &v).unwrap();
    let ev = next_change(&mut r.rx).await;
    assert!(matches!(ev, StageEvent::VocabChanged { .. }), "{ev:?}");
    assert!(!ev.payload()["motions"].to_string().contains("\"wave\""));

    relations::set_by_hand(&r.store, &SystemClock, "kai", &Target::User, 13).unwrap();
    let ev = next_change(&mut r.rx).await;
    assert_eq!(ev.payload()["bands"]["kai"], json!("close"), "{ev:?}");

    settings::set(&r.store, settings::VOICE, &json!({"enabled": false})).unwrap();
    let ev = next_change(&mut r.rx).await;
    assert_eq!(ev.to(), To::Only(vec![Window::Settings]));
    assert_eq!(ev.payload(), json!({"key": "yui.voice"}));
}

#[tokio::test]
async fn the_main_window_closing_stops_the_turn_of_the_character_it_showed() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut r = rig(vec![Reply::Sse(vec![
        c_text("a long"),
        Part::Gate(gate.clone(), Duration::from_secs(10)),
        c_text(" story."),
        c_finish("stop"),
        done(),
    ])])
    .await;
    r.stage.window_opened(Window::Main);
    let (s, _) = stream(true);
    r.stage
        .user_turn(UserTurn::in_window(Window::Main, "hi").streamed(s))
        .unwrap();
    assert!(r.stage.running("yui").is_some());
    // The main window shows Yui; the shell only says the window went away.
    r.stage.window_closed(Window::Main);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        let ev = tokio::time::timeout_at(deadline, r.rx.recv())
            .await
            .expect("ends")
            .unwrap();
        if let StageEvent::Turn {
            event: TurnEvent::TurnEnd { status, .. },
            ..
        } = ev
        {
            break status;
        }
    };
    assert_eq!(status, TurnStatus::Stopped);
}
