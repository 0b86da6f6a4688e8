//! Proactive turns on the stage against the test kit's scripted Chat Completions server and a
//! real SQLite file: the turn goes through the stage like any other, its client context says
//! why, its stored line is marked `proactive`; `[SILENT]` says nothing; a busy probe holds it
//! (logged), a reminder-like turn waits and goes when the probe clears; a character not on the
//! desktop or switched off is held; the user speaking ends the back-off.

use crate::turn_support::backends;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use yui_core::backend::Transport;
use yui_core::clock::ShiftedClock;
use yui_core::manners::probes::{Busy, Fixed};
use yui_core::manners::rules::Importance;
use yui_core::paths::Paths;
use yui_core::stage::{
    Origin, Outcome, Proactive, Stage, StageEvent, StageOptions, Trigger, Window,
};
use yui_core::turn::{TurnEvent, TurnStatus};
use yui_core::{transcript, Store};
use yui_testkit::sse::*;

struct Rig {
    _dir: tempfile::TempDir,
    store: Store,
    server: ScriptServer,
    stage: Stage,
    rx: UnboundedReceiver<StageEvent>,
    probes: Arc<Fixed>,
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
    let (stage, rx) = Stage::new(
        store.clone(),
        Arc::new(ShiftedClock::at_hour(12)),
        paths,
        opts,
    );
    let probes = Arc::new(Fixed::default());
    stage.set_busy_probes(probes.clone());
    stage.window_opened(Window::Main);
    Rig {
        _dir: dir,
        store,
        server,
        stage,
        rx,
        probes,
    }
}

fn back(min: u64) -> Proactive {
    Proactive {
        preset_id: "yui".into(),
        trigger: Trigger::Back { away_min: min },
        importance: Importance::Normal,
    }
}

fn event(text: &str, importance: Importance) -> Proactive {
    Proactive {
        preset_id: "yui".into(),
        trigger: Trigger::Event { text: text.into() },
        importance,
    }
}

/// The next turn end: its origin, status and text.
pub(crate) async fn turn_end(
    rx: &mut UnboundedReceiver<StageEvent>,
) -> (Origin, TurnStatus, String) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let ev = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("the turn ended in time")
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

/// The next list of waiting turns the windows hear.
async fn waiting_event(rx: &mut UnboundedReceiver<StageEvent>) -> Vec<yui_core::stage::Waiting> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let ev = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("a waiting event in time")
            .expect("stage alive");
        if let StageEvent::Waiting { waiting } = ev {
            return waiting;
        }
    }
}

/// The last user message a request carries (its client context block and words).
pub(crate) fn last_user(body: &Value) -> String {
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
async fn a_proactive_turn_goes_through_the_stage_with_its_reason_in_the_client_context() {
    let mut r = rig(vec![chat_say("Welcome back! Tea?")]).await;
    let out = r.stage.proactive(back(42));
    assert!(matches!(out, Outcome::Went { .. }), "{out:?}");
    let (origin, status, text) = turn_end(&mut r.rx).await;
    assert_eq!(
        origin,
        Origin::Proactive {
            trigger: "back".into(),
            reason: "user back after 42 min".into()
        }
    );
    assert_eq!(
        (status, text.as_str()),
        (TurnStatus::Ok, "Welcome back! Tea?")
    );
    let sent = last_user(&r.server.bodies()[0]);
    assert!(
        sent.contains("\nproactive: user back after 42 min\nproactive: nobody asked you; say something short that fits, or reply exactly [SILENT] to say nothing\n[/client context]"),
        "{sent}"
    );
    // The request carries the block alone: nobody typed anything.
    assert!(sent.ends_with("[/client context]"), "{sent}");
    let lines = transcript::lines(&r.store, "yui", 10).unwrap();
    let got: Vec<_> = lines
        .iter()
        .map(|e| (e.role.as_str(), e.speaker.as_deref(), e.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("user", Some("proactive"), "user back after 42 min"),
            ("assistant", None, "Welcome back! Tea?")
        ]
    );
}

#[tokio::test]
async fn a_silent_answer_says_nothing_and_gives_its_place_in_the_budget_back() {
    let mut r = rig(vec![chat_say("[SILENT]"), chat_say("Done!")]).await;
    yui_core::settings::set(&r.store, "yui.proactive.cooldown_min", &0.into()).unwrap();
    yui_core::settings::set(&r.store, "yui.proactive.per_hour", &1.into()).unwrap();
    r.stage
        .proactive(event("the build finished", Importance::Normal));
    let (_, status, text) = turn_end(&mut r.rx).await;
    assert_eq!((status, text.as_str()), (TurnStatus::Silent, ""));
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The silent turn did not use the one turn of the hour.
    let out = r
        .stage
        .proactive(event("the tests passed", Importance::Normal));
    assert!(matches!(out, Outcome::Went { .. }), "{out:?}");
    assert_eq!(turn_end(&mut r.rx).await.1, TurnStatus::Ok);
    tokio::time::sleep(Duration::from_millis(100)).await;
    // That one did.
    let out = r.stage.proactive(event("lint clean", Importance::Normal));
    assert_eq!(
        out,
        Outcome::Waiting {
            reason: "held: budget (1 an hour)".into()
        }
    );
    let view = r.stage.manners_view();
    assert_eq!(view.held[0].reason, "held: budget (1 an hour)");
    assert_eq!(view.waiting.len(), 1);
}

#[tokio::test]
async fn a_fullscreen_window_holds_a_high_importance_event_until_it_closes() {
    let mut r = rig(vec![chat_say("The deploy failed, sorry.")]).await;
    r.probes.set(vec![Busy::Fullscreen]);
    let out = r.stage.proactive(event("deploy failed", Importance::High));
    assert_eq!(
        out,
        Outcome::Waiting {
            reason: "held: fullscreen window".into()
        }
    );
    // The badge's source: the windows hear that one turn waits, and why.
    let waiting = waiting_event(&mut r.rx).await;
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].turn.preset_id, "yui");
    let view = r.stage.manners_view();
    assert_eq!(view.waiting.len(), 1);
    assert_eq!(view.waiting[0].reason, "held: fullscreen window");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(r.server.bodies().is_empty(), "nothing was sent while held");
    // The window closes: the probes' change signal (the desktop host's window events in the
    // app) wakes the stage, and the turn goes without waiting for the minute's recheck.
    r.probes.set(vec![]);
    let closed = std::time::Instant::now();
    assert!(waiting_event(&mut r.rx).await.is_empty(), "the badge goes");
    let (origin, status, _) = turn_end(&mut r.rx).await;
    assert!(
        closed.elapsed() < Duration::from_secs(10),
        "said {:?} after the window closed",
        closed.elapsed()
    );
    assert_eq!(status, TurnStatus::Ok);
    assert_eq!(
        origin,
        Origin::Proactive {
            trigger: "events".into(),
            reason: "event from another program (importance high): \"deploy failed\"".into()
        }
    );
    assert!(r.stage.manners_view().waiting.is_empty());
    // A moment-bound trigger is dropped, not queued.
    r.probes.set(vec![Busy::Typing]);
    assert_eq!(
        r.stage.proactive(back(30)),
        Outcome::Dropped {
            reason: "held: user typing".into()
        }
    );
}

#[tokio::test]
async fn a_character_switched_off_or_not_on_the_desktop_is_held() {
    let r = rig(vec![]).await;
    yui_core::manners::set_character(&r.store, "yui", false).unwrap();
    assert_eq!(
        r.stage.proactive(back(25)),
        Outcome::Dropped {
            reason: "held: proactive turns off for this character".into()
        }
    );
    let kai = Proactive {
        preset_id: "kai".into(),
        ..back(25)
    };
    assert_eq!(
        r.stage.proactive(kai),
        Outcome::Dropped {
            reason: "held: character not on the desktop".into()
        }
    );
    yui_core::settings::set(
        &r.store,
        "yui.proactive.triggers",
        &serde_json::json!({"back": false}),
    )
    .unwrap();
    yui_core::manners::set_character(&r.store, "yui", true).unwrap();
    assert_eq!(
        r.stage.proactive(back(25)),
        Outcome::Dropped {
            reason: "held: trigger off".into()
        }
    );
}

#[tokio::test]
async fn the_manners_page_stores_its_changes_and_refuses_other_keys() {
    let r = rig(vec![]).await;
    let page = r.stage.manners_page().unwrap();
    assert_eq!(page.settings["yui.proactive.per_hour"], 4);
    assert!(page.characters.iter().all(|c| c.on));
    let page = r
        .stage
        .manners_set("yui.proactive.per_hour", &2.into())
        .unwrap();
    assert_eq!(page.settings["yui.proactive.per_hour"], 2);
    let e = r
        .stage
        .manners_set("yui.proactive.per_hour", &99.into())
        .unwrap_err();
    assert_eq!(
        e.message,
        "yui.proactive.per_hour must be a whole number from 0 to 60"
    );
    let e = r
        .stage
        .manners_set("yui.browser", &serde_json::json!({"enabled": true}))
        .unwrap_err();
    assert_eq!(
        e.message,
        "\"yui.browser\" is not a setting of Settings → Manners"
    );
    let page = r.stage.manners_character("kai", false).unwrap();
    let kai = page.characters.iter().find(|c| c.id == "kai").unwrap();
    assert!(!kai.on);
    // Quiet mode from the tray or the quick controls: a waiting turn stays, now for quiet mode.
    r.probes.set(vec![Busy::Fullscreen]);
    r.stage.proactive(event("deploy failed", Importance::High));
    let page = r.stage.quiet("1h").unwrap();
    assert!(page.live.quiet_until.is_some());
    r.probes.set(vec![]);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let view = r.stage.manners_view();
    assert_eq!(view.waiting.len(), 1);
    assert!(
        view.waiting[0]
            .reason
            .starts_with("held: quiet mode until "),
        "{:?}",
        view.waiting
    );
    assert!(r.stage.quiet("off").unwrap().live.quiet_until.is_none());
}
