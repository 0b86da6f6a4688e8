//! Faults: a turn never hangs and always ends with one `turn_end` that says what happened, with
//! the evidence; the user's message stays in the transcript whatever the backend did.

use crate::turn_support;

use serde_json::json;
use std::time::{Duration, Instant};
use turn_support::*;
use yui_core::backend::Transport;
use yui_core::turn::{self, TurnEvent, TurnStatus};

const CHAT: Transport = Transport::ChatCompletions;
const RESP: Transport = Transport::Responses;
/// What a turn says for a line that is not the transport's JSON (the raw line goes to the log).
const UNREADABLE: &str = "The model server sent a reply I can't read — is it OpenAI-compatible, and is the transport right? Settings → Backend";

fn turn_end(events: &[TurnEvent]) -> serde_json::Value {
    let ends = of_type(events, "turn_end");
    assert_eq!(ends.len(), 1, "exactly one turn_end");
    assert_eq!(
        events.last().unwrap().kind(),
        "turn_end",
        "turn_end is last"
    );
    ends[0].clone()
}

#[tokio::test]
async fn fault_stream_cut_mid_event_is_an_error_with_the_partial_line() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![
        c_text("Hel"),
        raw(r#"data: {"choices":[{"index":0,"delta":{"content":"lo"#),
    ])])
    .await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (events, out) = h.run(&h.request(&srv.base_url, CHAT, "hi"), &reg).await;
    assert_eq!(
        turn_end(&events),
        // Plain words in turn_end; the partial line goes to the log (turn/wording.rs).
        json!({"type":"turn_end","status":"error","text":"Hel","error":
            "The model's reply was cut off in the middle — try again; if it keeps happening, look at the model server's log."})
    );
    assert_eq!(out.status, TurnStatus::Error);
    // The user's message stays; so does what was already said.
    assert_eq!(
        h.transcript(),
        vec![
            ("user".into(), "hi".into()),
            ("assistant".into(), "Hel".into())
        ]
    );
    // …marked cut: it never goes back as history.
    assert_eq!(h.history(), vec![("user".into(), "hi".into())]);
}

#[tokio::test]
async fn fault_invalid_json_data_line_is_an_error_with_the_raw_line() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![
        c_text("Hi"),
        raw("data: {\"choices\": [oops]}\n\n"),
        c_text("never"),
    ])])
    .await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (events, _) = h.run(&h.request(&srv.base_url, CHAT, "hi"), &reg).await;
    let end = turn_end(&events);
    assert_eq!(end["status"], "error");
    assert_eq!(end["error"], UNREADABLE);
    assert_eq!(end["text"], "Hi");
}

#[tokio::test]
async fn fault_invalid_json_on_responses_keeps_the_raw_line() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![raw("data: not json at all\n\n")])]).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h.run(&h.request(&srv.base_url, RESP, "hi"), &reg).await;
    assert_eq!(out.status, TurnStatus::Error);
    assert_eq!(out.error.unwrap(), UNREADABLE);
}

#[tokio::test]
async fn fault_http_500_keeps_status_and_body() {
    let body = r#"{"error":{"message":"model overloaded","type":"server_error"}}"#;
    let srv = ScriptServer::start(vec![Reply::Status(500, body.into())]).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (events, out) = h.run(&h.request(&srv.base_url, CHAT, "hi"), &reg).await;
    assert_eq!(
        turn_end(&events),
        json!({"type":"turn_end","status":"error","text":"","error":"The model server failed (HTTP 500: model overloaded) — try again; if it keeps failing, look at the server's log."})
    );
    assert_eq!(out.status, TurnStatus::Error);
    assert_eq!(h.transcript(), vec![("user".into(), "hi".into())]);
}

#[tokio::test]
async fn fault_dead_backend_is_a_plain_words_error_and_the_message_stays() {
    // A port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}/v1");
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    for transport in [CHAT, RESP] {
        let (events, out) = h
            .run(&h.request(&base, transport, "anyone there?"), &reg)
            .await;
        assert_eq!(
            out.error.clone().unwrap(),
            format!("I can't reach the model at 127.0.0.1:{port} — is the model server running, and is the address right? Settings → Backend")
        );
        assert_eq!(turn_end(&events)["status"], "error");
    }
    assert_eq!(
        h.transcript(),
        vec![
            ("user".into(), "anyone there?".into()),
            ("user".into(), "anyone there?".into())
        ]
    );
}

#[tokio::test]
async fn fault_stalled_stream_ends_the_turn_and_drops_the_connection() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![c_text("Thinking"), Part::Hold])]).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let mut req = h.request(&srv.base_url, CHAT, "hi");
    req.timeouts.stall = Duration::from_millis(300);
    let t0 = Instant::now();
    let (events, out) = h.run(&req, &reg).await;
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert_eq!(
        turn_end(&events),
        json!({"type":"turn_end","status":"error","text":"Thinking","error":"The model stopped answering (nothing for 300 ms) — it may still be loading; try again, or pick a smaller model. Settings → Backend"})
    );
    assert_eq!(out.status, TurnStatus::Error);
    assert!(srv.wait_client_closed(Duration::from_secs(3)).await);
}

#[tokio::test]
async fn fault_server_that_never_answers_headers_stalls_out() {
    let srv = ScriptServer::start(vec![Reply::Hang]).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let mut req = h.request(&srv.base_url, RESP, "hi");
    req.timeouts.headers = Duration::from_millis(300);
    let (_, out) = h.run(&req, &reg).await;
    assert_eq!(out.status, TurnStatus::Error);
    assert_eq!(
        out.error.unwrap(),
        "The model stopped answering (nothing for 300 ms) — it may still be loading; try again, or pick a smaller model. Settings → Backend"
    );
    assert!(srv.wait_client_closed(Duration::from_secs(3)).await);
}

/// Stopping a turn drops the upstream request at once (the server sees the connection close) and
/// the turn ends `stopped`.
#[tokio::test]
async fn cancel_drops_the_upstream_request_and_ends_stopped() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![c_text("Once upon"), Part::Hold])]).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let req = h.request(&srv.base_url, CHAT, "tell me a story");
    let mut handle = turn::start(h.deps(&req.timeouts), req, reg);
    let first = handle.events.recv().await.unwrap();
    assert_eq!(
        first,
        TurnEvent::Speech {
            delta: "Once upon".into()
        }
    );
    assert!(!srv.client_closed.load(std::sync::atomic::Ordering::SeqCst));
    let t0 = Instant::now();
    handle.stop();
    let mut rest = Vec::new();
    while let Some(e) = handle.events.recv().await {
        rest.push(e);
    }
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert_eq!(
        as_json(&rest),
        vec![json!({"type":"turn_end","status":"stopped","text":"Once upon"})]
    );
    assert_eq!(handle.join.await.unwrap().status, TurnStatus::Stopped);
    assert!(
        srv.wait_client_closed(Duration::from_secs(2)).await,
        "server saw the close"
    );
}

/// Stopping while a tool runs: the turn ends `stopped` at once; nothing more is sent.
#[tokio::test]
async fn cancel_during_a_tool_call_ends_stopped() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![
        c_call(0, "c1", "slow", "{}"),
        c_finish("tool_calls"),
        done(),
    ])])
    .await;
    let h = Harness::new();
    let reg = registry(vec![slow(Duration::from_secs(30))]);
    let req = h.request(&srv.base_url, CHAT, "go");
    let mut handle = turn::start(h.deps(&req.timeouts), req, reg);
    let first = handle.events.recv().await.unwrap();
    assert_eq!(first.kind(), "tool_call");
    handle.stop();
    let mut rest = Vec::new();
    while let Some(e) = handle.events.recv().await {
        rest.push(e);
    }
    assert_eq!(
        as_json(&rest),
        vec![json!({"type":"turn_end","status":"stopped","text":""})]
    );
    assert_eq!(srv.bodies().len(), 1);
}

/// A tool past its wait answers for itself and the turn goes on.
#[tokio::test]
async fn fault_tool_past_its_wait_answers_an_error() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_call(0, "c1", "slow", "{}"),
            c_finish("tool_calls"),
            done(),
        ]),
        chat_say("It took too long."),
    ])
    .await;
    let h = Harness::new();
    let reg = registry(vec![slow(Duration::from_millis(200))]);
    let (events, out) = h.run(&h.request(&srv.base_url, CHAT, "go"), &reg).await;
    assert_eq!(
        of_type(&events, "tool_result"),
        vec![
            json!({"type":"tool_result","call_id":"c1","name":"slow","result":"error: no answer within 200 ms","failed":true})
        ]
    );
    assert_eq!(out.status, TurnStatus::Ok);
}

/// An error reported inside the stream (OpenAI style `error` object, or Responses
/// `response.failed`) ends the turn with that body.
#[tokio::test]
async fn fault_error_inside_the_stream_keeps_the_body() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![raw("data: {\"error\":{\"message\":\"context length exceeded\"}}\n\n")]),
        Reply::Sse(vec![
            r_created("resp_1"),
            r_ev(json!({"type":"response.failed","response":{"id":"resp_1","error":{"code":"server_error","message":"boom"}}})),
        ]),
    ])
    .await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h.run(&h.request(&srv.base_url, CHAT, "hi"), &reg).await;
    assert_eq!(
        out.error.unwrap(),
        "The model server reported an error: context length exceeded — try again; if it keeps failing, look at the server's log.",
    );
    let (_, out) = h.run(&h.request(&srv.base_url, RESP, "hi"), &reg).await;
    assert_eq!(
        out.error.unwrap(),
        "The model server reported an error: boom — try again; if it keeps failing, look at the server's log.",
    );
}
