//! What was found running `yui turn` against real servers (llmock, aimock, LiteLLM,
//! llama-server), each a named test against the scripted server on 127.0.0.1: a cut stream is
//! no complete answer; a server that refuses `previous_response_id` does not break Responses for
//! good; the waits come from settings.

use crate::turn_support;

use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;
use turn_support::*;
use yui_core::backend::Transport;
use yui_core::turn::{chain, endpoints, Timeouts, TurnStatus};

const CHAT: Transport = Transport::ChatCompletions;
const RESP: Transport = Transport::Responses;

fn turn_end(events: &[yui_core::turn::TurnEvent]) -> serde_json::Value {
    of_type(events, "turn_end").pop().expect("turn_end")
}

#[tokio::test]
async fn cut_chat_stream_ends_error_runs_no_held_call_and_stores_the_speech_cut() {
    // Half a sentence and a call whose arguments were cut, then the connection closes: no
    // finish_reason, no [DONE].
    let srv = ScriptServer::start(vec![Reply::Sse(vec![
        c_text("I think you are "),
        c_call(0, "call_1", "lookup", r#"{"q":"#),
    ])])
    .await;
    let h = Harness::new();
    let (reg, _, lookups) = express_and_lookup();
    let (events, out) = h.run(&h.request(&srv.base_url, CHAT, "hi"), &reg).await;
    assert_eq!(out.status, TurnStatus::Error);
    let end = turn_end(&events);
    assert_eq!(end["status"], "error");
    assert!(
        end["error"].as_str().unwrap().contains("reply was cut off"),
        "{end}"
    );
    // The text so far stays visible…
    assert_eq!(
        of_type(&events, "speech"),
        vec![json!({"type":"speech","delta":"I think you are "})]
    );
    assert_eq!(end["text"], "I think you are ");
    // …no held call ran and no round trip went out…
    assert_eq!(lookups.load(Ordering::SeqCst), 0);
    assert!(of_type(&events, "tool_call").is_empty());
    assert_eq!(srv.bodies().len(), 1);
    // …and the speech is stored, marked cut: never sent back as history.
    assert_eq!(
        h.transcript(),
        vec![
            ("user".into(), "hi".into()),
            ("assistant".into(), "I think you are ".into())
        ]
    );
    assert_eq!(h.history(), vec![("user".into(), "hi".into())]);
    let srv2 = ScriptServer::start(vec![chat_say("ok")]).await;
    let (_, out2) = h.run(&h.request(&srv2.base_url, CHAT, "again"), &reg).await;
    assert_eq!(out2.status, TurnStatus::Ok);
    let msgs = srv2.bodies()[0]["messages"].clone();
    assert_eq!(
        msgs,
        json!([{"role":"user","content":"hi"},{"role":"user","content":"again"}])
    );
}

#[tokio::test]
async fn cut_chat_stream_after_text_only_is_no_silent_ok() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![c_text("Half a sen")])]).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h.run(&h.request(&srv.base_url, CHAT, "hi"), &reg).await;
    assert_eq!(out.status, TurnStatus::Error);
    let srv = ScriptServer::start(vec![Reply::Sse(vec![])]).await;
    let (_, out) = h.run(&h.request(&srv.base_url, CHAT, "hi"), &reg).await;
    assert_eq!(
        out.status,
        TurnStatus::Error,
        "an empty body is cut, not silent"
    );
}

#[tokio::test]
async fn cut_responses_stream_keeps_the_previous_chain_id_and_runs_no_call() {
    let h = Harness::new();
    chain::save(&h.store, "yui", "resp_prev", &[], h.clock.now()).unwrap();
    let mut parts = vec![r_created("resp_cut"), r_text("Half")];
    // The call item is added and its arguments start, then the connection closes.
    parts.push(r_ev(
        json!({"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"lookup","arguments":""}}),
    ));
    parts.push(r_ev(
        json!({"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"{\"q"}),
    ));
    let srv = ScriptServer::start(vec![Reply::Sse(parts)]).await;
    let (reg, _, lookups) = express_and_lookup();
    let (events, out) = h.run(&h.request(&srv.base_url, RESP, "hi"), &reg).await;
    assert_eq!(out.status, TurnStatus::Error);
    assert!(turn_end(&events)["error"]
        .as_str()
        .unwrap()
        .contains("reply was cut off"));
    assert_eq!(lookups.load(Ordering::SeqCst), 0);
    assert_eq!(srv.bodies().len(), 1, "no round trip");
    assert_eq!(
        chain::load(&h.store, "yui").unwrap().unwrap().response_id,
        "resp_prev",
        "the id of a response that never completed is not the chain"
    );
}

#[tokio::test]
async fn responses_refused_previous_response_id_goes_stateless_and_remembers_the_endpoint() {
    let h = Harness::new();
    // A finished exchange in the transcript and a stored chain from it.
    let srv0 = ScriptServer::start(vec![responses_say("resp_1", "Hello there.")]).await;
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h.run(&h.request(&srv0.base_url, RESP, "hi"), &reg).await;
    assert_eq!(out.status, TurnStatus::Ok);
    let refusal = r#"{"error":{"code":400,"message":"llama.cpp does not support 'previous_response_id'","type":"invalid_request_error"}}"#;
    let srv = ScriptServer::start(vec![
        Reply::Status(400, refusal.into()),
        responses_say("resp_2", "Still here."),
        responses_say("resp_3", "Yes."),
    ])
    .await;
    // The chain belongs to this preset, not to an endpoint: the new server gets it first.
    let (_, out) = h
        .run(&h.request(&srv.base_url, RESP, "are you there?"), &reg)
        .await;
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    assert_eq!(out.text, "Still here.");
    let bodies = srv.bodies();
    assert_eq!(bodies[0]["previous_response_id"], "resp_1");
    assert!(bodies[1].get("previous_response_id").is_none());
    assert_eq!(
        bodies[1]["input"],
        json!([
            said("user", "hi"),
            said("assistant", "Hello there."),
            {"role":"user","content":"are you there?"}
        ]),
        "the retry carries the conversation rebuilt from the transcript"
    );
    assert!(!endpoints::chains(&h.store, &srv.base_url, "m").unwrap());
    assert!(chain::load(&h.store, "yui").unwrap().is_none());
    // The next turn goes stateless at once: one request, no id.
    let (_, out) = h.run(&h.request(&srv.base_url, RESP, "good"), &reg).await;
    assert_eq!(out.status, TurnStatus::Ok);
    let bodies = srv.bodies();
    assert_eq!(bodies.len(), 3);
    assert!(bodies[2].get("previous_response_id").is_none());
    assert_eq!(bodies[2]["input"].as_array().unwrap().len(), 5);
    // Another endpoint still chains.
    assert!(endpoints::chains(&h.store, &srv0.base_url, "m").unwrap());
}

/// A line of history as the stateless Responses request carries it: a typed message item.
fn said(role: &str, text: &str) -> serde_json::Value {
    let part = if role == "user" {
        "input_text"
    } else {
        "output_text"
    };
    json!({"type":"message","role":role,"content":[{"type":part,"text":text}]})
}

/// Found as a user would, against llama-server: turn 1 chains, turn 2 is refused for
/// `previous_response_id` and retried stateless, and turn 3 (the endpoint now remembered as
/// refusing) still carries the whole conversation, as typed message items: llama.cpp refuses
/// an assistant item without `"type": "message"` ("Cannot determine type of 'item'").
#[tokio::test]
async fn responses_forgets_nothing_after_a_refused_chain_and_sends_typed_history() {
    let h = Harness::new();
    let refusal = r#"{"error":{"code":400,"message":"llama.cpp does not support 'previous_response_id'.","type":"invalid_request_error"}}"#;
    let srv = ScriptServer::start(vec![
        responses_say("resp_1", "Hello Robin."),
        Reply::Status(400, refusal.into()),
        responses_say("resp_2", "Noted."),
        responses_say("resp_3", "You are Robin."),
    ])
    .await;
    let (reg, _, _) = express_and_lookup();
    for msg in ["my name is Robin", "second", "third"] {
        let (_, out) = h.run(&h.request(&srv.base_url, RESP, msg), &reg).await;
        assert_eq!(out.status, TurnStatus::Ok, "{msg}: {:?}", out.error);
    }
    let bodies = srv.bodies();
    assert_eq!(bodies.len(), 4);
    assert_eq!(bodies[1]["previous_response_id"], "resp_1");
    let turn2 = json!([
        said("user", "my name is Robin"),
        said("assistant", "Hello Robin."),
        {"role":"user","content":"second"}
    ]);
    assert_eq!(bodies[2]["input"], turn2, "the stateless retry");
    assert!(bodies[3].get("previous_response_id").is_none());
    assert_eq!(
        bodies[3]["input"],
        json!([
            said("user", "my name is Robin"),
            said("assistant", "Hello Robin."),
            said("user", "second"),
            said("assistant", "Noted."),
            {"role":"user","content":"third"}
        ]),
        "a stateless turn carries the conversation rebuilt from the transcript"
    );
}

/// A Responses request sent without `previous_response_id` for any reason (the server forgot
/// the stored id, a session reset) is stateless too: it carries the conversation rebuilt from
/// the transcript, under the Chat Completions history budget, instead of the bare message.
#[tokio::test]
async fn responses_turn_without_a_chain_carries_the_conversation_under_the_history_budget() {
    let h = Harness::new();
    let srv0 = ScriptServer::start(vec![responses_say("resp_1", "Hello Robin.")]).await;
    let (reg, _, _) = express_and_lookup();
    h.run(&h.request(&srv0.base_url, RESP, "my name is Robin"), &reg)
        .await;
    let gone = r#"{"error":{"message":"Previous response with id 'resp_1' not found."}}"#;
    let srv = ScriptServer::start(vec![
        Reply::Status(404, gone.into()),
        responses_say("resp_2", "Robin."),
        responses_say("resp_3", "Yes."),
    ])
    .await;
    let (_, out) = h
        .run(&h.request(&srv.base_url, RESP, "who am I?"), &reg)
        .await;
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    assert_eq!(
        srv.bodies()[1]["input"],
        json!([
            said("user", "my name is Robin"),
            said("assistant", "Hello Robin."),
            {"role":"user","content":"who am I?"}
        ])
    );
    // After a session reset, under a budget of 2 lines: the last two lines and the message.
    chain::reset(&h.store, "yui").unwrap();
    let mut req = h.request(&srv.base_url, RESP, "again");
    req.history_limit = 2;
    h.run(&req, &reg).await;
    let bodies = srv.bodies();
    assert!(bodies[2].get("previous_response_id").is_none());
    assert_eq!(
        bodies[2]["input"],
        json!([
            said("user", "who am I?"),
            said("assistant", "Robin."),
            {"role":"user","content":"again"}
        ])
    );
}

#[tokio::test]
async fn responses_other_4xx_is_not_taken_for_a_chaining_refusal() {
    let h = Harness::new();
    chain::save(&h.store, "yui", "resp_1", &[], h.clock.now()).unwrap();
    let srv =
        ScriptServer::start(vec![Reply::Status(400, r#"{"error":"bad model"}"#.into())]).await;
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h.run(&h.request(&srv.base_url, RESP, "hi"), &reg).await;
    assert_eq!(out.status, TurnStatus::Error);
    assert_eq!(srv.bodies().len(), 1);
    assert!(endpoints::chains(&h.store, &srv.base_url, "m").unwrap());
    assert_eq!(
        chain::load(&h.store, "yui").unwrap().unwrap().response_id,
        "resp_1"
    );
}

#[tokio::test]
async fn timeouts_come_from_settings_and_the_headers_wait_is_its_own() {
    let h = Harness::new();
    assert_eq!(Timeouts::configured(&h.store), Timeouts::default());
    yui_core::settings::set(
        &h.store,
        "yui.timeouts",
        &json!({"connect_secs": 3, "headers_secs": 1, "stall_secs": 30}),
    )
    .unwrap();
    let t = Timeouts::configured(&h.store);
    assert_eq!(
        (t.connect, t.headers, t.stall),
        (
            Duration::from_secs(3),
            Duration::from_secs(1),
            Duration::from_secs(30)
        )
    );
    assert!(yui_core::settings::set(&h.store, "yui.timeouts", &json!({"stall_secs": 0})).is_err());
    assert!(yui_core::settings::set(&h.store, "yui.timeouts", &json!({"nope": 1})).is_err());
    // A server that never sends headers is given up after headers_secs, not stall_secs.
    let srv = ScriptServer::start(vec![Reply::Hang]).await;
    let (reg, _, _) = express_and_lookup();
    let mut req = h.request(&srv.base_url, CHAT, "hi");
    req.timeouts = t;
    let started = std::time::Instant::now();
    let (_, out) = h.run(&req, &reg).await;
    assert_eq!(out.status, TurnStatus::Error);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        out.error.as_deref(),
        Some("The model stopped answering (nothing for 1 s) — it may still be loading; try again, or pick a smaller model. Settings → Backend")
    );
}
