//! The realtime transport against the test kit's scripted realtime server on 127.0.0.1: the
//! session per window kind, a text turn, calls and their outputs with exactly one
//! `response.create`, parallel calls, an undeclared tool, arguments that do not parse, a tool
//! past its wait, cue timing against the transcript, the continuation cap, image results, beta
//! names, malformed events and `error` events. Barge-in, stop, a lost socket, a stall and
//! reconnect are in `turn_realtime_session`.

use crate::turn_support;

use serde_json::{json, Value};
use std::time::Duration;
use turn_support::*;
use yui_core::backend::Transport;
use yui_core::tools::registry::{RegistryEnv, ToolRegistry};
use yui_core::tools::ToolOutput;
use yui_core::turn::{TurnEvent, TurnRequest, TurnStatus};
use yui_core::WindowKind;
use yui_testkit::realtime::{self as rt, RealtimeServer, RtConn};

pub fn rt_req(h: &Harness, url: &str, message: &str) -> TurnRequest {
    let mut r = h.request("http://127.0.0.1:9/v1", Transport::Realtime, message);
    r.backend.realtime_url = Some(url.to_string());
    r.timeouts.stall = Duration::from_secs(3);
    r
}

fn real_registry(h: &Harness, window: WindowKind) -> ToolRegistry {
    let env = RegistryEnv::load(&h.store, "yui", window).unwrap();
    ToolRegistry::for_window(&env).unwrap()
}

/// The client events of one connection after the user's turn, until `within` passes quietly.
async fn rest(c: &mut RtConn, within: Duration) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(v) = c.recv_within(within).await {
        out.push(v);
    }
    out
}

fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("?").to_string())
        .collect()
}

#[tokio::test]
async fn realtime_session_update_per_window_kind_declares_the_windows_tools_flat() {
    let h = Harness::new();
    let want: &[(WindowKind, &[&str])] = &[
        (
            WindowKind::Main,
            &[
                "generate_express",
                "rate_relation",
                "address_character",
                "browser",
                "body_action",
                "look",
                "remind",
            ],
        ),
        (
            WindowKind::Pet,
            &[
                "generate_express",
                "rate_relation",
                "address_character",
                "browser",
                "remind",
            ],
        ),
        (
            WindowKind::BrowserBuild,
            &["generate_express", "rate_relation", "address_character"],
        ),
        (WindowKind::Phone, &["generate_express"]),
    ];
    for (kind, tools) in want {
        let mut srv = RealtimeServer::start().await;
        let mut req = rt_req(&h, &srv.url, "hi");
        req.window = *kind;
        req.backend.api_key = Some("sk-rt".into());
        let reg = real_registry(&h, *kind);
        let script = async {
            let (mut c, session) = srv.accept_session().await;
            c.user_turn().await;
            c.play(&rt::text_reply("r1", &["hey"]));
            (c.conn.auth.clone(), c.conn.path.clone(), session)
        };
        let ((_, out), (auth, path, s)) = tokio::join!(h.run(&req, &reg), script);
        assert_eq!(out.status, TurnStatus::Ok, "{kind:?}: {:?}", out.error);
        assert_eq!(auth.as_deref(), Some("Bearer sk-rt"));
        assert_eq!(path, "/v1/realtime?model=m");
        assert_eq!(yui_core::turn::transport::realtime::tool_names(&s), *tools);
        for t in s["tools"].as_array().unwrap() {
            let keys: Vec<&str> = t.as_object().unwrap().keys().map(|k| k.as_str()).collect();
            assert_eq!(keys, ["description", "name", "parameters", "type"], "{t}");
            assert_eq!(t["type"], "function");
            assert_eq!(t["parameters"]["type"], "object");
        }
        assert_eq!(s["type"], "realtime");
        assert_eq!(s["output_modalities"], json!(["text"]));
        assert_eq!(
            s["audio"],
            json!({
                "input": {"format": {"type": "audio/pcm", "rate": 24000},
                          "turn_detection": {"type": "server_vad"},
                          "transcription": {"model": "whisper-1"}},
                "output": {"format": {"type": "audio/pcm", "rate": 24000}, "voice": "alloy"}
            })
        );
        assert_eq!(s["tool_choice"], "auto");
    }
}

#[tokio::test]
async fn realtime_session_carries_the_persona_and_the_client_context_and_push_to_talk() {
    let h = Harness::new();
    yui_core::store::kv::put(
        &h.store,
        "yui.realtime",
        &json!({"voice": "marin", "turn_detection": "push_to_talk", "transcription_model": null}),
    )
    .unwrap();
    let mut srv = RealtimeServer::start().await;
    let backend = rt_req(&h, &srv.url, "").backend;
    let (req, reg) =
        yui_core::turn::prepare(&h.store, &h.clock, "yui", WindowKind::Pet, "hello", backend)
            .unwrap();
    let script = async {
        let (mut c, session) = srv.accept_session().await;
        let text = c.user_turn().await;
        c.play(&rt::text_reply("r1", &["hi"]));
        (session, text)
    };
    let ((_, out), (s, text)) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    // The user's words as typed; the client context is in the instructions.
    assert_eq!(text, "hello");
    let i = s["instructions"].as_str().unwrap();
    assert!(i.contains("[client context]"), "{i}");
    assert!(i.ends_with("[/client context]"), "{i}");
    assert_eq!(s["audio"]["input"]["turn_detection"], Value::Null);
    assert_eq!(s["audio"]["input"]["transcription"], Value::Null);
    assert_eq!(s["audio"]["output"]["voice"], "marin");
}

#[tokio::test]
async fn realtime_text_turn_streams_speech_and_stores_both_sides() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let req = rt_req(&h, &srv.url, "hi there");
    let (reg, _, _) = express_and_lookup();
    let script = async {
        let (mut c, _) = srv.accept_session().await;
        let text = c.user_turn().await;
        c.play(&rt::text_reply("resp_1", &["Hello", " you", "!"]));
        (text, rest(&mut c, Duration::from_millis(300)).await)
    };
    let ((events, out), (text, after)) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(text, "hi there");
    assert_eq!(out.status, TurnStatus::Ok);
    assert_eq!(out.text, "Hello you!");
    assert_eq!(out.response_id.as_deref(), Some("resp_1"));
    let speech: Vec<Value> = of_type(&events, "speech");
    assert_eq!(speech.len(), 3);
    assert!(matches!(events.last(), Some(TurnEvent::TurnEnd { .. })));
    // Nothing more is sent for a response without calls.
    assert!(after.is_empty(), "{after:?}");
    assert_eq!(
        h.transcript(),
        vec![
            ("user".into(), "hi there".into()),
            ("assistant".into(), "Hello you!".into())
        ]
    );
}

#[tokio::test]
async fn realtime_call_is_answered_with_its_output_then_exactly_one_response_create() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let req = rt_req(&h, &srv.url, "what is it");
    let (reg, _, lookups) = express_and_lookup();
    let script = async {
        let (mut c, _) = srv.accept_session().await;
        c.user_turn().await;
        c.play(&rt::call_reply(
            "r1",
            &[("call_1", "lookup", r#"{"q":"it"}"#)],
        ));
        let out = c.recv_type("conversation.item.create").await.unwrap();
        let next = c.recv().await.unwrap();
        c.play(&rt::text_reply("r2", &["It is 42."]));
        let after = rest(&mut c, Duration::from_millis(300)).await;
        (out, next, after)
    };
    let ((_, out), (item, next, after)) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    assert_eq!(lookups.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(
        item,
        json!({"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"call_1","output":"42"}})
    );
    assert_eq!(next, json!({"type":"response.create"}));
    assert!(after.is_empty(), "{after:?}");
    assert_eq!(out.text, "It is 42.");
    assert_eq!(out.response_id.as_deref(), Some("r2"));
}

#[tokio::test]
async fn realtime_two_parallel_calls_send_two_outputs_then_one_response_create() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let req = rt_req(&h, &srv.url, "both");
    let (reg, _, lookups) = express_and_lookup();
    let script = async {
        let (mut c, _) = srv.accept_session().await;
        c.user_turn().await;
        c.play(&rt::call_reply(
            "r1",
            &[
                ("c1", "lookup", r#"{"q":"a"}"#),
                ("c2", "lookup", r#"{"q":"b"}"#),
            ],
        ));
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(c.recv().await.unwrap());
        }
        c.play(&rt::text_reply("r2", &["Both 42."]));
        got.extend(rest(&mut c, Duration::from_millis(300)).await);
        got
    };
    let ((_, out), got) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(out.status, TurnStatus::Ok);
    assert_eq!(lookups.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(
        types(&got),
        [
            "conversation.item.create",
            "conversation.item.create",
            "response.create"
        ]
    );
    assert_eq!(got[0]["item"]["call_id"], "c1");
    assert_eq!(got[1]["item"]["call_id"], "c2");
}

/// One call's output as the client answered it.
async fn answer_of(h: &Harness, reg: &ToolRegistry, name: &str, args: &str) -> (Value, Vec<Value>) {
    let mut srv = RealtimeServer::start().await;
    let req = rt_req(h, &srv.url, "go");
    let script = async {
        let (mut c, _) = srv.accept_session().await;
        c.user_turn().await;
        c.play(&rt::call_reply("r1", &[("c1", name, args)]));
        let out = c.recv_type("conversation.item.create").await.unwrap();
        c.recv_type("response.create").await.unwrap();
        c.play(&rt::text_reply("r2", &["ok"]));
        out
    };
    let ((events, out), item) = tokio::join!(h.run(&req, reg), script);
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    (
        item["item"]["output"].clone(),
        of_type(&events, "tool_result"),
    )
}

#[tokio::test]
async fn realtime_undeclared_tool_unparsable_arguments_and_a_tool_past_its_wait() {
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (o, _) = answer_of(&h, &reg, "delete_everything", "{}").await;
    assert_eq!(o, "error: unknown tool");
    let (o, _) = answer_of(&h, &reg, "lookup", "{not json").await;
    let o = o.as_str().unwrap();
    assert!(o.starts_with("error: arguments JSON parse failed: "), "{o}");
    let reg = registry(vec![slow(Duration::from_millis(200))]);
    let (o, results) = answer_of(&h, &reg, "slow", "{}").await;
    assert_eq!(o, "error: no answer within 200 ms");
    assert_eq!(results[0]["failed"], true);
}

#[tokio::test]
async fn realtime_cue_plays_at_its_place_in_the_transcript_and_a_cue_beside_speech_answers_nothing()
{
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let req = rt_req(&h, &srv.url, "smile");
    let (reg, express, _) = express_and_lookup();
    let script = async {
        let (mut c, _) = srv.accept_session().await;
        c.user_turn().await;
        let mut ev = vec![rt::created("r1"), rt::transcript_delta("m1", "Hi ")];
        ev.extend(rt::call_events(
            "c1",
            "generate_express",
            r#"{"emotion_id":"happy"}"#,
        ));
        ev.push(rt::transcript_delta("m1", "there"));
        ev.push(rt::done("r1", "completed"));
        c.play(&ev);
        rest(&mut c, Duration::from_millis(400)).await
    };
    let ((events, out), after) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(out.status, TurnStatus::Ok);
    assert_eq!(out.text, "Hi there");
    assert_eq!(express.load(std::sync::atomic::Ordering::SeqCst), 1);
    let order: Vec<String> = as_json(&events)
        .iter()
        .filter(|e| e["type"] == "speech" || e["type"] == "cue")
        .map(|e| {
            format!(
                "{}:{}",
                e["type"].as_str().unwrap(),
                e["delta"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(order, ["speech:Hi ", "cue:", "speech:there"]);
    // It spoke beside its cue: nothing is answered, no continuation.
    assert!(after.is_empty(), "{after:?}");
}

#[tokio::test]
async fn realtime_cue_only_response_without_speech_goes_back_once() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let req = rt_req(&h, &srv.url, "smile");
    let (reg, _, _) = express_and_lookup();
    let script = async {
        let (mut c, _) = srv.accept_session().await;
        c.user_turn().await;
        c.play(&rt::call_reply(
            "r1",
            &[("c1", "generate_express", r#"{"emotion_id":"happy"}"#)],
        ));
        let out = c.recv_type("conversation.item.create").await.unwrap();
        c.recv_type("response.create").await.unwrap();
        c.play(&rt::text_reply("r2", &["Yay"]));
        out
    };
    let ((_, out), item) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(out.text, "Yay");
    assert_eq!(item["item"]["output"], "ok");
}

#[tokio::test]
async fn realtime_at_most_three_continuations_per_user_turn() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let req = rt_req(&h, &srv.url, "loop");
    let (reg, _, lookups) = express_and_lookup();
    let script = async {
        let (mut c, _) = srv.accept_session().await;
        c.user_turn().await;
        let mut creates = 1;
        for i in 0..4 {
            let id = format!("c{i}");
            c.play(&rt::call_reply(&format!("r{i}"), &[(&id, "lookup", "{}")]));
            if c.recv_within(Duration::from_millis(600)).await.is_none() {
                break;
            }
            c.recv_type("response.create").await.unwrap();
            creates += 1;
        }
        creates
    };
    let ((_, out), creates) = tokio::join!(h.run(&req, &reg), script);
    // The last response only called: past the cap it is left unanswered and the turn is silent.
    assert_eq!(out.status, TurnStatus::Silent);
    assert_eq!(
        creates, 4,
        "the first response.create and three continuations"
    );
    assert_eq!(lookups.load(std::sync::atomic::Ordering::SeqCst), 4);
}

#[tokio::test]
async fn realtime_image_results_send_their_text_then_one_user_message_with_the_images() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let req = rt_req(&h, &srv.url, "look");
    let shot = Answer {
        name: "shot",
        result: ToolOutput::Images {
            text: "screenshot of display 1".into(),
            images: vec!["data:image/jpeg;base64,AAAA".into()],
        },
        calls: Default::default(),
    };
    let reg = registry(vec![std::sync::Arc::new(shot)]);
    let script = async {
        let (mut c, _) = srv.accept_session().await;
        c.user_turn().await;
        c.play(&rt::call_reply("r1", &[("c1", "shot", "{}")]));
        let got = vec![
            c.recv().await.unwrap(),
            c.recv().await.unwrap(),
            c.recv().await.unwrap(),
        ];
        c.play(&rt::text_reply("r2", &["I see it."]));
        got
    };
    let ((_, out), got) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(out.status, TurnStatus::Ok);
    assert_eq!(got[0]["item"]["output"], "screenshot of display 1");
    assert_eq!(
        got[1],
        json!({"type":"conversation.item.create","item":{"type":"message","role":"user",
               "content":[{"type":"input_image","image_url":"data:image/jpeg;base64,AAAA"}]}})
    );
    assert_eq!(got[2], json!({"type":"response.create"}));
}

#[tokio::test]
async fn realtime_beta_names_malformed_and_unknown_events() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let req = rt_req(&h, &srv.url, "hi");
    let (reg, _, _) = express_and_lookup();
    let script = async {
        let (mut c, _) = srv.accept_session().await;
        c.user_turn().await;
        c.send_raw("{this is not json");
        c.send_raw("[1,2,3]");
        c.send(&json!({"type":"conversation.item.created","item":{"id":"x"}}));
        c.send(&json!({"type":"telemetry.new_thing","x":1}));
        c.send(&rt::created("r1"));
        c.send(&json!({"type":"response.audio_transcript.delta","item_id":"m","delta":"Old "}));
        c.send(&json!({"type":"response.text.delta","item_id":"m","delta":"names"}));
        c.send(&json!({"type":"response.audio.delta","item_id":"m","delta":"!!not base64"}));
        c.send(&rt::done("r1", "completed"));
    };
    let ((_, out), _) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    assert_eq!(out.text, "Old names");
}

#[tokio::test]
async fn realtime_error_events_and_failed_responses_end_the_turn_in_plain_words() {
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    for ev in [
        json!({"type":"error","error":{"type":"invalid_request_error","message":"quota exceeded"}}),
        json!({"type":"response.done","response":{"id":"r","status":"failed","status_details":{"type":"failed","error":{"message":"quota exceeded"}}}}),
    ] {
        let mut srv = RealtimeServer::start().await;
        let req = rt_req(&h, &srv.url, "hi");
        let script = async {
            let (mut c, _) = srv.accept_session().await;
            c.user_turn().await;
            c.send(&rt::created("r"));
            c.send(&rt::text_delta("m", "Par"));
            c.send(&ev);
        };
        let ((_, out), _) = tokio::join!(h.run(&req, &reg), script);
        assert_eq!(out.status, TurnStatus::Error);
        assert_eq!(
            out.error.as_deref(),
            Some("The model server reported an error: quota exceeded — try again; if it keeps failing, look at the server's log.")
        );
        // What was shown is kept, marked cut.
        assert_eq!(out.text, "Par");
    }
}
