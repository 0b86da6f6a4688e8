//! The stage against the test kit's scripted Chat Completions server on 127.0.0.1 and real
//! SQLite files: one character addressing another, the addressed turn's context and transcript,
//! the chain cap, `[SILENT]`, the user interrupting, a recipient closed meanwhile, two
//! characters streaming at once, and each character's own voice.

use crate::turn_support::backends;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use yui_core::backend::Transport;
use yui_core::clock::SystemClock;
use yui_core::paths::Paths;
use yui_core::stage::UserTurn;
use yui_core::stage::{BackendSource, Origin, Stage, StageEvent, StageOptions};
use yui_core::transcript;
use yui_core::turn::{TurnEvent, TurnStatus};
use yui_core::{presets, settings, Store, WindowKind};
use yui_testkit::sse::*;

struct Rig {
    _dir: tempfile::TempDir,
    store: Store,
    server: ScriptServer,
    stage: Stage,
    rx: UnboundedReceiver<StageEvent>,
}

async fn rig(replies: Vec<Reply>) -> Rig {
    let server = ScriptServer::start(replies).await;
    let (dir, store, stage, rx) = stage_on(StageOptions {
        backend: fixed(&server.base_url),
        headless: true,
        ..StageOptions::default()
    });
    Rig {
        _dir: dir,
        store,
        server,
        stage,
        rx,
    }
}

/// The scripted server's Chat Completions backend, with short waits.
fn fixed(base_url: &str) -> BackendSource {
    backends::fixed(Transport::ChatCompletions, base_url)
}

/// The push transport to `url`, with the same short waits.
fn push(url: &str) -> BackendSource {
    let BackendSource::Fixed {
        mut backend,
        timeouts,
    } = fixed("http://127.0.0.1:9/v1")
    else {
        unreachable!()
    };
    backend.transport = Transport::Push;
    backend.push_url = Some(url.to_string());
    BackendSource::Fixed { backend, timeouts }
}

/// A stage with `opts` on a fresh store (the temp dir lives as long as the first value).
fn stage_on(
    opts: StageOptions,
) -> (
    tempfile::TempDir,
    Store,
    Stage,
    UnboundedReceiver<StageEvent>,
) {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let (stage, rx) = Stage::new(store.clone(), Arc::new(SystemClock), paths, opts);
    (dir, store, stage, rx)
}

/// A reply that says `text` and addresses `to`, then the (empty) answer after its round trip.
fn say_to(text: &str, to: &str) -> [Reply; 2] {
    [
        Reply::Sse(vec![
            c_text(text),
            c_call(
                0,
                "call_a",
                "address_character",
                &json!({ "to": to }).to_string(),
            ),
            c_finish("tool_calls"),
            done(),
        ]),
        Reply::Sse(vec![c_finish("stop"), done()]),
    ]
}

/// One ended turn as the stage reported it.
#[derive(Debug)]
struct Ended {
    preset: String,
    origin: Origin,
    status: TurnStatus,
    text: String,
    speech: String,
}

/// Read events until `n` turns ended (then `quiet` more without a new turn end); every event.
async fn collect(
    rx: &mut UnboundedReceiver<StageEvent>,
    n: usize,
    quiet: Duration,
) -> Vec<StageEvent> {
    let mut out = Vec::new();
    let mut ends = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while ends < n {
        let ev = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("the turns ended in time")
            .expect("stage alive");
        if matches!(
            &ev,
            StageEvent::Turn {
                event: TurnEvent::TurnEnd { .. },
                ..
            }
        ) {
            ends += 1;
        }
        out.push(ev);
    }
    while let Ok(Some(ev)) = tokio::time::timeout(quiet, rx.recv()).await {
        out.push(ev);
    }
    out
}

fn ended(events: &[StageEvent]) -> Vec<Ended> {
    let mut speech: std::collections::HashMap<String, String> = Default::default();
    let mut out = Vec::new();
    for ev in events {
        if let StageEvent::Turn {
            preset_id,
            turn_id,
            origin,
            event,
            ..
        } = ev
        {
            match event {
                TurnEvent::Speech { delta } => {
                    speech.entry(turn_id.clone()).or_default().push_str(delta)
                }
                TurnEvent::TurnEnd { status, text, .. } => out.push(Ended {
                    preset: preset_id.clone(),
                    origin: origin.clone(),
                    status: *status,
                    text: text.clone(),
                    speech: speech.remove(turn_id).unwrap_or_default(),
                }),
                _ => {}
            }
        }
    }
    out
}

fn addressed(events: &[StageEvent]) -> Vec<(String, String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            StageEvent::CharacterAddressed { from, to, text, .. } => {
                Some((from.clone(), to.clone(), text.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The last user message a request carried.
fn last_user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_reply_addressed_to_kai_gives_kai_an_addressed_turn_with_the_exchange_in_its_context_and_transcript(
) {
    let [a1, a2] = say_to("Kai, look at this!", "Kai");
    let mut r = rig(vec![a1, a2, chat_say("Nice one, Yui.")]).await;
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "show Kai"))
        .unwrap();
    let events = collect(&mut r.rx, 2, Duration::from_millis(300)).await;
    assert_eq!(
        addressed(&events),
        [(
            "yui".to_string(),
            "kai".to_string(),
            "Kai, look at this!".to_string()
        )]
    );
    let turns = ended(&events);
    assert_eq!(turns.len(), 2, "{turns:?}");
    assert_eq!(
        (turns[0].preset.as_str(), &turns[0].origin),
        ("yui", &Origin::User)
    );
    assert_eq!(turns[1].preset, "kai");
    assert_eq!(
        turns[1].origin,
        Origin::Addressed {
            from: "yui".into(),
            from_name: "Yui".into()
        }
    );
    assert_eq!(
        (turns[1].status, turns[1].text.as_str()),
        (TurnStatus::Ok, "Nice one, Yui.")
    );
    // The playback of each turn was reported, Yui's before Kai's turn began.
    let first_played = events
        .iter()
        .position(
            |e| matches!(e, StageEvent::PlaybackFinished { preset_id, .. } if preset_id == "yui"),
        )
        .expect("yui's playback finished");
    let kai_started = events
        .iter()
        .position(|e| matches!(e, StageEvent::Turn { preset_id, .. } if preset_id == "kai"))
        .unwrap();
    assert!(first_played < kai_started);

    // Kai's request: the context says who spoke and what was said; no user text of its own.
    let bodies = r.server.bodies();
    assert_eq!(bodies.len(), 3);
    let kai = last_user(&bodies[2]);
    assert!(
        kai.contains("addressed: Yui spoke to you: \"Kai, look at this!\"\n"),
        "{kai}"
    );
    assert!(kai.ends_with("[/client context]"), "{kai}");
    // Kai's transcript has what Yui said (marked with her name) and its answer.
    let lines = transcript::lines(&r.store, "kai", 10).unwrap();
    let got: Vec<_> = lines
        .iter()
        .map(|e| (e.role.as_str(), e.speaker.as_deref(), e.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("user", Some("Yui"), "Kai, look at this!"),
            ("assistant", None, "Nice one, Yui.")
        ]
    );
}

#[tokio::test]
async fn the_next_history_of_the_addressed_character_carries_the_exchange_with_the_speakers_name() {
    let [a1, a2] = say_to("Kai, hi!", "Kai");
    let mut r = rig(vec![a1, a2, chat_say("Hi Yui."), chat_say("Sure.")]).await;
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "greet Kai"))
        .unwrap();
    collect(&mut r.rx, 2, Duration::from_millis(200)).await;
    r.stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "and you?"))
        .unwrap();
    collect(&mut r.rx, 1, Duration::from_millis(100)).await;
    let body = &r.server.bodies()[3];
    let history: Vec<(String, String)> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        history[0],
        ("user".to_string(), "Yui: Kai, hi!".to_string())
    );
    assert_eq!(history[1], ("assistant".to_string(), "Hi Yui.".to_string()));
    assert!(history[2].1.ends_with("\n\nand you?"));
}

#[tokio::test]
async fn characters_addressing_each_other_forever_stop_after_exactly_the_chain_cap() {
    for cap in [4u64, 1] {
        let mut replies = Vec::new();
        for i in 0..12 {
            let to = if i % 2 == 0 { "Kai" } else { "Yui" };
            replies.extend(say_to(&format!("line {i}"), to));
        }
        let mut r = rig(replies).await;
        if cap != 4 {
            settings::set(&r.store, settings::ADDRESSED_CHAIN_MAX, &json!(cap)).unwrap();
        }
        r.stage
            .user_turn(UserTurn::to("yui", WindowKind::Main, "talk"))
            .unwrap();
        let events = collect(&mut r.rx, 1 + cap as usize, Duration::from_millis(800)).await;
        let turns = ended(&events);
        assert_eq!(turns.len(), 1 + cap as usize, "cap {cap}: {turns:?}");
        assert_eq!(addressed(&events).len(), cap as usize);
        let who: Vec<_> = turns.iter().map(|t| t.preset.as_str()).collect();
        let want: Vec<_> = (0..=cap)
            .map(|i| if i % 2 == 0 { "yui" } else { "kai" })
            .collect();
        assert_eq!(who, want);
        assert_eq!(
            r.server.bodies().len(),
            2 * (1 + cap as usize),
            "no request past the cap"
        );
    }
}

#[tokio::test]
async fn a_silent_reply_is_neither_shown_nor_stored_and_ends_the_exchange() {
    let [a1, a2] = say_to("Kai?", "Kai");
    let silent = Reply::Sse(vec![
        c_text(" [SIL"),
        c_text("ENT] "),
        c_finish("stop"),
        done(),
    ]);
    let mut r = rig(vec![a1, a2, silent, chat_say("never asked")]).await;
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "ask Kai"))
        .unwrap();
    let events = collect(&mut r.rx, 2, Duration::from_millis(400)).await;
    let turns = ended(&events);
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1].preset, "kai");
    assert_eq!(turns[1].status, TurnStatus::Silent);
    assert_eq!(
        (turns[1].speech.as_str(), turns[1].text.as_str()),
        ("", ""),
        "nothing flashes"
    );
    let kai = transcript::lines(&r.store, "kai", 10).unwrap();
    assert!(kai.iter().all(|e| e.role.as_str() == "user"), "{kai:?}");
    assert_eq!(r.server.bodies().len(), 3);
}

#[tokio::test]
async fn a_reply_that_only_starts_like_silent_is_shown_whole() {
    let reply = Reply::Sse(vec![
        c_text("[SIL"),
        c_text("LY] me"),
        c_finish("stop"),
        done(),
    ]);
    let mut r = rig(vec![reply]).await;
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "hi"))
        .unwrap();
    let turns = ended(&collect(&mut r.rx, 1, Duration::from_millis(50)).await);
    assert_eq!(turns[0].speech, "[SILLY] me");
    assert_eq!(turns[0].status, TurnStatus::Ok);
}

#[tokio::test]
async fn the_user_typing_interrupts_the_exchange() {
    let [a1, a2] = say_to("Kai, story time.", "Kai");
    let slow_kai = Reply::Sse(vec![
        c_text("Once upon"),
        Part::Sleep(Duration::from_secs(3)),
        c_text(" a time"),
        c_call(0, "call_b", "address_character", r#"{"to":"Yui"}"#),
        c_finish("tool_calls"),
        done(),
    ]);
    let mut r = rig(vec![a1, a2, slow_kai, chat_say("Okay!")]).await;
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "ask Kai"))
        .unwrap();
    // Wait until Kai speaks, then the user types to Yui.
    let mut seen = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(10), r.rx.recv())
            .await
            .unwrap()
            .unwrap();
        let kai_spoke = matches!(&ev, StageEvent::Turn { preset_id, event: TurnEvent::Speech { .. }, .. } if preset_id == "kai");
        seen.push(ev);
        if kai_spoke {
            break;
        }
    }
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "wait, me first"))
        .unwrap();
    seen.extend(collect(&mut r.rx, 2, Duration::from_millis(500)).await);
    let turns = ended(&seen);
    let kai = turns.iter().find(|t| t.preset == "kai").unwrap();
    assert_eq!(kai.status, TurnStatus::Stopped);
    assert_eq!(turns.len(), 3, "{turns:?}");
    assert_eq!(
        addressed(&seen).len(),
        1,
        "no addressed turn after the user spoke"
    );
    assert_eq!(r.server.bodies().len(), 4);
}

#[tokio::test]
async fn a_recipient_closed_meanwhile_gets_no_turn() {
    let slow = Reply::Sse(vec![
        c_text("Kai, "),
        Part::Sleep(Duration::from_millis(600)),
        c_call(0, "call_a", "address_character", r#"{"to":"Kai"}"#),
        c_finish("tool_calls"),
        done(),
    ]);
    let mut r = rig(vec![
        slow,
        Reply::Sse(vec![c_finish("stop"), done()]),
        chat_say("too late"),
    ])
    .await;
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "call Kai"))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    presets::close(&r.store, "kai").unwrap();
    r.stage.closed("kai");
    let events = collect(&mut r.rx, 1, Duration::from_millis(500)).await;
    assert_eq!(ended(&events).len(), 1);
    assert!(addressed(&events).is_empty());
    assert_eq!(r.server.bodies().len(), 2);
}

#[tokio::test]
async fn two_characters_stream_at_the_same_time_without_waiting_for_each_other() {
    let slow = Reply::Sse(vec![
        c_text("I am "),
        Part::Sleep(Duration::from_millis(1500)),
        c_text("slow."),
        c_finish("stop"),
        done(),
    ]);
    let mut r = rig(vec![slow, chat_say("I am quick.")]).await;
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "go"))
        .unwrap();
    for _ in 0..100 {
        if !r.server.bodies().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let started = std::time::Instant::now();
    r.stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "go"))
        .unwrap();
    let events = collect(&mut r.rx, 2, Duration::from_millis(50)).await;
    let turns = ended(&events);
    assert_eq!(
        turns[0].preset, "kai",
        "the quick one ends first: {turns:?}"
    );
    assert_eq!(turns[1].text, "I am slow.");
    // Kai's whole turn ran while Yui's stream was paused.
    let kai_end = events
        .iter()
        .position(|e| matches!(e, StageEvent::Turn { preset_id, event: TurnEvent::TurnEnd { .. }, .. } if preset_id == "kai"))
        .unwrap();
    let yui_slow = events
        .iter()
        .position(|e| matches!(e, StageEvent::Turn { event: TurnEvent::Speech { delta }, .. } if delta == "slow."))
        .unwrap();
    assert!(kai_end < yui_slow);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_second_user_turn_of_the_same_character_stops_the_first() {
    let hold = Reply::Sse(vec![c_text("thinking"), Part::Hold]);
    let mut r = rig(vec![hold, chat_say("new answer")]).await;
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "one"))
        .unwrap();
    for _ in 0..100 {
        if r.server.bodies().len() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "two"))
        .unwrap();
    let turns = ended(&collect(&mut r.rx, 2, Duration::from_millis(50)).await);
    let statuses: Vec<_> = turns.iter().map(|t| t.status).collect();
    assert_eq!(statuses, [TurnStatus::Stopped, TurnStatus::Ok]);
    assert!(r.stage.running("yui").is_none());
}

/// A fake `spd-say` that records its arguments and takes 1.5 s to "speak".
fn fake_spd_say(dir: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let log = dir.join("calls.log");
    let prog = dir.join("spd-say");
    std::fs::write(
        &prog,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\n[ \"$1\" = --cancel ] && exit 0\nexec sleep 1.5\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
    log
}

async fn wait_played(rx: &mut UnboundedReceiver<StageEvent>, turn: &str, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    while let Ok(Some(ev)) = tokio::time::timeout_at(deadline, rx.recv()).await {
        if matches!(&ev, StageEvent::PlaybackFinished { turn_id, .. } if turn_id == turn) {
            return true;
        }
    }
    false
}

#[tokio::test]
async fn each_character_speaks_on_its_own_and_stopping_one_never_cuts_the_other() {
    let fake = tempfile::tempdir().unwrap();
    let log = fake_spd_say(fake.path());
    let server = ScriptServer::start(vec![
        chat_say("Hello there."),
        chat_say("A long story."),
        chat_say("Alone now."),
    ])
    .await;
    let (_dir, store, stage, mut rx) = stage_on(StageOptions {
        backend: fixed(&server.base_url),
        headless: false,
        voice_path: Some(fake.path().as_os_str().to_owned()),
        ..StageOptions::default()
    });
    // Both at once: overlap allowed (otherwise Kai waits for Yui to finish).
    settings::set(
        &store,
        "yui.voice",
        &json!({"enabled": true, "engine": "speech-dispatcher", "overlap": true}),
    )
    .unwrap();
    // Kai has a voice of its own.
    let kai_voice = presets::PresetUpdate {
        voice: Some(json!({"voice_type": "male1", "rate": 20})),
        ..Default::default()
    };
    presets::update(&store, "kai", &kai_voice).unwrap();

    let yui = stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "hi"))
        .unwrap();
    collect(&mut rx, 1, Duration::from_millis(10)).await;
    let kai = stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "tell me"))
        .unwrap();
    collect(&mut rx, 1, Duration::from_millis(10)).await;
    stage.bubble_done(&yui);
    stage.bubble_done(&kai);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Both speak; Escape on Yui stops Yui alone: speech-dispatcher is not told to cancel.
    assert!(stage.stop_voice("yui"));
    assert!(
        wait_played(&mut rx, &yui, Duration::from_secs(1)).await,
        "yui's playback ends at once"
    );
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(!calls.contains("--cancel"), "{calls}");
    assert!(
        calls.contains("--wait --application-name yui -- Hello there.\n")
            && calls.contains(
                "--wait --application-name yui --rate 20 --voice-type male1 -- A long story.\n"
            ),
        "each in its own voice: {calls}"
    );
    // Kai's speech goes on to its end, and only then is its playback finished.
    assert!(wait_played(&mut rx, &kai, Duration::from_secs(5)).await);
    assert!(!stage.stop_voice("kai"), "kai's speech ended on its own");

    // Alone, a stop also tells speech-dispatcher to cancel what it still says.
    let alone = stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "again"))
        .unwrap();
    collect(&mut rx, 1, Duration::from_millis(10)).await;
    stage.bubble_done(&alone);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(stage.stop_voice("yui"));
    assert!(wait_played(&mut rx, &alone, Duration::from_secs(2)).await);
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(calls.ends_with("-- Alone now.\n--cancel\n"), "{calls}");
}

#[tokio::test]
async fn with_push_each_character_window_keeps_one_connection_its_turns_share_and_its_state_is_reported(
) {
    use yui_testkit::ws::WsServer;
    let mut srv = WsServer::start().await;
    let (_dir, _store, stage, mut rx) = stage_on(StageOptions {
        backend: push(&srv.url),
        headless: true,
        ..StageOptions::default()
    });
    // The window opens: its connection opens with it, before any turn.
    stage.opened("kai", WindowKind::Pet);
    let (conn, hello) = srv.accept_hello().await;
    assert_eq!(
        (hello["window"].as_str(), hello["preset"]["id"].as_str()),
        (Some("pet"), Some("kai"))
    );
    let mut states = Vec::new();
    while !states.contains(&"connected".to_string()) {
        match tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap()
        {
            StageEvent::Connection { preset_id, state } => {
                assert_eq!(preset_id, "kai");
                states.push(
                    serde_json::to_value(&state).unwrap()["state"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                );
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(states.first().map(String::as_str), Some("connecting"));
    let shown = stage.connections();
    assert_eq!(shown.len(), 1);
    assert_eq!(
        serde_json::to_value(&shown[0]).unwrap(),
        json!({"preset_id":"kai","state":{"state":"connected"}})
    );

    // Two turns over the same connection: no second connect.
    let mut conn = conn;
    for word in ["one", "two"] {
        let turn = stage
            .user_turn(UserTurn::to("kai", WindowKind::Pet, word))
            .unwrap();
        let msg = conn.recv_type("user_message").await.expect("user_message");
        assert_eq!(
            (msg["turn_id"].as_str(), msg["text"].as_str()),
            (Some(turn.as_str()), Some(word))
        );
        conn.send(&json!({"type":"segment","turn_id":turn,"kind":"speech","text":"ok","cues":[]}));
        conn.send(&json!({"type":"turn_end","turn_id":turn,"status":"ok"}));
        let turns = ended(&collect(&mut rx, 1, Duration::from_millis(50)).await);
        assert_eq!(
            (turns[0].status, turns[0].text.as_str()),
            (TurnStatus::Ok, "ok")
        );
    }
    assert!(
        srv.accept(Duration::from_millis(300)).await.is_none(),
        "one connection per window"
    );

    // Closing the window closes its connection.
    stage.closed("kai");
    assert!(stage.connections().is_empty());
}

#[tokio::test]
async fn a_push_turn_that_addresses_kai_gives_kai_an_addressed_push_turn() {
    use yui_testkit::ws::WsServer;
    let mut srv = WsServer::start().await;
    let (_dir, store, stage, mut rx) = stage_on(StageOptions {
        backend: push(&srv.url),
        headless: true,
        ..StageOptions::default()
    });
    let turn = stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "say hi to Kai"))
        .unwrap();
    let (mut yui, _) = srv.accept_hello().await;
    yui.recv_type("user_message").await.unwrap();
    yui.send(&json!({"type":"tool_call","turn_id":turn,"call_id":"c1","name":"address_character","arguments":{"to":"Kai"}}));
    let result = yui.recv_type("tool_result").await.unwrap();
    assert_eq!(result["result"], "ok");
    yui.send(&json!({"type":"segment","turn_id":turn,"kind":"speech","text":"Hi Kai!","cues":[]}));
    yui.send(&json!({"type":"turn_end","turn_id":turn,"status":"ok"}));
    // Kai's window connects and gets the addressed turn.
    let (mut kai, hello) = srv.accept_hello().await;
    assert_eq!(hello["preset"]["id"], "kai");
    let msg = kai.recv_type("user_message").await.unwrap();
    assert_eq!(msg["text"], "Yui: Hi Kai!");
    assert!(
        msg["context"]
            .as_str()
            .unwrap()
            .contains("addressed: Yui spoke to you: \"Hi Kai!\""),
        "{msg}"
    );
    let kai_turn = msg["turn_id"].as_str().unwrap().to_string();
    kai.send(
        &json!({"type":"segment","turn_id":kai_turn,"kind":"speech","text":"Hello!","cues":[]}),
    );
    kai.send(&json!({"type":"turn_end","turn_id":kai_turn,"status":"ok"}));
    let turns = ended(&collect(&mut rx, 2, Duration::from_millis(100)).await);
    let got: Vec<_> = turns
        .iter()
        .map(|t| (t.preset.as_str(), t.text.as_str()))
        .collect();
    assert_eq!(got, [("yui", "Hi Kai!"), ("kai", "Hello!")]);
    let kai_lines = transcript::lines(&store, "kai", 10).unwrap();
    assert_eq!(kai_lines[0].speaker.as_deref(), Some("Yui"));
}

#[tokio::test]
async fn a_character_answering_the_user_is_not_interrupted_by_an_addressed_turn() {
    // Kai answers its phone slowly; meanwhile Yui's reply addresses Kai.
    let slow_kai = Reply::Sse(vec![
        c_text("On the phone"),
        Part::Sleep(Duration::from_millis(1500)),
        c_text(", still."),
        c_finish("stop"),
        done(),
    ]);
    let [a1, a2] = say_to("Kai, come here!", "Kai");
    let mut r = rig(vec![slow_kai, a1, a2, chat_say("never asked")]).await;
    r.stage
        .user_turn(UserTurn::to("kai", WindowKind::Phone, "hello?"))
        .unwrap();
    for _ in 0..100 {
        if !r.server.bodies().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The user asks Yui meanwhile (that stops addressed turns only), and Yui addresses Kai.
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "call Kai"))
        .unwrap();
    let events = collect(&mut r.rx, 2, Duration::from_millis(500)).await;
    let turns = ended(&events);
    let kai = turns.iter().find(|t| t.preset == "kai").unwrap();
    assert_eq!(
        (kai.status, kai.text.as_str()),
        (TurnStatus::Ok, "On the phone, still.")
    );
    assert!(
        addressed(&events).is_empty(),
        "no hand-over to a busy character"
    );
    assert_eq!(r.server.bodies().len(), 3);
}
