//! Responses turns against a scripted server: the round trip, call timing, chaining with stored
//! unanswered outputs, the one retry after a 404, backend tool status.

use crate::turn_support;

use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use turn_support::*;
use yui_core::backend::Transport;
use yui_core::tools::ToolOutput;
use yui_core::turn::{chain, TurnStatus, MAX_TOOL_ROUND_TRIPS};

const RESP: Transport = Transport::Responses;

fn user(t: &str) -> Value {
    json!({"role":"user","content":t})
}

#[tokio::test]
async fn responses_streams_speech_and_turn_end_carries_response_id() {
    let srv = ScriptServer::start(vec![responses_say("resp_1", "Hello.")]).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (events, out) = h.run(&h.request(&srv.base_url, RESP, "hi"), &reg).await;
    assert_eq!(
        as_json(&events),
        vec![
            json!({"type":"speech","delta":"Hello."}),
            json!({"type":"turn_end","status":"ok","text":"Hello.","response_id":"resp_1"}),
        ]
    );
    assert_eq!(out.response_id.as_deref(), Some("resp_1"));
    assert_eq!(srv.seen()[0].path, "/v1/responses");
    assert_eq!(
        srv.bodies()[0],
        json!({"model":"m","stream":true,"input":[user("hi")],"tools":reg.responses_tools().unwrap()})
    );
    // Every declared tool is flattened with strict: false.
    for t in reg.responses_tools().unwrap().as_array().unwrap() {
        assert_eq!(t["type"], "function");
        assert_eq!(t["strict"], false);
        assert!(t.get("function").is_none());
        assert!(t["name"].is_string() && t["parameters"].is_object());
    }
    assert_eq!(
        chain::load(&h.store, "yui").unwrap(),
        Some(chain::Chain {
            response_id: "resp_1".into(),
            pending: vec![]
        })
    );
}

/// The contract's example: request 2 keeps tools[] and the original previous_response_id; input =
/// the original items + assistant text + reasoning + function_call + function_call_output.
#[tokio::test]
async fn responses_question_tool_round_trip_sends_contract_request_2() {
    let mut first = vec![
        r_created("resp_2"),
        r_ev(
            json!({"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}),
        ),
        r_ev(
            json!({"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}),
        ),
        r_text("Let me check."),
    ];
    first.extend(r_call(2, "fc_1", "call_1", "lookup", r#"{"q":"answer"}"#));
    first.push(r_completed("resp_2"));
    let srv = ScriptServer::start(vec![
        Reply::Sse(first),
        responses_say("resp_3", "It is 42."),
    ])
    .await;
    let h = Harness::new();
    chain::save(&h.store, "yui", "resp_1", &[], h.clock.now()).unwrap();
    let (reg, _, lookups) = express_and_lookup();
    let (events, out) = h
        .run(&h.request(&srv.base_url, RESP, "what is it?"), &reg)
        .await;
    let bodies = srv.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["previous_response_id"], "resp_1");
    let mut expected = bodies[0].clone();
    let input = expected["input"].as_array_mut().unwrap();
    input.push(json!({"role":"assistant","content":"Let me check."}));
    input.push(json!({"type":"reasoning","id":"rs_1","summary":[]}));
    input.push(json!({"type":"function_call","call_id":"call_1","name":"lookup","arguments":"{\"q\":\"answer\"}"}));
    input.push(json!({"type":"function_call_output","call_id":"call_1","output":"42"}));
    assert_eq!(bodies[1], expected);
    assert_eq!(lookups.load(Ordering::SeqCst), 1, "the call runs once");
    assert_eq!(out.text, "Let me check. It is 42.");
    assert_eq!(out.response_id.as_deref(), Some("resp_3"));
    assert_eq!(
        of_type(&events, "turn_end"),
        vec![
            json!({"type":"turn_end","status":"ok","text":"Let me check. It is 42.","response_id":"resp_3"})
        ]
    );
    assert_eq!(
        chain::load(&h.store, "yui").unwrap().unwrap().response_id,
        "resp_3"
    );
}

/// A call whose complete arguments are on output_item.added runs there, once, before the
/// following events of the stream (its cue plays at that point).
#[tokio::test]
async fn responses_call_runs_once_on_first_event_with_complete_arguments() {
    let item = json!({"type":"function_call","id":"fc_1","call_id":"call_e","name":"generate_express","arguments":"{\"emotion_id\":\"happy\"}"});
    let srv = ScriptServer::start(vec![Reply::Sse(vec![
        r_created("resp_1"),
        r_ev(json!({"type":"response.output_item.added","output_index":0,"item":item})),
        r_ev(json!({"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":0,"arguments":"{\"emotion_id\":\"happy\"}"})),
        r_ev(json!({"type":"response.output_item.done","output_index":0,"item":item})),
        r_text("Yay!"),
        r_completed("resp_1"),
    ])])
    .await;
    let h = Harness::new();
    let (reg, express, _) = express_and_lookup();
    let (events, _) = h.run(&h.request(&srv.base_url, RESP, "news"), &reg).await;
    assert_eq!(express.load(Ordering::SeqCst), 1);
    let kinds: Vec<&str> = events.iter().map(|e| e.kind()).collect();
    assert_eq!(
        kinds,
        vec!["cue", "tool_call", "tool_result", "speech", "turn_end"]
    );
}

/// A stream that never sends function_call_arguments.done: the arguments come complete on
/// output_item.done and the call runs there.
#[tokio::test]
async fn responses_without_arguments_done_runs_on_output_item_done() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            r_created("resp_1"),
            r_ev(json!({"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"lookup","arguments":""}})),
            r_ev(json!({"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"q\":"})),
            r_ev(json!({"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"lookup","arguments":"{\"q\":\"x\"}"}})),
            r_completed("resp_1"),
        ]),
        responses_say("resp_2", "It is 42."),
    ])
    .await;
    let h = Harness::new();
    let (reg, _, lookups) = express_and_lookup();
    let (events, _) = h.run(&h.request(&srv.base_url, RESP, "q"), &reg).await;
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
    assert_eq!(
        of_type(&events, "tool_call"),
        vec![
            json!({"type":"tool_call","call_id":"call_1","name":"lookup","arguments":"{\"q\":\"x\"}"})
        ]
    );
}

/// Only cue-only tools ran and the response said nothing: the results go back.
#[tokio::test]
async fn responses_cue_only_without_text_gets_results() {
    let mut first = vec![r_created("resp_1")];
    first.extend(r_call(
        0,
        "fc_1",
        "call_e",
        "generate_express",
        r#"{"emotion_id":"sad"}"#,
    ));
    first.push(r_completed("resp_1"));
    let srv = ScriptServer::start(vec![Reply::Sse(first), responses_say("resp_2", "Oh no.")]).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h
        .run(&h.request(&srv.base_url, RESP, "bad news"), &reg)
        .await;
    let bodies = srv.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(
        bodies[1]["input"],
        json!([
            user("bad news"),
            {"type":"function_call","call_id":"call_e","name":"generate_express","arguments":"{\"emotion_id\":\"sad\"}"},
            {"type":"function_call_output","call_id":"call_e","output":"ok"},
        ])
    );
    assert_eq!(out.text, "Oh no.");
    // The last response answered everything: nothing is left pending.
    assert_eq!(
        chain::load(&h.store, "yui").unwrap().unwrap().pending,
        Vec::<Value>::new()
    );
}

/// A cue-only call beside speech is left unanswered: its output is stored with the response id
/// and sent ahead of the next user message with that id.
#[tokio::test]
async fn responses_unanswered_cue_beside_speech_is_stored_and_sent_next_turn() {
    let mut first = vec![r_created("resp_1"), r_text("Yay!")];
    first.extend(r_call(
        1,
        "fc_1",
        "call_e",
        "generate_express",
        r#"{"emotion_id":"happy"}"#,
    ));
    first.push(r_completed("resp_1"));
    let srv = ScriptServer::start(vec![Reply::Sse(first), responses_say("resp_2", "Sure.")]).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h.run(&h.request(&srv.base_url, RESP, "news"), &reg).await;
    assert_eq!(out.status, TurnStatus::Ok);
    assert_eq!(
        srv.bodies().len(),
        1,
        "a response that spoke beside its cue is complete"
    );
    let stored = chain::load(&h.store, "yui").unwrap().unwrap();
    let output = json!({"type":"function_call_output","call_id":"call_e","output":"ok"});
    assert_eq!(
        stored,
        chain::Chain {
            response_id: "resp_1".into(),
            pending: vec![output.clone()]
        }
    );
    // Survives a restart: reopen the store.
    let reopened = yui_core::Store::open(h.store.path()).unwrap();
    assert_eq!(
        chain::load(&reopened, "yui").unwrap().unwrap().pending,
        vec![output.clone()]
    );

    let mut req = h.request(&srv.base_url, RESP, "and?");
    req.turn_id = "t2".into();
    h.run(&req, &reg).await;
    let body = &srv.bodies()[1];
    assert_eq!(body["previous_response_id"], "resp_1");
    assert_eq!(body["input"], json!([output, user("and?")]));
    assert_eq!(
        chain::load(&h.store, "yui").unwrap().unwrap(),
        chain::Chain {
            response_id: "resp_2".into(),
            pending: vec![]
        }
    );
}

/// Past the round-trip cap the turn closes with the text it has; the last response's calls are
/// stored unanswered.
#[tokio::test]
async fn responses_round_trip_cap_stores_unanswered_outputs() {
    let ask = |i: usize| {
        let mut v = vec![
            r_created(&format!("resp_{i}")),
            r_text(&format!("Step {i}.")),
        ];
        v.extend(r_call(
            1,
            &format!("fc_{i}"),
            &format!("call_{i}"),
            "lookup",
            "{}",
        ));
        v.push(r_completed(&format!("resp_{i}")));
        Reply::Sse(v)
    };
    let srv = ScriptServer::start((1..=5).map(ask).collect()).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h.run(&h.request(&srv.base_url, RESP, "loop"), &reg).await;
    assert_eq!(srv.bodies().len(), 1 + MAX_TOOL_ROUND_TRIPS);
    assert_eq!(out.text, "Step 1. Step 2. Step 3. Step 4.");
    assert_eq!(out.response_id.as_deref(), Some("resp_4"));
    assert_eq!(
        chain::load(&h.store, "yui").unwrap().unwrap(),
        chain::Chain {
            response_id: "resp_4".into(),
            pending: vec![json!({"type":"function_call_output","call_id":"call_4","output":"42"})],
        }
    );
}

/// A 404 for the stored id resets the chain with exactly one retry that sends no id (and drops
/// the stored outputs with it).
#[tokio::test]
async fn responses_404_on_previous_response_id_resets_chain_with_one_retry() {
    let srv = ScriptServer::start(vec![
        Reply::Status(404, r#"{"error":{"message":"Previous response with id 'resp_old' not found.","type":"invalid_request_error"}}"#.into()),
        responses_say("resp_new", "Hello again."),
    ])
    .await;
    let h = Harness::new();
    let pending = json!({"type":"function_call_output","call_id":"call_x","output":"ok"});
    chain::save(
        &h.store,
        "yui",
        "resp_old",
        std::slice::from_ref(&pending),
        h.clock.now(),
    )
    .unwrap();
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h.run(&h.request(&srv.base_url, RESP, "hi"), &reg).await;
    let bodies = srv.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["previous_response_id"], "resp_old");
    assert_eq!(bodies[0]["input"], json!([pending, user("hi")]));
    assert!(bodies[1].get("previous_response_id").is_none());
    assert_eq!(bodies[1]["input"], json!([user("hi")]));
    assert_eq!(out.status, TurnStatus::Ok);
    assert_eq!(
        chain::load(&h.store, "yui").unwrap().unwrap().response_id,
        "resp_new"
    );
}

/// A second 404 (or a 404 without a stored id) is an error: only one retry.
#[tokio::test]
async fn responses_second_404_is_an_error() {
    let body = r#"{"error":{"message":"not found"}}"#;
    let srv = ScriptServer::start(vec![
        Reply::Status(404, body.into()),
        Reply::Status(404, body.into()),
        Reply::Status(404, body.into()),
    ])
    .await;
    let h = Harness::new();
    chain::save(&h.store, "yui", "resp_old", &[], h.clock.now()).unwrap();
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h.run(&h.request(&srv.base_url, RESP, "hi"), &reg).await;
    assert_eq!(srv.bodies().len(), 2);
    assert_eq!(out.status, TurnStatus::Error);
    let port = srv
        .base_url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/v1")
        .to_string();
    assert_eq!(
        out.error.unwrap(),
        format!("The server at 127.0.0.1:{port} does not offer the Responses API — choose Chat Completions as the transport. Settings → Backend")
    );
    assert_eq!(chain::load(&h.store, "yui").unwrap(), None);
}

/// Backend-run calls: running when the item is added, done when it completes; no result sent.
#[tokio::test]
async fn responses_backend_tool_status_running_then_done() {
    let mut first = vec![r_created("resp_1")];
    first.extend(r_call(0, "fc_1", "call_w", "web_search", r#"{"q":"x"}"#));
    first.push(r_ev(json!({"type":"response.output_item.added","output_index":1,"item":{"type":"web_search_call","id":"ws_1","status":"in_progress"}})));
    first.push(r_ev(json!({"type":"response.output_item.done","output_index":1,"item":{"type":"web_search_call","id":"ws_1","status":"completed"}})));
    first.push(r_text("Found it."));
    first.push(r_completed("resp_1"));
    let srv = ScriptServer::start(vec![Reply::Sse(first)]).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (events, _) = h.run(&h.request(&srv.base_url, RESP, "search"), &reg).await;
    assert_eq!(
        as_json(&events),
        vec![
            json!({"type":"tool_status","call_id":"call_w","name":"web_search","status":"running"}),
            json!({"type":"tool_status","call_id":"call_w","name":"web_search","status":"done"}),
            json!({"type":"tool_status","call_id":"ws_1","name":"web_search_call","status":"running"}),
            json!({"type":"tool_status","call_id":"ws_1","name":"web_search_call","status":"done"}),
            json!({"type":"speech","delta":"Found it."}),
            json!({"type":"turn_end","status":"ok","text":"Found it.","response_id":"resp_1"}),
        ]
    );
    assert_eq!(srv.bodies().len(), 1);
    assert_eq!(
        chain::load(&h.store, "yui").unwrap().unwrap().pending,
        Vec::<Value>::new()
    );
}

/// A backend-registered mcp_<server>_generate_express plays its cue and is not answered.
#[tokio::test]
async fn responses_backend_generate_express_plays_cue() {
    let mut first = vec![r_created("resp_1"), r_text("Hi.")];
    first.extend(r_call(
        1,
        "fc_1",
        "mcp_1",
        "mcp_broker_generate_express",
        r#"{"motion_id":"wave"}"#,
    ));
    first.push(r_completed("resp_1"));
    let srv = ScriptServer::start(vec![Reply::Sse(first)]).await;
    let h = Harness::new();
    let (reg, express, _) = express_and_lookup();
    let (events, _) = h.run(&h.request(&srv.base_url, RESP, "hi"), &reg).await;
    assert_eq!(express.load(Ordering::SeqCst), 0);
    assert_eq!(
        of_type(&events, "cue"),
        vec![
            json!({"type":"cue","call_id":"mcp_1","name":"mcp_broker_generate_express","motion_id":"wave"})
        ]
    );
    assert!(of_type(&events, "tool_result").is_empty());
}

/// An image result on Responses: output is an input_text part then input_image parts.
#[tokio::test]
async fn responses_image_result_is_an_output_array() {
    let mut first = vec![r_created("resp_1")];
    first.extend(r_call(0, "fc_1", "call_l", "look", r#"{"at":"screen"}"#));
    first.push(r_completed("resp_1"));
    let srv = ScriptServer::start(vec![Reply::Sse(first), responses_say("resp_2", "Nice.")]).await;
    let h = Harness::new();
    let look = Answer {
        name: "look",
        result: ToolOutput::Images {
            text: "screenshot of display 1".into(),
            images: vec![
                "data:image/jpeg;base64,AAAA".into(),
                "data:image/jpeg;base64,BBBB".into(),
            ],
        },
        calls: Arc::default(),
    };
    let reg = registry(vec![Arc::new(look)]);
    h.run(&h.request(&srv.base_url, RESP, "look"), &reg).await;
    let input = srv.bodies()[1]["input"].as_array().unwrap().clone();
    assert_eq!(
        input.last().unwrap(),
        &json!({"type":"function_call_output","call_id":"call_l","output":[
            {"type":"input_text","text":"screenshot of display 1"},
            {"type":"input_image","image_url":"data:image/jpeg;base64,AAAA","detail":"auto"},
            {"type":"input_image","image_url":"data:image/jpeg;base64,BBBB","detail":"auto"},
        ]})
    );
}

/// `data: [DONE]`, comments, `event:` lines and unknown event types are tolerated; a function
/// call only present in response.completed's output still runs.
#[tokio::test]
async fn responses_tolerates_done_unknown_events_and_completed_only_calls() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            raw(": ping\n\n"),
            raw("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\"}}\n\n"),
            r_ev(json!({"type":"response.content_part.added","item_id":"m","part":{"type":"output_text","text":""}})),
            r_ev(json!({"type":"response.reasoning_summary_text.delta","delta":"thinking"})),
            r_ev(json!({"type":"response.completed","response":{"id":"resp_1","output":[{"type":"function_call","id":"fc_9","call_id":"call_9","name":"lookup","arguments":"{}"}],"usage":{"total_tokens":5}}})),
            done(),
        ]),
        responses_say("resp_2", "42."),
    ])
    .await;
    let h = Harness::new();
    let (reg, _, lookups) = express_and_lookup();
    let (_, out) = h.run(&h.request(&srv.base_url, RESP, "q"), &reg).await;
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
    assert_eq!(out.text, "42.");
    assert_eq!(out.response_id.as_deref(), Some("resp_2"));
}

/// A session reset drops the id and its stored outputs together.
#[tokio::test]
async fn responses_session_reset_drops_chain() {
    let h = Harness::new();
    chain::save(
        &h.store,
        "yui",
        "resp_1",
        &[json!({"type":"function_call_output","call_id":"c","output":"ok"})],
        h.clock.now(),
    )
    .unwrap();
    chain::reset(&h.store, "yui").unwrap();
    assert_eq!(chain::load(&h.store, "yui").unwrap(), None);
    let srv = ScriptServer::start(vec![responses_say("resp_9", "Hi.")]).await;
    let (reg, _, _) = express_and_lookup();
    h.run(&h.request(&srv.base_url, RESP, "hi"), &reg).await;
    assert!(srv.bodies()[0].get("previous_response_id").is_none());
    assert_eq!(srv.bodies()[0]["input"], json!([user("hi")]));
}

/// Migration step 5 (`response_chain`) brings a version-4 database up and keeps its data.
#[test]
fn response_chain_migration_upgrades_a_version_4_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("yui.sqlite3");
    {
        let mut c = rusqlite::Connection::open(&path).unwrap();
        yui_core::store::migrations::migrate_to(&mut c, 4).unwrap();
        c.execute(
            "INSERT INTO transcript (preset_id, role, text, at) VALUES ('yui','user','kept','2026-11-30T10:00:00.000Z')",
            [],
        )
        .unwrap();
    }
    let store = yui_core::Store::open(&path).unwrap();
    let version: i64 = store
        .read(|c| Ok(c.query_row("PRAGMA user_version", [], |r| r.get(0))?))
        .unwrap();
    assert!(version >= 5, "migrated to {version}");
    assert_eq!(chain::load(&store, "yui").unwrap(), None);
    let at = chrono::Utc::now();
    chain::save(
        &store,
        "yui",
        "resp_1",
        &[json!({"type":"function_call_output","call_id":"c","output":"ok"})],
        at,
    )
    .unwrap();
    assert_eq!(
        chain::load(&store, "yui").unwrap().unwrap().response_id,
        "resp_1"
    );
    assert_eq!(
        yui_core::transcript::recent(&store, "yui", 5).unwrap()[0].text,
        "kept"
    );
}

/// Parallel calls on Responses: each runs once, in output order; request 2 carries every
/// function_call item, then every output, in that order. A throwing call answers its error and
/// unparseable arguments answer the parse error without running.
#[tokio::test]
async fn responses_parallel_calls_with_a_throw_and_bad_arguments() {
    let mut first = vec![r_created("resp_1")];
    first.extend(r_call(0, "fc_a", "call_a", "lookup", r#"{"q":"a"}"#));
    first.extend(r_call(1, "fc_b", "call_b", "throws", "{}"));
    first.extend(r_call(2, "fc_c", "call_c", "lookup", "{oops"));
    first.push(r_completed("resp_1"));
    let srv = ScriptServer::start(vec![Reply::Sse(first), responses_say("resp_2", "Done.")]).await;
    let h = Harness::new();
    let lookup = Answer::new("lookup", "42");
    let lookups = lookup.calls.clone();
    let reg = registry(vec![Arc::new(lookup), throws()]);
    let (events, out) = h.run(&h.request(&srv.base_url, RESP, "go"), &reg).await;
    assert_eq!(
        lookups.load(Ordering::SeqCst),
        1,
        "the bad-arguments call did not run"
    );
    let parse_msg = serde_json::from_str::<Value>("{oops")
        .unwrap_err()
        .to_string();
    let bad = format!("error: arguments JSON parse failed: {parse_msg}");
    assert_eq!(
        srv.bodies()[1]["input"],
        json!([
            user("go"),
            {"type":"function_call","call_id":"call_a","name":"lookup","arguments":"{\"q\":\"a\"}"},
            {"type":"function_call","call_id":"call_b","name":"throws","arguments":"{}"},
            {"type":"function_call","call_id":"call_c","name":"lookup","arguments":"{oops"},
            {"type":"function_call_output","call_id":"call_a","output":"42"},
            {"type":"function_call_output","call_id":"call_b","output":"error: disk on fire"},
            {"type":"function_call_output","call_id":"call_c","output":bad},
        ])
    );
    let results: Vec<Value> = of_type(&events, "tool_result")
        .into_iter()
        .map(|r| r["result"].clone())
        .collect();
    assert_eq!(
        results,
        vec![json!("42"), json!("error: disk on fire"), json!(bad)]
    );
    assert_eq!(out.text, "Done.");
}

/// The stall watchdog counts only time spent waiting on the server: a tool that runs longer
/// than the stall timeout in the middle of a stream does not end the turn.
#[tokio::test]
async fn responses_tool_longer_than_stall_timeout_does_not_stall_the_stream() {
    let mut first = vec![r_created("resp_1")];
    first.extend(r_call(0, "fc_s", "call_s", "sleeper", "{}"));
    // The rest arrives after the tool finished and after the stall time measured from the last
    // byte, but within the stall time measured from when the reader came back.
    first.push(Part::Sleep(std::time::Duration::from_millis(1200)));
    first.push(r_completed("resp_1"));
    let srv = ScriptServer::start(vec![Reply::Sse(first), responses_say("resp_2", "Ready.")]).await;
    let h = Harness::new();
    let reg = registry(vec![sleeper(std::time::Duration::from_millis(1000))]);
    let mut req = h.request(&srv.base_url, RESP, "go");
    req.timeouts.stall = std::time::Duration::from_millis(500);
    let (_, out) = h.run(&req, &reg).await;
    assert_eq!(out.error, None);
    assert_eq!(out.text, "Ready.");
    assert_eq!(srv.bodies().len(), 2);
}
