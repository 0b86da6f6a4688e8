//! The realtime transport in the app: a character window whose backend is realtime sends the
//! typed message over the window's session (text mode: voice is off), the reply streams into the
//! bubble and its generate_express cue reaches the character; Settings → Backend shows the
//! transport and its URL, and "Test connection" runs the realtime checks against that server.

use super::{launch_showing, open_settings, read_store, say_in_chat, seed, settings_section};
use serde_json::{json, Value};
use std::time::Duration;
use yui_core::backend::{BackendChange, Transport};
use yui_testkit::realtime::{self as rt, RealtimeServer};

const T: Duration = Duration::from_secs(20);

/// The turn's reply: text, a generate_express call beside it (cue-only: nothing goes back),
/// more text.
fn spoken_reply() -> Vec<Value> {
    let item = "msg_r1";
    let mut v = vec![
        rt::created("r1"),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": item, "type": "message", "role": "assistant", "status": "in_progress", "content": []}}),
        rt::text_delta(item, "Hello "),
    ];
    v.extend(rt::call_events(
        "call_1",
        "generate_express",
        r#"{"emotion_id":"happy"}"#,
    ));
    v.push(rt::text_delta(item, "from the realtime session."));
    v.push(rt::done("r1", "completed"));
    v
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_realtime_backend_answers_in_the_bubble_and_settings_tests_it() {
    let srv = RealtimeServer::auto(vec![
        spoken_reply(),
        // Test connection's checks: a text reply, a ping call, the round trip's reply.
        rt::text_reply("r2", &["OK"]),
        rt::call_reply("r3", &[("c1", "ping", r#"{"word":"hello"}"#)]),
        rt::text_reply("r4", &["pong received"]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let url = srv.url.clone();
    seed(dir.path(), |st| {
        let change = BackendChange {
            // Nothing listens there: every request must go over the realtime URL.
            base_url: Some("http://127.0.0.1:9/v1".into()),
            model: Some("fake-realtime".into()),
            transport: Some(Transport::Realtime),
            realtime_url: Some(Some(url.clone())),
            ..Default::default()
        };
        yui_core::backend::update(st, &change).unwrap();
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    say_in_chat(&s, "#character [data-emotion]", "Hi Yui").await;
    s.wait_script(
        "const b = document.getElementById('bubble'); return !b.hidden && b.textContent === 'Hello from the realtime session.'",
        T,
    )
    .await
    .expect("the realtime reply streams into the bubble");
    s.wait_script(
        "return document.querySelector('#character [data-emotion]').dataset.emotion === 'happy'",
        Duration::from_secs(5),
    )
    .await
    .expect("the generate_express cue reached the character");

    // What went over the socket: a text-mode session declaring the window's tools, the user's
    // words, one response.create, and no continuation after the cue-only call.
    let sent = srv.events();
    let update = sent
        .iter()
        .find(|e| e["type"] == "session.update")
        .expect("a session.update");
    assert_eq!(update["session"]["type"], "realtime", "{update}");
    assert_eq!(
        update["session"]["output_modalities"],
        json!(["text"]),
        "{update}"
    );
    let tools: Vec<&str> = update["session"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"generate_express"), "{tools:?}");
    assert!(
        sent.iter().any(|e| e["type"] == "conversation.item.create"
            && e["item"]["content"][0]["text"] == "Hi Yui"),
        "the user's words went out: {sent:?}"
    );
    let creates = sent
        .iter()
        .filter(|e| e["type"] == "response.create")
        .count();
    assert_eq!(creates, 1, "one response.create, no continuation: {sent:?}");
    assert!(
        !sent
            .iter()
            .any(|e| e["item"]["type"] == "function_call_output"),
        "a cue-only call answers nothing: {sent:?}"
    );

    // Settings → Backend: the transport and its URL as stored; Test connection checks them.
    open_settings(&s).await;
    settings_section(&s, "backend").await;
    let form = s
        .exec(
            "const f = document.getElementById('backend-form').elements; return {t: f.transport.value, u: f.realtime_url.value};",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(form["t"], "realtime", "{form}");
    assert_eq!(form["u"], srv.url.as_str(), "{form}");
    s.click(&s.find("#backend-test").await.unwrap())
        .await
        .unwrap();
    s.wait_script(
        "return document.getElementById('test-report').dataset.state === 'done'",
        Duration::from_secs(60),
    )
    .await
    .expect("the test finishes");
    let checks = s
        .exec(
            "return [...document.querySelectorAll('#test-checks li')].map(li => [li.dataset.check, li.className]);",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(
        checks,
        json!([
            ["realtime_session", "ok"],
            ["realtime_text", "ok"],
            ["realtime_tool_call", "ok"],
            ["round_trip", "ok"]
        ]),
        "{checks}"
    );
    s.delete().await.ok();

    let stored = yui_core::transcript::recent(&read_store(dir.path()), "yui", 10).unwrap();
    let said: Vec<_> = stored.iter().map(|e| e.text.as_str()).collect();
    assert!(said.contains(&"Hi Yui"), "{said:?}");
    assert!(
        said.contains(&"Hello from the realtime session."),
        "{said:?}"
    );
}
