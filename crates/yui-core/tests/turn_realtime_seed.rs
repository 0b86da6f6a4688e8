//! A new realtime session is seeded with the conversation so far (docs/realtime-transport.md,
//! "History"): after `session.updated` and before the first `response.create`, the history window
//! as `conversation.item.create` messages, in order; once per connection (a second turn sends
//! only its own words), again after a reconnect (with what was said since), nothing for an empty
//! history, and a turn whose words were stored while the session was set up does not send them
//! twice. Against the test kit's scripted realtime server.

use crate::turn_realtime::rt_req;
use crate::turn_support::*;

use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use yui_core::transcript::{self, Role};
use yui_core::turn::transport::realtime::{self as realtime, ConnState, RealtimeClient};
use yui_core::turn::TurnStatus;
use yui_testkit::realtime::{self as rt, RealtimeServer, RtConn};

fn user(text: &str) -> Value {
    json!({"type":"conversation.item.create","item":{"type":"message","role":"user",
        "content":[{"type":"input_text","text":text}]}})
}

fn assistant(text: &str) -> Value {
    json!({"type":"conversation.item.create","item":{"type":"message","role":"assistant",
        "content":[{"type":"output_text","text":text}]}})
}

/// Store a conversation: the user, a reply they spoke over, another character's line, and a
/// reply that never finished (cut: never history).
fn earlier(h: &Harness) {
    let at = h.clock.now();
    let s = &h.store;
    transcript::append(s, "yui", Role::User, "count for me", Some("t0"), at).unwrap();
    transcript::append(s, "yui", Role::Assistant, "one two three", Some("t0"), at).unwrap();
    transcript::interrupt_reply(s, "yui", "t0", "one two").unwrap();
    transcript::append_from(s, "yui", "Kai", "look, a rainbow", Some("t00"), at).unwrap();
    transcript::append_marked(s, "yui", Role::Assistant, "It is", Some("t00"), at, true).unwrap();
}

/// What [`earlier`] seeds, in order.
fn earlier_seed() -> Vec<Value> {
    vec![
        user("count for me"),
        assistant("one two [interrupted by the user]"),
        user("Kai: look, a rainbow"),
    ]
}

fn window_session(h: &Harness, url: &str) -> RealtimeClient {
    let req = rt_req(h, url, "");
    RealtimeClient::spawn(
        realtime::config(&req, None),
        realtime::session_fn(
            h.store.clone(),
            h.clock.clone(),
            "yui".into(),
            yui_core::WindowKind::Main,
            false,
        ),
    )
}

/// The client events until `within` passes quietly.
async fn quiet(c: &mut RtConn, within: Duration) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(v) = c.recv_within(within).await {
        out.push(v);
    }
    out
}

/// One turn of `message` over `client`, the server answering `reply`; the client's events of
/// the turn.
async fn turn_over(
    h: &Harness,
    client: &Arc<RealtimeClient>,
    c: &mut RtConn,
    id: &str,
    message: &str,
    reply: &str,
) -> Vec<Value> {
    let mut req = rt_req(h, "ws://unused", message);
    req.turn_id = id.into();
    let mut deps = h.deps(&req.timeouts);
    deps.link = yui_core::turn::SeatLink::Realtime(client.clone());
    let (reg, _, _) = express_and_lookup();
    let (tx, _rx) = tokio::sync::mpsc::channel(4096);
    let cancel = CancellationToken::new();
    let script = async {
        let mut got = Vec::new();
        loop {
            let v = c.recv().await.expect("the turn's events");
            let last = v["type"] == "response.create";
            got.push(v);
            if last {
                break;
            }
        }
        c.play(&rt::text_reply(&format!("r_{id}"), &[reply]));
        got
    };
    let (out, got) = tokio::join!(yui_core::turn::run(&deps, &req, &reg, &tx, &cancel), script);
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    assert_eq!(out.text, reply);
    got
}

#[tokio::test]
async fn realtime_turn_seeds_its_own_session_with_the_history_before_its_words() {
    let h = Harness::new();
    earlier(&h);
    let srv = RealtimeServer::auto(vec![]).await;
    let req = rt_req(&h, &srv.url, "what now");
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h.run(&req, &reg).await;
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    let ev = srv.events();
    assert_eq!(ev[0]["type"], "session.update");
    let mut want = earlier_seed();
    want.push(user("what now"));
    want.push(json!({"type":"response.create"}));
    assert_eq!(ev[1..].to_vec(), want);
}

#[tokio::test]
async fn realtime_empty_history_seeds_nothing() {
    let h = Harness::new();
    let srv = RealtimeServer::auto(vec![]).await;
    let req = rt_req(&h, &srv.url, "hello");
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h.run(&req, &reg).await;
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    let types: Vec<_> = srv.events().iter().map(|e| e["type"].clone()).collect();
    assert_eq!(
        types,
        json!([
            "session.update",
            "conversation.item.create",
            "response.create"
        ])
        .as_array()
        .unwrap()
        .clone()
    );
    assert_eq!(srv.events()[1], user("hello"));
}

#[tokio::test]
async fn realtime_window_session_is_seeded_once_and_again_after_a_reconnect() {
    let h = Harness::new();
    earlier(&h);
    let mut srv = RealtimeServer::start().await;
    let client = Arc::new(window_session(&h, &srv.url));
    let mut state = client.state();
    let (mut c, _) = srv.accept_session().await;
    // Right after session.updated, before any turn: the history, in order.
    let mut seed = Vec::new();
    for _ in 0..3 {
        seed.push(c.recv().await.unwrap());
    }
    assert_eq!(seed, earlier_seed());
    state
        .wait_for(|s| *s == ConnState::Connected)
        .await
        .unwrap();

    // Two turns: each sends only its own words; the server keeps the conversation.
    let one = turn_over(&h, &client, &mut c, "t1", "one", "fine").await;
    assert_eq!(one, vec![user("one"), json!({"type":"response.create"})]);
    let two = turn_over(&h, &client, &mut c, "t2", "two", "sure").await;
    assert_eq!(two, vec![user("two"), json!({"type":"response.create"})]);
    assert_eq!(
        quiet(&mut c, Duration::from_millis(300)).await,
        Vec::<Value>::new()
    );
    assert_eq!(c.of_type("conversation.item.create").len(), 3 + 2);

    // The socket is lost: the new session starts from the history again, now with both turns.
    c.kill();
    state
        .wait_for(|s| matches!(s, ConnState::Reconnecting { .. }))
        .await
        .unwrap();
    let (mut c2, _) = srv.accept_session().await;
    let mut want = earlier_seed();
    want.extend([
        user("one"),
        assistant("fine"),
        user("two"),
        assistant("sure"),
    ]);
    let mut seed2 = Vec::new();
    for _ in 0..want.len() {
        seed2.push(c2.recv().await.unwrap());
    }
    assert_eq!(seed2, want);
    state
        .wait_for(|s| *s == ConnState::Connected)
        .await
        .unwrap();
    let three = turn_over(&h, &client, &mut c2, "t3", "three", "ok").await;
    assert_eq!(
        three,
        vec![user("three"), json!({"type":"response.create"})]
    );
}

#[tokio::test]
async fn realtime_words_stored_while_the_session_was_set_up_are_not_sent_twice() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let client = Arc::new(window_session(&h, &srv.url));
    let mut req = rt_req(&h, "ws://unused", "are you up");
    req.turn_id = "t9".into();
    let mut deps = h.deps(&req.timeouts);
    deps.link = yui_core::turn::SeatLink::Realtime(client.clone());
    let (reg, _, _) = express_and_lookup();
    let (tx, _rx) = tokio::sync::mpsc::channel(4096);
    let cancel = CancellationToken::new();
    let script = async {
        // The turn stores its words, then waits for the session: set it up only now.
        while h.transcript().is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let (mut c, _) = srv.accept_session().await;
        let got = vec![c.recv().await.unwrap(), c.recv().await.unwrap()];
        c.play(&rt::text_reply("r1", &["yes"]));
        (got, quiet(&mut c, Duration::from_millis(300)).await)
    };
    let (out, (got, after)) =
        tokio::join!(yui_core::turn::run(&deps, &req, &reg, &tx, &cancel), script);
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    assert_eq!(
        got,
        vec![user("are you up"), json!({"type":"response.create"})]
    );
    assert!(after.is_empty(), "{after:?}");
}

#[tokio::test]
async fn realtime_settings_saved_through_the_stage_make_the_session_again_seeded() {
    use yui_core::stage::{BackendSource, Stage, StageOptions};
    let mut srv = RealtimeServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let paths = yui_core::paths::Paths::resolve(Some(dir.path().to_path_buf()));
    let store = yui_core::Store::open(paths.db_path()).unwrap();
    let h = Harness::new();
    let at = h.clock.now();
    transcript::append(&store, "kai", Role::User, "hello Kai", Some("t0"), at).unwrap();
    transcript::append(&store, "kai", Role::Assistant, "hi!", Some("t0"), at).unwrap();
    let backend = rt_req(&h, &srv.url, "").backend;
    let opts = StageOptions {
        backend: BackendSource::Fixed {
            backend,
            timeouts: rt_req(&h, &srv.url, "").timeouts,
        },
        headless: true,
        ..StageOptions::default()
    };
    let (stage, _rx) = Stage::new(store.clone(), h.clock.clone(), paths, opts);
    stage.opened("kai", yui_core::WindowKind::Pet);
    let (mut c1, s1) = srv.accept_session().await;
    assert_eq!(s1["audio"]["output"]["voice"], "alloy");
    let seed = vec![user("hello Kai"), assistant("hi!")];
    assert_eq!(
        vec![c1.recv().await.unwrap(), c1.recv().await.unwrap()],
        seed
    );

    // A bad value: refused in plain words, nothing stored, the session kept.
    let err = stage
        .realtime_settings_set(&json!({"voice": ""}))
        .unwrap_err();
    assert_eq!(err.message, "The realtime voice needs a name, e.g. alloy.");
    assert_eq!(
        yui_core::store::kv::get(&store, "yui.realtime").unwrap(),
        None
    );
    // Saved: a new session with it, seeded again.
    let view = stage
        .realtime_settings_set(&json!({"voice": "marin", "turn_detection": "push_to_talk"}))
        .unwrap();
    assert_eq!(view.settings.voice, "marin");
    assert_eq!(
        yui_core::settings::get(&store, "yui.realtime").unwrap(),
        json!({"voice": "marin", "turn_detection": "push_to_talk", "transcription_model": "whisper-1"})
    );
    let (mut c2, s2) = srv.accept_session().await;
    assert_eq!(
        srv.accepted(),
        2,
        "one new session, none for the refused value"
    );
    assert_eq!(s2["audio"]["output"]["voice"], "marin");
    assert_eq!(s2["audio"]["input"]["turn_detection"], Value::Null);
    assert_eq!(
        vec![c2.recv().await.unwrap(), c2.recv().await.unwrap()],
        seed
    );
}
