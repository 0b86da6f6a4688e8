//! A realtime server that accepts the socket, sends `session.created` and never answers
//! `session.update` (the test kit's `RealtimeServer::unconfirmed`): the set-up has a deadline
//! (the stall setting), the turn ends with one plain sentence, the user's words are stored, and
//! the next turn tries again — on a session made for the turn (the CLI) and on a window's
//! long-lived one (the app's seats).

use crate::turn_realtime::rt_req;
use crate::turn_support::*;

use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use yui_core::turn::transport::realtime::{self as realtime, ConnState, RealtimeClient};
use yui_core::turn::{TurnOutcome, TurnRequest, TurnStatus};
use yui_core::WindowKind;
use yui_testkit::realtime::RealtimeServer;

/// What the turn ends with when the set-up's deadline (a 3 s stall) passes.
const NOT_CONFIRMED: &str =
    "the realtime server did not confirm the session in 3 s. Settings → Backend";

/// Far past the 3 s deadline, far short of the old wait (connect + headers, 2 min by default).
const BOUND: Duration = Duration::from_secs(15);

fn req(h: &Harness, url: &str, turn_id: &str, message: &str) -> TurnRequest {
    let mut r = rt_req(h, url, message);
    r.turn_id = turn_id.into();
    // The headers wait is long, as by default: the set-up must not wait for it.
    r.timeouts.headers = Duration::from_secs(120);
    r
}

/// Run one turn with `client` as the window's session; the outcome and how long it took.
async fn seat_turn(
    h: &Harness,
    client: &Arc<RealtimeClient>,
    req: &TurnRequest,
) -> (TurnOutcome, Duration) {
    let (reg, _, _) = express_and_lookup();
    let mut deps = h.deps(&req.timeouts);
    deps.link = yui_core::turn::SeatLink::Realtime(client.clone());
    let (tx, mut rx) = tokio::sync::mpsc::channel(4096);
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let t0 = Instant::now();
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        yui_core::turn::run(&deps, req, &reg, &tx, &CancellationToken::new()),
    )
    .await
    .expect("the turn must end by itself");
    drop(tx);
    drain.await.unwrap();
    (out, t0.elapsed())
}

#[tokio::test]
async fn realtime_unconfirmed_session_ends_the_turn_with_a_plain_sentence_and_the_next_turn_retries(
) {
    let h = Harness::new();
    let srv = RealtimeServer::unconfirmed(Vec::new()).await;
    let (reg, _, _) = express_and_lookup();
    let t0 = Instant::now();
    let (_, out) = h.run(&req(&h, &srv.url, "t1", "are you there"), &reg).await;
    let took = t0.elapsed();
    assert_eq!(out.status, TurnStatus::Error);
    assert_eq!(out.error.as_deref(), Some(NOT_CONFIRMED));
    assert!(took < BOUND, "{took:?}");
    assert!(
        took >= Duration::from_secs(3),
        "the deadline is 3 s: {took:?}"
    );
    // The server got the set-up and nothing of the turn.
    let sent: Vec<String> = srv
        .events()
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("?").to_string())
        .collect();
    assert_eq!(sent, ["session.update"]);
    assert_eq!(
        h.transcript(),
        vec![("user".to_string(), "are you there".to_string())],
        "the user's words are stored"
    );

    // The server confirms from now on: the next turn connects again and gets its answer.
    srv.confirm();
    let (_, out) = h.run(&req(&h, &srv.url, "t2", "hello?"), &reg).await;
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    assert_eq!(out.text, "ok");
}

#[tokio::test]
async fn realtime_window_session_that_is_never_confirmed_ends_each_turn_and_recovers() {
    let h = Harness::new();
    let srv = RealtimeServer::unconfirmed(Vec::new()).await;
    let r = req(&h, &srv.url, "t1", "are you there");
    let client = Arc::new(RealtimeClient::spawn(
        realtime::config(&r, None),
        realtime::session_fn(
            h.store.clone(),
            h.clock.clone(),
            "yui".into(),
            WindowKind::Main,
            false,
        ),
    ));
    let (out, took) = seat_turn(&h, &client, &r).await;
    assert_eq!(out.status, TurnStatus::Error);
    assert_eq!(out.error.as_deref(), Some(NOT_CONFIRMED));
    assert!(took < BOUND, "{took:?}");
    assert_eq!(h.transcript()[0], ("user".into(), "are you there".into()));
    let mut state = client.state();
    assert!(
        matches!(&*state.borrow(), ConnState::Reconnecting { error, .. }
            if error == "the realtime server did not confirm the session in 3 s"),
        "{:?}",
        *state.borrow()
    );

    // The session keeps trying; once the server confirms, it is up and the next turn runs.
    srv.confirm();
    tokio::time::timeout(
        Duration::from_secs(60),
        state.wait_for(|s| *s == ConnState::Connected),
    )
    .await
    .expect("connected again")
    .unwrap();
    let (out, _) = seat_turn(&h, &client, &req(&h, &srv.url, "t2", "hello?")).await;
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    assert_eq!(out.text, "ok");
}
