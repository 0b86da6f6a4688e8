//! Chat Completions turns against a scripted server: every rule of the contract's round trip,
//! with the exact JSON bodies the client sends and the events it emits.

use crate::turn_support;

use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use turn_support::*;
use yui_core::backend::Transport;
use yui_core::tools::ToolOutput;
use yui_core::turn::{join_speech, TurnStatus, MAX_TOOL_ROUND_TRIPS};

const CHAT: Transport = Transport::ChatCompletions;

fn tools_json(reg: &yui_core::tools::registry::ToolRegistry) -> Value {
    reg.chat_tools().expect("tools")
}

#[tokio::test]
async fn chat_streams_speech_and_ends_ok() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![
        c_text("Hello"),
        c_text(" there."),
        c_finish("stop"),
        done(),
    ])])
    .await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (events, out) = h.run(&h.request(&srv.base_url, CHAT, "hi"), &reg).await;
    assert_eq!(
        as_json(&events),
        vec![
            json!({"type":"speech","delta":"Hello"}),
            json!({"type":"speech","delta":" there."}),
            json!({"type":"turn_end","status":"ok","text":"Hello there."}),
        ]
    );
    assert_eq!(out.status, TurnStatus::Ok);
    assert_eq!(
        srv.bodies(),
        vec![json!({
            "model": "m",
            "stream": true,
            "messages": [{"role":"user","content":"hi"}],
            "tools": tools_json(&reg),
        })]
    );
    assert_eq!(srv.seen()[0].path, "/v1/chat/completions");
    assert_eq!(
        h.transcript(),
        vec![
            ("user".into(), "hi".into()),
            ("assistant".into(), "Hello there.".into())
        ]
    );
}

/// The contract's example: request 2 = the same messages and tools[] plus the assistant message
/// with content and tool_calls, and one tool message.
#[tokio::test]
async fn chat_question_tool_round_trip_sends_contract_request_2() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            raw(r#"data: {"choices":[{"index":0,"delta":{"content":"Let me check."},"finish_reason":null}]}"#),
            raw("\n\n"),
            raw(r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"answer\"}"}}]},"finish_reason":null}]}"#),
            raw("\n\n"),
            raw(r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#),
            raw("\n\n"),
            done(),
        ]),
        Reply::Sse(vec![c_text("It is 42."), c_finish("stop"), done()]),
    ])
    .await;
    let h = Harness::new();
    let (reg, _, lookups) = express_and_lookup();
    let (events, out) = h
        .run(&h.request(&srv.base_url, CHAT, "what is it?"), &reg)
        .await;
    let bodies = srv.bodies();
    assert_eq!(bodies.len(), 2);
    let mut expected2 = bodies[0].clone();
    let msgs = expected2["messages"].as_array_mut().unwrap();
    msgs.push(json!({"role":"assistant","content":"Let me check.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"answer\"}"}}]}));
    msgs.push(json!({"role":"tool","tool_call_id":"call_1","content":"42"}));
    assert_eq!(bodies[1], expected2);
    assert_eq!(bodies[1]["tools"], tools_json(&reg));
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
    assert_eq!(
        as_json(&events),
        vec![
            json!({"type":"speech","delta":"Let me check."}),
            json!({"type":"tool_call","call_id":"call_1","name":"lookup","arguments":"{\"q\":\"answer\"}"}),
            json!({"type":"tool_result","call_id":"call_1","name":"lookup","result":"42","failed":false}),
            json!({"type":"speech","delta":" It is 42."}),
            json!({"type":"turn_end","status":"ok","text":"Let me check. It is 42."}),
        ]
    );
    assert_eq!(out.text, "Let me check. It is 42.");
    // Tool traffic is not stored: the transcript holds the speech only.
    assert_eq!(
        h.transcript(),
        vec![
            ("user".into(), "what is it?".into()),
            ("assistant".into(), "Let me check. It is 42.".into())
        ]
    );
}

/// A response that spoke beside its cue is a complete turn: nothing goes back.
#[tokio::test]
async fn chat_cue_beside_speech_is_a_complete_turn() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![
        c_text("Yay!"),
        c_call(0, "call_e", "generate_express", r#"{"emotion_id":"happy"}"#),
        c_finish("tool_calls"),
        done(),
    ])])
    .await;
    let h = Harness::new();
    let (reg, express, _) = express_and_lookup();
    let (events, out) = h
        .run(&h.request(&srv.base_url, CHAT, "good news"), &reg)
        .await;
    assert_eq!(srv.bodies().len(), 1);
    assert_eq!(express.load(Ordering::SeqCst), 1);
    assert_eq!(
        as_json(&events),
        vec![
            json!({"type":"speech","delta":"Yay!"}),
            json!({"type":"cue","call_id":"call_e","name":"generate_express","emotion_id":"happy"}),
            json!({"type":"tool_call","call_id":"call_e","name":"generate_express","arguments":"{\"emotion_id\":\"happy\"}"}),
            json!({"type":"tool_result","call_id":"call_e","name":"generate_express","result":"ok","failed":false}),
            json!({"type":"turn_end","status":"ok","text":"Yay!"}),
        ]
    );
    assert_eq!(out.status, TurnStatus::Ok);
}

/// Only cue-only tools ran, no text, finish_reason tool_calls: the model waits, results go back
/// (assistant content null).
#[tokio::test]
async fn chat_cue_only_waiting_on_tool_calls_gets_results() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_call(0, "call_e", "generate_express", r#"{"emotion_id":"sad"}"#),
            c_finish("tool_calls"),
            done(),
        ]),
        chat_say("Oh no."),
    ])
    .await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (events, out) = h
        .run(&h.request(&srv.base_url, CHAT, "bad news"), &reg)
        .await;
    let bodies = srv.bodies();
    assert_eq!(bodies.len(), 2);
    let msgs = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(
        msgs[1..].to_vec(),
        vec![
            json!({"role":"assistant","content":null,"tool_calls":[{"id":"call_e","type":"function","function":{"name":"generate_express","arguments":"{\"emotion_id\":\"sad\"}"}}]}),
            json!({"role":"tool","tool_call_id":"call_e","content":"ok"}),
        ]
    );
    // The cue played before the round trip went out: it precedes the second response's speech.
    let kinds: Vec<&str> = events.iter().map(|e| e.kind()).collect();
    assert_eq!(
        kinds,
        vec!["cue", "tool_call", "tool_result", "speech", "turn_end"]
    );
    assert_eq!(out.text, "Oh no.");
}

/// A cue-only response ending on finish_reason stop is a deliberate silence.
#[tokio::test]
async fn chat_cue_only_stop_is_a_deliberate_silence() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![
        c_call(0, "call_e", "generate_express", r#"{"emotion_id":"sad"}"#),
        c_finish("stop"),
        done(),
    ])])
    .await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (events, out) = h.run(&h.request(&srv.base_url, CHAT, "..."), &reg).await;
    assert_eq!(srv.bodies().len(), 1);
    assert_eq!(out.status, TurnStatus::Silent);
    assert_eq!(of_type(&events, "cue").len(), 1);
    assert_eq!(
        of_type(&events, "turn_end"),
        vec![json!({"type":"turn_end","status":"silent","text":""})]
    );
    // A silent turn stores no assistant line.
    assert_eq!(h.transcript(), vec![("user".into(), "...".into())]);
}

/// Fragments accumulate per index and the held calls run in index order once finish_reason
/// arrives (parallel calls, fragments interleaved, index 1 first).
#[tokio::test]
async fn chat_parallel_calls_held_until_finish_and_run_in_index_order() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_call(1, "call_b", "lookup", ""),
            c_call(0, "call_a", "generate_express", ""),
            c_args(1, r#"{"q":"#),
            c_args(0, r#"{"emotion_id""#),
            c_args(1, r#""b"}"#),
            c_args(0, r#":"happy"}"#),
            c_finish("tool_calls"),
            done(),
        ]),
        chat_say("Done."),
    ])
    .await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (events, _) = h.run(&h.request(&srv.base_url, CHAT, "go"), &reg).await;
    let calls = of_type(&events, "tool_call");
    assert_eq!(
        calls,
        vec![
            json!({"type":"tool_call","call_id":"call_a","name":"generate_express","arguments":"{\"emotion_id\":\"happy\"}"}),
            json!({"type":"tool_call","call_id":"call_b","name":"lookup","arguments":"{\"q\":\"b\"}"}),
        ]
    );
    let msgs = srv.bodies()[1]["messages"].as_array().unwrap().clone();
    assert_eq!(
        msgs[1..].to_vec(),
        vec![
            json!({"role":"assistant","content":null,"tool_calls":[
                {"id":"call_a","type":"function","function":{"name":"generate_express","arguments":"{\"emotion_id\":\"happy\"}"}},
                {"id":"call_b","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"b\"}"}}]}),
            json!({"role":"tool","tool_call_id":"call_a","content":"ok"}),
            json!({"role":"tool","tool_call_id":"call_b","content":"42"}),
        ]
    );
}

/// Calls held when the stream ends with `[DONE]` but no finish_reason run at the end of the stream.
#[tokio::test]
async fn chat_calls_run_when_stream_ends_with_done_without_finish_reason() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![
        c_text("Hi!"),
        c_call(0, "call_e", "generate_express", r#"{"emotion_id":"happy"}"#),
        done(),
    ])])
    .await;
    let h = Harness::new();
    let (reg, express, _) = express_and_lookup();
    let (events, out) = h.run(&h.request(&srv.base_url, CHAT, "hey"), &reg).await;
    assert_eq!(express.load(Ordering::SeqCst), 1);
    assert_eq!(of_type(&events, "cue").len(), 1);
    assert_eq!(out.status, TurnStatus::Ok);
}

/// At most MAX_TOOL_ROUND_TRIPS round trips; then the turn closes with the text it has.
#[tokio::test]
async fn chat_round_trips_stop_at_three() {
    assert_eq!(MAX_TOOL_ROUND_TRIPS, 3);
    let ask = |i: usize| {
        Reply::Sse(vec![
            c_text(&format!("Step {i}.")),
            c_call(0, &format!("call_{i}"), "lookup", "{}"),
            c_finish("tool_calls"),
            done(),
        ])
    };
    let srv = ScriptServer::start((1..=6).map(ask).collect()).await;
    let h = Harness::new();
    let (reg, _, lookups) = express_and_lookup();
    let (_, out) = h.run(&h.request(&srv.base_url, CHAT, "loop"), &reg).await;
    assert_eq!(srv.bodies().len(), 1 + MAX_TOOL_ROUND_TRIPS);
    assert_eq!(lookups.load(Ordering::SeqCst), 4);
    assert_eq!(out.text, "Step 1. Step 2. Step 3. Step 4.");
    assert_eq!(out.status, TurnStatus::Ok);
}

#[test]
fn speech_join_rule() {
    assert_eq!(
        join_speech("Let me check.", "It is 42."),
        "Let me check. It is 42."
    );
    assert_eq!(join_speech("見てみます。", "42です"), "見てみます。42です");
    assert_eq!(join_speech("本当！", "はい"), "本当！はい");
    assert_eq!(join_speech("なに？", "はい"), "なに？はい");
    assert_eq!(join_speech("Wait\n", "ok"), "Wait\nok");
    assert_eq!(join_speech("Wait", " ok"), "Wait ok");
    assert_eq!(join_speech("", "ok"), "ok");
    assert_eq!(join_speech("Hm", "ok"), "Hm ok");
}

/// The join rule on the wire: the separator rides on the first delta of the later response.
#[tokio::test]
async fn chat_speech_join_after_full_width_stop_adds_no_space() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_text("見てみます。"),
            c_call(0, "c1", "lookup", "{}"),
            c_finish("tool_calls"),
            done(),
        ]),
        chat_say("42です"),
    ])
    .await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (events, out) = h.run(&h.request(&srv.base_url, CHAT, "?"), &reg).await;
    assert_eq!(out.text, "見てみます。42です");
    let speech: Vec<Value> = of_type(&events, "speech");
    assert_eq!(speech[1], json!({"type":"speech","delta":"42です"}));
}

#[tokio::test]
async fn chat_throwing_tool_answers_error_message() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_call(0, "c1", "throws", "{}"),
            c_finish("tool_calls"),
            done(),
        ]),
        chat_say("Sorry."),
    ])
    .await;
    let h = Harness::new();
    let reg = registry(vec![throws()]);
    let (events, _) = h.run(&h.request(&srv.base_url, CHAT, "do it"), &reg).await;
    assert_eq!(
        of_type(&events, "tool_result"),
        vec![
            json!({"type":"tool_result","call_id":"c1","name":"throws","result":"error: disk on fire","failed":true})
        ]
    );
    let msgs = srv.bodies()[1]["messages"].as_array().unwrap().clone();
    assert_eq!(
        msgs.last().unwrap(),
        &json!({"role":"tool","tool_call_id":"c1","content":"error: disk on fire"})
    );
}

/// Unparseable arguments: not run, no cue, `error: arguments JSON parse failed: <message>`; the
/// result goes back under the usual rule (here: a cue-only call, no text, tool_calls).
#[tokio::test]
async fn chat_unparseable_arguments_are_not_run_and_play_no_cue() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_call(0, "c1", "generate_express", r#"{"emotion_id": happy"#),
            c_finish("tool_calls"),
            done(),
        ]),
        chat_say("Hm."),
    ])
    .await;
    let h = Harness::new();
    let (reg, express, _) = express_and_lookup();
    let (events, _) = h.run(&h.request(&srv.base_url, CHAT, "x"), &reg).await;
    assert_eq!(express.load(Ordering::SeqCst), 0);
    assert!(of_type(&events, "cue").is_empty());
    let parse_msg = serde_json::from_str::<Value>(r#"{"emotion_id": happy"#)
        .unwrap_err()
        .to_string();
    let expected = format!("error: arguments JSON parse failed: {parse_msg}");
    assert_eq!(
        of_type(&events, "tool_result"),
        vec![
            json!({"type":"tool_result","call_id":"c1","name":"generate_express","result":expected,"failed":true})
        ]
    );
    let msgs = srv.bodies()[1]["messages"].as_array().unwrap().clone();
    assert_eq!(
        msgs.last().unwrap(),
        &json!({"role":"tool","tool_call_id":"c1","content":expected})
    );
}

/// A name outside the registry runs on the backend: tool status `done` when released, no result.
#[tokio::test]
async fn chat_unknown_tool_is_backend_status_without_result() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![
        c_call(0, "c9", "web_search", r#"{"q":"x"}"#),
        c_finish("tool_calls"),
        done(),
    ])])
    .await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (events, out) = h.run(&h.request(&srv.base_url, CHAT, "search"), &reg).await;
    assert_eq!(srv.bodies().len(), 1);
    assert_eq!(
        as_json(&events),
        vec![
            json!({"type":"tool_status","call_id":"c9","name":"web_search","status":"done"}),
            json!({"type":"turn_end","status":"silent","text":""}),
        ]
    );
    assert_eq!(out.status, TurnStatus::Silent);
}

/// Any name ending in generate_express plays its cue; only the exact registered name is answered.
#[tokio::test]
async fn chat_backend_generate_express_plays_cue_but_is_not_answered() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![
        c_text("Hi."),
        c_call(
            0,
            "m1",
            "mcp_yui_generate_express",
            r#"{"emotion_id":"happy","caption":"bright"}"#,
        ),
        c_finish("tool_calls"),
        done(),
    ])])
    .await;
    let h = Harness::new();
    let (reg, express, _) = express_and_lookup();
    let (events, _) = h.run(&h.request(&srv.base_url, CHAT, "hi"), &reg).await;
    assert_eq!(express.load(Ordering::SeqCst), 0);
    assert_eq!(
        as_json(&events)[1..3].to_vec(),
        vec![
            json!({"type":"cue","call_id":"m1","name":"mcp_yui_generate_express","emotion_id":"happy","caption":"bright"}),
            json!({"type":"tool_status","call_id":"m1","name":"mcp_yui_generate_express","status":"done"}),
        ]
    );
    assert!(of_type(&events, "tool_result").is_empty());
    assert_eq!(srv.bodies().len(), 1);
}

/// An image result: text + note in the tool message, then one image-only user message after all
/// tool messages of the round.
#[tokio::test]
async fn chat_image_result_follows_in_one_user_message() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_call(0, "c1", "look", "{}"),
            c_call(1, "c2", "lookup", "{}"),
            c_finish("tool_calls"),
            done(),
        ]),
        chat_say("I see."),
    ])
    .await;
    let h = Harness::new();
    let look = Answer {
        name: "look",
        result: ToolOutput::Images {
            text: "screenshot of display 1".into(),
            images: vec!["data:image/jpeg;base64,AAAA".into()],
        },
        calls: Arc::default(),
    };
    let reg = registry(vec![Arc::new(look), Arc::new(Answer::new("lookup", "42"))]);
    let (events, _) = h.run(&h.request(&srv.base_url, CHAT, "look"), &reg).await;
    let msgs = srv.bodies()[1]["messages"].as_array().unwrap().clone();
    assert_eq!(
        msgs[2..].to_vec(),
        vec![
            json!({"role":"tool","tool_call_id":"c1","content":"screenshot of display 1\n[the image follows in the next user message]"}),
            json!({"role":"tool","tool_call_id":"c2","content":"42"}),
            json!({"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,AAAA"}}]}),
        ]
    );
    assert_eq!(
        of_type(&events, "tool_result")[0],
        json!({"type":"tool_result","call_id":"c1","name":"look","result":{"text":"screenshot of display 1","images":["data:image/jpeg;base64,AAAA"]},"failed":false})
    );
}

/// The next Chat turn is rebuilt from the transcript: user and assistant speech only.
#[tokio::test]
async fn chat_history_is_rebuilt_from_the_transcript() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_text("Let me check."),
            c_call(0, "c1", "lookup", "{}"),
            c_finish("tool_calls"),
            done(),
        ]),
        chat_say("It is 42."),
        chat_say("You're welcome."),
    ])
    .await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let mut req = h.request(&srv.base_url, CHAT, "what is it?");
    req.instructions = Some("You are Yui.".into());
    h.run(&req, &reg).await;
    req.message = "thanks".into();
    req.turn_id = "t2".into();
    h.run(&req, &reg).await;
    let bodies = srv.bodies();
    assert_eq!(
        bodies[2]["messages"],
        json!([
            {"role":"system","content":"You are Yui."},
            {"role":"user","content":"what is it?"},
            {"role":"assistant","content":"Let me check. It is 42."},
            {"role":"user","content":"thanks"},
        ])
    );
}

/// What real servers send: comments and keep-alives, `event:` lines, a first chunk with role and
/// content null, `finish_reason: ""` on every chunk, usage and timings chunks without choices,
/// numeric ids, no index, arguments as an object, CRLF line ends.
#[tokio::test]
async fn chat_tolerates_real_server_quirks() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            raw(": keep-alive\n\n"),
            raw("event: message\ndata: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null},\"finish_reason\":null}]}\n\n"),
            raw(":\n\n"),
            raw("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\r\n\r\n"),
            raw("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c0\",\"function\":{\"name\":\"lookup\",\"arguments\":\"{\\\"q\\\":\"}}]},\"finish_reason\":\"\"}]}\n\n"),
            raw("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"w\\\"}\"}}]},\"finish_reason\":\"\"}]}\n\n"),
            raw("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":7,\"function\":{\"name\":\"lookup\",\"arguments\":{\"q\":\"z\"}}}]}}]}\n\n"),
            raw("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n"),
            raw("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"timings\":{\"predicted_ms\":1.5}}\n\n"),
            done(),
        ]),
        chat_say("ok"),
    ])
    .await;
    let h = Harness::new();
    let (reg, _, lookups) = express_and_lookup();
    let (events, out) = h.run(&h.request(&srv.base_url, CHAT, "q"), &reg).await;
    assert_eq!(lookups.load(Ordering::SeqCst), 2);
    assert_eq!(
        of_type(&events, "tool_call"),
        vec![
            json!({"type":"tool_call","call_id":"c0","name":"lookup","arguments":"{\"q\":\"w\"}"}),
            json!({"type":"tool_call","call_id":"7","name":"lookup","arguments":"{\"q\":\"z\"}"}),
        ]
    );
    assert_eq!(out.text, "Hi ok");
    assert_eq!(out.status, TurnStatus::Ok);
}

/// Hermes api-server telemetry on Chat Completions shows as tool status.
#[tokio::test]
async fn chat_hermes_tool_progress_is_tool_status() {
    let srv = ScriptServer::start(vec![Reply::Sse(vec![
        raw("event: hermes.tool.progress\ndata: {\"name\":\"web_search\",\"status\":\"running\"}\n\n"),
        c_text("Found it."),
        c_finish("stop"),
        done(),
    ])])
    .await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (events, _) = h.run(&h.request(&srv.base_url, CHAT, "q"), &reg).await;
    assert_eq!(
        as_json(&events)[0],
        json!({"type":"tool_status","name":"web_search","status":"running"})
    );
}

/// An empty registry sends no `tools` key.
#[tokio::test]
async fn chat_empty_registry_sends_no_tools_key() {
    let srv = ScriptServer::start(vec![chat_say("hi")]).await;
    let h = Harness::new();
    let reg = registry(vec![]);
    h.run(&h.request(&srv.base_url, CHAT, "hi"), &reg).await;
    assert_eq!(
        srv.bodies()[0],
        json!({"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]})
    );
}

/// Whitespace alone is no text: a cue-only response that only emitted a newline and waited on
/// tool_calls still gets its results, with assistant content null.
#[tokio::test]
async fn chat_whitespace_only_response_counts_as_no_text() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_text("\n\n"),
            c_call(0, "c1", "generate_express", r#"{"emotion_id":"happy"}"#),
            c_finish("tool_calls"),
            done(),
        ]),
        chat_say("Hi!"),
    ])
    .await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h.run(&h.request(&srv.base_url, CHAT, "hey"), &reg).await;
    let bodies = srv.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[1]["messages"][1]["content"], Value::Null);
    assert_eq!(out.text, "\n\nHi!");
}

/// Servers that send every whole call with index 0: a new id under a used index is a new call.
#[tokio::test]
async fn chat_whole_calls_all_at_index_zero_are_separate_calls() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_call(0, "call_x", "lookup", r#"{"q":"x"}"#),
            c_call(0, "call_y", "lookup", r#"{"q":"y"}"#),
            c_finish("tool_calls"),
            done(),
        ]),
        chat_say("Both."),
    ])
    .await;
    let h = Harness::new();
    let (reg, _, lookups) = express_and_lookup();
    let (events, _) = h.run(&h.request(&srv.base_url, CHAT, "two"), &reg).await;
    assert_eq!(lookups.load(Ordering::SeqCst), 2);
    assert_eq!(
        of_type(&events, "tool_call"),
        vec![
            json!({"type":"tool_call","call_id":"call_x","name":"lookup","arguments":"{\"q\":\"x\"}"}),
            json!({"type":"tool_call","call_id":"call_y","name":"lookup","arguments":"{\"q\":\"y\"}"}),
        ]
    );
}

/// A call index is the server's number: the largest one, reused by a second call, is no panic.
#[tokio::test]
async fn chat_largest_call_index_reused_is_two_calls() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_call(usize::MAX, "call_x", "lookup", r#"{"q":"x"}"#),
            c_call(usize::MAX, "call_y", "lookup", r#"{"q":"y"}"#),
            c_finish("tool_calls"),
            done(),
        ]),
        chat_say("Both."),
    ])
    .await;
    let h = Harness::new();
    let (reg, _, lookups) = express_and_lookup();
    let (_, out) = h.run(&h.request(&srv.base_url, CHAT, "two"), &reg).await;
    assert_eq!(lookups.load(Ordering::SeqCst), 2);
    assert_eq!(out.status, TurnStatus::Ok);
    assert_eq!(out.text, "Both.");
}
