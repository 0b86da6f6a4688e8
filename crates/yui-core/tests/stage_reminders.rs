//! Reminders: the `remind` tool's exact results (the clock passed in), a reminder set by a
//! scripted model over the real turn and rung by the stage's timer within a second of its time,
//! reminders across a restart (one that fell due while YUI was closed is said once, marked
//! late), and the tool declared only where the character's proactive switch is on.

use crate::turn_support::backends;
use chrono::{Duration as Cd, TimeZone, Utc};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;
use yui_core::backend::Transport;
use yui_core::clock::{ManualClock, SharedClock, ShiftedClock};
use yui_core::paths::Paths;
use yui_core::stage::{Origin, Stage, StageEvent, StageOptions, UserTurn, Window};
use yui_core::tools::registry::{RegistryEnv, ToolRegistry};
use yui_core::tools::remind::Remind;
use yui_core::tools::{CallScope, ClientTool, ToolContext};
use yui_core::turn::{TurnEvent, TurnStatus};
use yui_core::{reminders, Store, WindowKind};
use yui_testkit::sse::*;

fn ctx(store: &Store, clock: SharedClock) -> ToolContext {
    ToolContext {
        store: store.clone(),
        clock,
        preset_id: "yui".into(),
        window: WindowKind::Main,
        turn_id: "t1".into(),
        call: CallScope::default(),
    }
}

async fn call(c: &ToolContext, args: Value) -> String {
    Remind
        .call(args, c, Default::default())
        .await
        .unwrap()
        .as_text()
        .to_string()
}

#[tokio::test]
async fn remind_answers_the_exact_strings_and_stores_what_it_promised() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("yui.db")).unwrap();
    // Monday 2026-12-07 14:00 at UTC+01:00.
    let now = Utc.with_ymd_and_hms(2026, 12, 7, 13, 0, 0).unwrap();
    let clock: SharedClock = Arc::new(ManualClock::new(now, 3600));
    let c = ctx(&store, clock.clone());
    let cases: &[(Value, &str)] = &[
        (
            json!({"in_minutes": 30, "text": "tea"}),
            "ok: reminder set for 14:30",
        ),
        (
            json!({"at": "09:15", "text": "stand-up"}),
            "ok: reminder set for tomorrow 09:15",
        ),
        (
            json!({"at": "2026-12-09 18:00", "text": "call mum"}),
            "ok: reminder set for 2026-12-09 18:00",
        ),
        (
            json!({"at": "14:45", "text": "  stretch  "}),
            "ok: reminder set for 14:45",
        ),
        (json!({"in_minutes": 5}), "error: missing field text"),
        (
            json!({"in_minutes": 5, "text": 3}),
            "error: invalid field text",
        ),
        (
            json!({"in_minutes": 5, "text": "   "}),
            "error: invalid field text",
        ),
        (
            json!({"in_minutes": 5, "text": "x".repeat(201)}),
            "error: invalid field text",
        ),
        (json!({"text": "tea"}), "error: give in_minutes or at"),
        (
            json!({"text": "tea", "in_minutes": 5, "at": "15:00"}),
            "error: give in_minutes or at, not both",
        ),
        (
            json!({"text": "tea", "in_minutes": 0}),
            "error: invalid field in_minutes",
        ),
        (
            json!({"text": "tea", "in_minutes": -3}),
            "error: invalid field in_minutes",
        ),
        (
            json!({"text": "tea", "in_minutes": "ten"}),
            "error: invalid field in_minutes",
        ),
        (
            json!({"text": "tea", "in_minutes": 10081}),
            "error: invalid field in_minutes",
        ),
        (
            json!({"text": "tea", "at": "25:00"}),
            "error: invalid field at",
        ),
        (
            json!({"text": "tea", "at": "2026-12-07 13:00"}),
            "error: invalid field at",
        ),
        (
            json!({"text": "tea", "at": "2027-01-30 13:00"}),
            "error: invalid field at",
        ),
        (
            json!({"text": "tea", "at": 1400}),
            "error: invalid field at",
        ),
        (json!("not an object"), "error: missing field text"),
    ];
    for (args, want) in cases {
        assert_eq!(call(&c, args.clone()).await, *want, "{args}");
    }
    let got: Vec<_> = reminders::pending_of(&store, "yui")
        .unwrap()
        .into_iter()
        .map(|r| (r.text, r.due_at))
        .collect();
    assert_eq!(
        got,
        [
            ("tea".to_string(), now + Cd::minutes(30)),
            ("stretch".to_string(), now + Cd::minutes(45)),
            ("stand-up".to_string(), now + Cd::minutes(19 * 60 + 15)),
            (
                "call mum".to_string(),
                now + Cd::minutes(2 * 24 * 60 + 4 * 60)
            ),
        ]
    );
    // Twenty waiting is the most.
    for i in 0..16 {
        let args = json!({"in_minutes": 60 + i, "text": "more"});
        assert!(call(&c, args).await.starts_with("ok: "));
    }
    let args = json!({"in_minutes": 5, "text": "one too many"});
    assert_eq!(call(&c, args).await, "error: too many reminders");
    // The switch is read when the call runs.
    yui_core::manners::set_character(&store, "yui", false).unwrap();
    let args = json!({"in_minutes": 5, "text": "tea"});
    assert_eq!(call(&c, args).await, "error: proactive turns are off");
}

#[test]
fn remind_is_declared_only_where_the_proactive_switch_is_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("yui.db")).unwrap();
    let names = |kind| {
        let env = RegistryEnv::load(&store, "yui", kind).unwrap();
        let reg = ToolRegistry::for_window(&env).unwrap();
        reg.names()
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    assert!(names(WindowKind::Main).contains(&"remind".to_string()));
    assert!(names(WindowKind::Pet).contains(&"remind".to_string()));
    assert!(!names(WindowKind::Phone).contains(&"remind".to_string()));
    yui_core::manners::set_character(&store, "yui", false).unwrap();
    assert!(!names(WindowKind::Main).contains(&"remind".to_string()));
    // The device-wide switches change nothing in the declared set.
    yui_core::manners::set_character(&store, "yui", true).unwrap();
    let before = names(WindowKind::Main);
    yui_core::settings::set_switch(&store, yui_core::settings::BROWSER, true).unwrap();
    assert_eq!(names(WindowKind::Main), before);
}

fn stage_on(
    dir: &std::path::Path,
    base_url: &str,
) -> (Store, Stage, UnboundedReceiver<StageEvent>) {
    let paths = Paths::resolve(Some(dir.to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let opts = StageOptions {
        backend: backends::fixed(Transport::ChatCompletions, base_url),
        headless: true,
        ..StageOptions::default()
    };
    let (stage, rx) = Stage::new(
        store.clone(),
        Arc::new(ShiftedClock::at_hour(12)),
        paths,
        opts,
    );
    (store, stage, rx)
}

/// The next turn end: origin, status, text.
async fn turn_end(rx: &mut UnboundedReceiver<StageEvent>) -> (Origin, TurnStatus, String) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let ev = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("a turn ended in time")
            .expect("stage alive");
        if let StageEvent::Turn {
            origin,
            event: TurnEvent::TurnEnd { status, text, .. },
            ..
        } = ev
        {
            return (origin, status, text);
        }
    }
}

fn last_user(body: &Value) -> String {
    let msgs = body["messages"].as_array().unwrap();
    let m = msgs.iter().rev().find(|m| m["role"] == "user").unwrap();
    m["content"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn a_reminder_set_by_the_model_rings_within_a_second_of_its_time() {
    let server = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_text("Sure, I'll tell you."),
            c_call(
                0,
                "call_r",
                "remind",
                &json!({"in_minutes": 0.05, "text": "the tea is ready"}).to_string(),
            ),
            c_finish("tool_calls"),
            done(),
        ]),
        Reply::Sse(vec![c_finish("stop"), done()]),
        chat_say("Your tea is ready!"),
    ])
    .await;
    let mut requests = server.requests();
    let dir = tempfile::tempdir().unwrap();
    let (store, stage, mut rx) = stage_on(dir.path(), &server.base_url);
    stage.window_opened(Window::Main);
    stage
        .user_turn(UserTurn::to(
            "yui",
            WindowKind::Main,
            "remind me of the tea in 3 s",
        ))
        .unwrap();
    assert_eq!(turn_end(&mut rx).await.1, TurnStatus::Ok);
    let r = reminders::pending_of(&store, "yui").unwrap();
    assert_eq!(r.len(), 1, "{r:?}");
    // The tool's result went back to the model.
    let bodies = server.bodies();
    let result = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .clone();
    assert!(
        result
            .as_str()
            .unwrap()
            .starts_with("ok: reminder set for "),
        "{result}"
    );
    // The third request is the reminder's turn; it came at most a second after the due time.
    for _ in 0..2 {
        requests.recv().await.unwrap();
    }
    tokio::time::timeout(Duration::from_secs(10), requests.recv())
        .await
        .expect("the reminder rang")
        .unwrap();
    let late = Utc::now() - r[0].due_at;
    println!(
        "reminder turn sent {} ms after its due time",
        late.num_milliseconds()
    );
    assert!(late >= Cd::zero() && late <= Cd::seconds(1), "{late}");
    let (origin, status, text) = turn_end(&mut rx).await;
    assert_eq!(
        (status, text.as_str()),
        (TurnStatus::Ok, "Your tea is ready!")
    );
    let Origin::Proactive { trigger, reason } = origin else {
        panic!("{origin:?}")
    };
    assert_eq!(trigger, "reminder");
    assert!(reason.ends_with(": \"the tea is ready\""), "{reason}");
    assert!(!reason.contains("late"), "{reason}");
    assert!(last_user(&server.bodies()[2]).contains("\nproactive: reminder you set, due "));
    assert!(reminders::said_at(&store, r[0].id).unwrap().is_some());
}

#[tokio::test]
async fn a_reminder_due_while_yui_was_closed_is_said_once_at_start_marked_late() {
    let server = ScriptServer::start(vec![chat_say("Oh! I should have told you: tea.")]).await;
    let dir = tempfile::tempdir().unwrap();
    let id = {
        // YUI ran, a reminder was set for a moment that passes while it is closed.
        let (store, _stage, _rx) = stage_on(dir.path(), &server.base_url);
        let now = Utc::now();
        reminders::add(
            &store,
            "yui",
            "tea",
            now - Cd::minutes(5),
            now - Cd::minutes(10),
        )
        .unwrap()
        .id
    };
    let (store, stage, mut rx) = stage_on(dir.path(), &server.base_url);
    let started = Instant::now();
    stage.window_opened(Window::Main);
    let (origin, status, _) = turn_end(&mut rx).await;
    assert_eq!(status, TurnStatus::Ok);
    let Origin::Proactive { reason, .. } = origin else {
        panic!("{origin:?}")
    };
    assert!(
        reason.contains(", late (YUI was closed then): \"tea\""),
        "{reason}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(reminders::said_at(&store, id).unwrap().is_some());
    drop((stage, rx, store));
    // The next start says nothing: it was said once.
    let (_store, stage, mut rx) = stage_on(dir.path(), &server.base_url);
    stage.window_opened(Window::Main);
    let more = tokio::time::timeout(Duration::from_millis(800), async {
        loop {
            if let Some(StageEvent::Turn { .. }) = rx.recv().await {
                return;
            }
        }
    })
    .await;
    assert!(more.is_err(), "no second turn");
    assert_eq!(server.bodies().len(), 1);
}
