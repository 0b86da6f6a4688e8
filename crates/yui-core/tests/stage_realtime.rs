//! The stage with the realtime transport, against the test kit's realtime server: a character
//! window keeps one session that its turns share, its state is reported like push's, the turn's
//! client context goes in as instructions, and closing the window closes the session.

use crate::turn_support::backends;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use yui_core::clock::SystemClock;
use yui_core::paths::Paths;
use yui_core::stage::UserTurn;
use yui_core::stage::{Stage, StageEvent, StageOptions};
use yui_core::turn::{TurnEvent, TurnStatus};
use yui_core::{Store, WindowKind};
use yui_testkit::realtime::{self as rt, RealtimeServer};

#[tokio::test]
async fn with_realtime_each_character_window_keeps_one_session_its_turns_share() {
    let mut srv = RealtimeServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let opts = StageOptions {
        backend: backends::realtime_fixed(&srv.url),
        headless: true,
        ..StageOptions::default()
    };
    let (stage, mut rx) = Stage::new(store.clone(), Arc::new(SystemClock), paths, opts);
    // The window opens: its session opens with it, before any turn.
    stage.opened("kai", WindowKind::Pet);
    let (mut c, session) = srv.accept_session().await;
    let names = yui_core::turn::transport::realtime::tool_names(&session);
    assert_eq!(
        names,
        [
            "generate_express",
            "rate_relation",
            "address_character",
            "browser",
            "remind"
        ]
    );
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap();
        if let StageEvent::Connection { preset_id, state } = ev {
            assert_eq!(preset_id, "kai");
            if serde_json::to_value(&state).unwrap()["state"] == "connected" {
                break;
            }
        }
    }
    assert_eq!(
        serde_json::to_value(stage.connections()).unwrap(),
        json!([{"preset_id":"kai","state":{"state":"connected"}}])
    );
    for word in ["one", "two"] {
        stage
            .user_turn(UserTurn::to("kai", WindowKind::Pet, word))
            .unwrap();
        let up = c.recv_type("session.update").await.unwrap();
        let i = up["session"]["instructions"].as_str().unwrap();
        assert!(i.contains("[client context]"), "{i}");
        assert_eq!(c.user_turn().await, word);
        c.play(&rt::text_reply(&format!("r_{word}"), &["ok"]));
        let end = loop {
            let ev = tokio::time::timeout(Duration::from_secs(5), rx.recv())
                .await
                .unwrap()
                .unwrap();
            if let StageEvent::Turn {
                event: TurnEvent::TurnEnd { status, text, .. },
                ..
            } = ev
            {
                break (status, text);
            }
        };
        assert_eq!(end, (TurnStatus::Ok, "ok".to_string()));
    }
    assert!(
        srv.accept(Duration::from_millis(300)).await.is_none(),
        "one session per window"
    );
    stage.closed("kai");
    assert!(stage.connections().is_empty());
}

/// A window's seat whose server sends `session.created` and never confirms the session (issue
/// 46): the user's turn ends with the set-up's sentence well inside a generous bound (it waited
/// the headers wait, 2 min by default), the words are stored, and once the server confirms, the
/// seat's session is up again and the next turn is answered.
#[tokio::test]
async fn a_seat_whose_session_is_never_confirmed_ends_the_turn_and_recovers() {
    let srv = RealtimeServer::unconfirmed(Vec::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let opts = StageOptions {
        backend: backends::realtime_fixed(&srv.url),
        headless: true,
        ..StageOptions::default()
    };
    let (stage, mut rx) = Stage::new(store.clone(), Arc::new(SystemClock), paths, opts);
    stage.opened("kai", WindowKind::Pet);
    let t0 = std::time::Instant::now();
    stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "are you there"))
        .unwrap();
    let (status, _, error) = turn_end(&mut rx).await;
    assert_eq!(status, TurnStatus::Error);
    // short_waits: a 5 s stall, the set-up's deadline.
    assert_eq!(
        error.as_deref(),
        Some("the realtime server did not confirm the session in 5 s. Settings → Backend")
    );
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    let said = yui_core::transcript::lines(&store, "kai", 10).unwrap();
    assert_eq!(said[0].text, "are you there");

    srv.confirm();
    let connected = async {
        while stage
            .connections()
            .iter()
            .all(|c| serde_json::to_value(&c.state).unwrap()["state"] != "connected")
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), connected)
        .await
        .expect("the seat's session is up again");
    stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "hello?"))
        .unwrap();
    let (status, text, _) = turn_end(&mut rx).await;
    assert_eq!((status, text.as_str()), (TurnStatus::Ok, "ok"));
}

/// The next turn's end: status, text and error (within a generous 30 s).
async fn turn_end(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<StageEvent>,
) -> (TurnStatus, String, Option<String>) {
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("the turn ends by itself")
            .unwrap();
        if let StageEvent::Turn {
            event:
                TurnEvent::TurnEnd {
                    status,
                    text,
                    error,
                    ..
                },
            ..
        } = ev
        {
            return (status, text, error);
        }
    }
}
