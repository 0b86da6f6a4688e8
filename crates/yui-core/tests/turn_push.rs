//! The push transport against the test kit's scripted WebSocket server on 127.0.0.1: hello per
//! window kind, tool calls and results (images, unknown tool, argument forms), segments with
//! cues, backend tool status, cancel, reconnect, a lost socket, a stall, malformed frames and a
//! protocol mismatch.

use crate::turn_support;

use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use turn_support::*;
use yui_core::backend::Transport;
use yui_core::tools::registry::{RegistryEnv, ToolRegistry};
use yui_core::tools::ToolOutput;
use yui_core::turn::transport::push::{self, ConnState, PushClient, PushConfig};
use yui_core::turn::{TurnEvent, TurnRequest, TurnStatus};
use yui_core::WindowKind;
use yui_testkit::ws::{WsConn, WsServer};

fn push_req(h: &Harness, url: &str, window: WindowKind, message: &str) -> TurnRequest {
    let mut r = h.request("http://127.0.0.1:9/v1", Transport::Push, message);
    r.backend.push_url = Some(url.to_string());
    r.window = window;
    r.timeouts.stall = Duration::from_secs(3);
    r
}

fn real_registry(h: &Harness, window: WindowKind) -> ToolRegistry {
    let env = RegistryEnv::load(&h.store, "yui", window).unwrap();
    ToolRegistry::for_window(&env).unwrap()
}

fn names(hello: &Value) -> Vec<String> {
    hello["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// Read the user message, then play `script` (server frames), answering nothing else.
async fn user_message(c: &mut WsConn) -> Value {
    let m = c.recv_type("user_message").await.expect("user_message");
    assert!(m["turn_id"].is_string());
    m
}

#[tokio::test]
async fn push_hello_per_window_kind_has_exact_tools_and_no_generate_express() {
    let h = Harness::new();
    let want: &[(WindowKind, &str, &[&str])] = &[
        (
            WindowKind::Main,
            "main",
            &[
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
            "pet",
            &["rate_relation", "address_character", "browser", "remind"],
        ),
        (
            WindowKind::BrowserBuild,
            "browser_build",
            &["rate_relation", "address_character"],
        ),
        (WindowKind::Phone, "phone", &[]),
    ];
    for (kind, label, tools) in want {
        let mut srv = WsServer::start().await;
        let req = push_req(&h, &srv.url, *kind, "hi");
        let reg = real_registry(&h, *kind);
        let script = async {
            let (mut c, hello) = srv.accept_hello().await;
            let m = user_message(&mut c).await;
            c.send(&json!({"type":"turn_end","turn_id":m["turn_id"],"status":"ok"}));
            hello
        };
        let ((_, out), hello) = tokio::join!(h.run(&req, &reg), script);
        assert_eq!(out.status, TurnStatus::Silent, "{kind:?}: {:?}", out.error);
        assert_eq!(hello["protocol"], 1);
        assert_eq!(hello["window"], *label);
        assert_eq!(hello["preset"], json!({"id":"yui","name":"Yui"}), "{hello}");
        assert_eq!(hello["client"]["name"], "yui");
        assert_eq!(names(&hello), *tools, "{kind:?}");
        // The cue vocabulary generate_express would have, not the tool itself.
        assert_eq!(hello["cues"]["type"], "object");
        assert!(hello["cues"]["properties"]["emotion_id"]["enum"].is_array());
    }
}

#[tokio::test]
async fn push_tool_calls_answer_one_tool_result_each_under_the_contract_strings() {
    let h = Harness::new();
    let mut srv = WsServer::start().await;
    let req = push_req(&h, &srv.url, WindowKind::Main, "hi");
    let reg = real_registry(&h, WindowKind::Main);
    let calls = [
        (
            "c1",
            "rate_relation",
            json!({"toward":"Kai","delta":1,"why":"kind words"}),
            "neutral",
        ),
        (
            "c2",
            "rate_relation",
            json!("{\"toward\":\"Kai\",\"delta\":1,\"why\":\"again\"}"),
            "ignored: already rated Kai this turn",
        ),
        ("c3", "address_character", json!({"to":"Kai"}), "ok"),
        (
            "c4",
            "address_character",
            json!({"to":"Kai"}),
            "ignored: already addressed Kai",
        ),
        (
            "c5",
            "browser",
            json!({"code":"console.log(1)"}),
            "error: browser is off",
        ),
        ("c6", "no_such_tool", json!({}), "error: unknown tool"),
        (
            "c7",
            "generate_express",
            json!({"emotion_id":"happy"}),
            "error: unknown tool",
        ),
    ];
    let script = async {
        let (mut c, _) = srv.accept_hello().await;
        let m = user_message(&mut c).await;
        let tid = m["turn_id"].clone();
        let mut results = Vec::new();
        for (id, name, args, _) in &calls {
            c.send(&json!({"type":"tool_call","turn_id":tid,"call_id":id,"name":name,"arguments":args}));
            results.push(c.recv_type("tool_result").await.expect("tool_result"));
        }
        c.send(&json!({"type":"turn_end","turn_id":tid,"status":"ok"}));
        results
    };
    let ((events, out), results) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(out.status, TurnStatus::Silent, "{:?}", out.error);
    for ((id, _, _, want), got) in calls.iter().zip(&results) {
        assert_eq!(got["call_id"], *id);
        assert_eq!(got["result"], *want, "{id}");
        assert!(got.get("images").is_none(), "no images key without images");
    }
    assert!(
        of_type(&events, "cue").is_empty(),
        "a generate_express call plays no cue on push"
    );
    assert_eq!(out.addressed.unwrap().name, "Kai");
}

#[tokio::test]
async fn push_image_results_carry_data_urls_and_bad_arguments_do_not_run() {
    let h = Harness::new();
    let mut srv = WsServer::start().await;
    let req = push_req(&h, &srv.url, WindowKind::Main, "hi");
    let shot = Answer {
        name: "shot",
        result: ToolOutput::Images {
            text: "screenshot of display 1".into(),
            images: vec!["data:image/jpeg;base64,AAAA".into()],
        },
        calls: Arc::default(),
    };
    let ran = shot.calls.clone();
    let reg = registry(vec![Arc::new(shot)]);
    let script = async {
        let (mut c, _) = srv.accept_hello().await;
        let tid = user_message(&mut c).await["turn_id"].clone();
        c.send(
            &json!({"type":"tool_call","turn_id":tid,"call_id":"a","name":"shot","arguments":{}}),
        );
        let r1 = c.recv_type("tool_result").await.unwrap();
        c.send(&json!({"type":"tool_call","turn_id":tid,"call_id":"b","name":"shot","arguments":"{not json"}));
        let r2 = c.recv_type("tool_result").await.unwrap();
        c.send(&json!({"type":"turn_end","turn_id":tid,"status":"ok"}));
        (r1, r2)
    };
    let (_, (r1, r2)) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(
        r1,
        json!({"type":"tool_result","turn_id":r1["turn_id"],"call_id":"a","result":"screenshot of display 1","images":["data:image/jpeg;base64,AAAA"]})
    );
    assert!(r2["result"]
        .as_str()
        .unwrap()
        .starts_with("error: arguments JSON parse failed: "));
    assert_eq!(ran.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn push_segments_play_cues_in_order_with_the_text_and_speech_is_stored() {
    let h = Harness::new();
    let mut srv = WsServer::start().await;
    let req = push_req(&h, &srv.url, WindowKind::Pet, "hello?");
    let (reg, _, _) = express_and_lookup();
    let script = async {
        let (mut c, _) = srv.accept_hello().await;
        let m = user_message(&mut c).await;
        assert_eq!(m["text"], "hello?");
        let tid = m["turn_id"].clone();
        c.send(&json!({"type":"segment","turn_id":tid,"kind":"speech","text":"Hi there!","cues":[{"at":3,"emotion_id":"happy"}]}));
        c.send(&json!({"type":"segment","turn_id":tid,"kind":"render","text":" *waves*"}));
        c.send(&json!({"type":"tool_status","turn_id":tid,"name":"web_search","status":"running"}));
        c.send(&json!({"type":"tool_status","turn_id":tid,"name":"web_search","status":"done"}));
        c.send(&json!({"type":"turn_end","turn_id":tid,"status":"ok"}));
    };
    let ((events, out), _) = tokio::join!(h.run(&req, &reg), script);
    let kinds: Vec<Value> = as_json(&events)
        .into_iter()
        .map(|mut e| {
            if let Some(o) = e.as_object_mut() {
                o.remove("call_id");
            }
            e
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            json!({"type":"speech","delta":"Hi "}),
            json!({"type":"cue","name":"generate_express","emotion_id":"happy"}),
            json!({"type":"speech","delta":"there!"}),
            json!({"type":"render","text":" *waves*"}),
            json!({"type":"tool_status","name":"web_search","status":"running"}),
            json!({"type":"tool_status","name":"web_search","status":"done"}),
            json!({"type":"turn_end","status":"ok","text":"Hi there!"}),
        ]
    );
    assert_eq!(out.status, TurnStatus::Ok);
    assert_eq!(
        h.transcript(),
        vec![
            ("user".into(), "hello?".into()),
            ("assistant".into(), "Hi there!".into())
        ]
    );
}

#[tokio::test]
async fn push_cancel_sends_cancel_and_ends_stopped() {
    let h = Harness::new();
    let mut srv = WsServer::start().await;
    let req = push_req(&h, &srv.url, WindowKind::Main, "hi");
    let (reg, _, _) = express_and_lookup();
    let cancel = CancellationToken::new();
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let deps = h.deps(&req.timeouts);
    let c2 = cancel.clone();
    let script = async {
        let (mut c, _) = srv.accept_hello().await;
        let tid = user_message(&mut c).await["turn_id"].clone();
        c.send(&json!({"type":"segment","turn_id":tid,"kind":"speech","text":"Let me"}));
        tokio::time::sleep(Duration::from_millis(200)).await;
        c2.cancel();
        let f = c.recv_type("cancel").await.expect("cancel frame");
        assert_eq!(f, json!({"type":"cancel","turn_id":tid}));
    };
    let (out, _) = tokio::join!(yui_core::turn::run(&deps, &req, &reg, &tx, &cancel), script);
    assert_eq!(out.status, TurnStatus::Stopped);
    drop(tx);
    let mut last = None;
    while let Some(e) = rx.recv().await {
        last = Some(e);
    }
    assert!(matches!(last, Some(TurnEvent::TurnEnd { .. })));
}

#[tokio::test]
async fn push_socket_lost_mid_turn_ends_it_within_two_seconds_and_keeps_the_message() {
    let h = Harness::new();
    let mut srv = WsServer::start().await;
    let mut req = push_req(&h, &srv.url, WindowKind::Main, "are you there");
    req.timeouts.stall = Duration::from_secs(30);
    let (reg, _, _) = express_and_lookup();
    let killed = Arc::new(std::sync::Mutex::new(None::<Instant>));
    let k2 = killed.clone();
    let script = async {
        let (mut c, _) = srv.accept_hello().await;
        let tid = user_message(&mut c).await["turn_id"].clone();
        c.send(&json!({"type":"segment","turn_id":tid,"kind":"speech","text":"Yes, I"}));
        tokio::time::sleep(Duration::from_millis(100)).await;
        *k2.lock().unwrap() = Some(Instant::now());
        c.kill();
    };
    let ((_, out), _) = tokio::join!(h.run(&req, &reg), script);
    let took = killed.lock().unwrap().unwrap().elapsed();
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert_eq!(out.status, TurnStatus::Error);
    assert_eq!(
        out.error.as_deref(),
        Some("The connection to the model broke during the reply — try again.")
    );
    let t = h.transcript();
    assert_eq!(t[0], ("user".into(), "are you there".into()));
    assert_eq!(h.history(), vec![("user".into(), "are you there".into())]);
}

#[tokio::test]
async fn push_stalled_server_ends_the_turn() {
    let h = Harness::new();
    let mut srv = WsServer::start().await;
    let mut req = push_req(&h, &srv.url, WindowKind::Main, "hi");
    req.timeouts.stall = Duration::from_millis(500);
    let (reg, _, _) = express_and_lookup();
    let script = async {
        let (mut c, _) = srv.accept_hello().await;
        user_message(&mut c).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        c
    };
    let ((_, out), _c) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(out.status, TurnStatus::Error);
    assert_eq!(
        out.error.as_deref(),
        Some("The model stopped answering (nothing for 500 ms) — it may still be loading; try again, or pick a smaller model. Settings → Backend")
    );
}

#[tokio::test]
async fn push_malformed_and_unknown_frames_are_skipped() {
    let h = Harness::new();
    let mut srv = WsServer::start().await;
    let req = push_req(&h, &srv.url, WindowKind::Main, "hi");
    let (reg, _, _) = express_and_lookup();
    let script = async {
        let (mut c, _) = srv.accept_hello().await;
        let tid = user_message(&mut c).await["turn_id"].clone();
        c.send_raw("{this is not json");
        c.send_raw("[1,2,3]");
        c.send(&json!({"type":"telemetry","turn_id":tid,"x":1}));
        c.send(&json!({"type":"segment","turn_id":"some-other-turn","kind":"speech","text":"not mine"}));
        c.send(&json!({"type":"ping"}));
        let pong = c.recv().await.unwrap();
        c.send(
            &json!({"type":"segment","turn_id":tid,"kind":"speech","text":"fine","extra":{"a":1}}),
        );
        c.send(&json!({"type":"turn_end","turn_id":tid,"status":"ok"}));
        pong
    };
    let ((_, out), pong) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(pong, json!({"type":"pong"}));
    assert_eq!(out.status, TurnStatus::Ok);
    assert_eq!(out.text, "fine");
}

#[tokio::test]
async fn push_turn_end_error_and_error_frames_end_the_turn_with_the_servers_words() {
    let h = Harness::new();
    let mut srv = WsServer::start().await;
    let (reg, _, _) = express_and_lookup();
    let req = push_req(&h, &srv.url, WindowKind::Main, "hi");
    let script = async {
        let (mut c, _) = srv.accept_hello().await;
        let tid = user_message(&mut c).await["turn_id"].clone();
        c.send(
            &json!({"type":"turn_end","turn_id":tid,"status":"error","error":"model overloaded"}),
        );
    };
    let ((_, out), _) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(
        out.error.as_deref(),
        Some("The model server reported an error: model overloaded — try again; if it keeps failing, look at the server's log.")
    );
    let req = push_req(&h, &srv.url, WindowKind::Main, "hi");
    let script = async {
        let (mut c, _) = srv.accept_hello().await;
        user_message(&mut c).await;
        c.send(&json!({"type":"error","message":"quota exceeded"}));
    };
    let ((_, out), _) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(
        out.error.as_deref(),
        Some("The model server reported an error: quota exceeded — try again; if it keeps failing, look at the server's log.")
    );
}

#[tokio::test]
async fn push_protocol_mismatch_is_a_clear_error() {
    let h = Harness::new();
    let mut srv = WsServer::start().await;
    let mut req = push_req(&h, &srv.url, WindowKind::Main, "hi");
    req.timeouts.connect = Duration::from_secs(1);
    req.timeouts.headers = Duration::from_secs(1);
    let (reg, _, _) = express_and_lookup();
    // Every connect (the first and each retry) is answered with protocol 2.
    let turn = h.run(&req, &reg);
    tokio::pin!(turn);
    let mut held = Vec::new();
    let (_, out) = loop {
        tokio::select! {
            r = &mut turn => break r,
            c = srv.accept(Duration::from_secs(10)) => {
                let mut c = c.unwrap();
                c.recv().await.unwrap();
                c.send(&json!({"type":"welcome","protocol":2}));
                held.push(c);
            }
        }
    };
    assert_eq!(out.status, TurnStatus::Error);
    let e = out.error.unwrap();
    assert!(
        e.contains("the push server speaks protocol 2; this YUI speaks protocol 1"),
        "{e}"
    );
    // The user's message is stored all the same.
    assert_eq!(h.transcript()[0].1, "hi");
}

#[tokio::test]
async fn push_reconnects_with_backoff_and_sends_hello_again_with_the_presets_open_now() {
    let h = Harness::new();
    let mut srv = WsServer::start().await;
    let cfg = PushConfig {
        url: srv.url.clone(),
        api_key: Some("sk-push".into()),
        connect: Duration::from_secs(2),
        welcome: Duration::from_secs(2),
    };
    let client = PushClient::spawn(
        cfg,
        push::hello_fn(h.store.clone(), "yui".into(), WindowKind::Main),
    );
    let mut state = client.state();
    let (c, hello) = srv.accept_hello().await;
    assert_eq!(c.auth.as_deref(), Some("Bearer sk-push"));
    state
        .wait_for(|s| *s == ConnState::Connected)
        .await
        .unwrap();
    let to = |h: &Value| h["tools"][1]["parameters"]["properties"]["to"]["enum"].clone();
    assert_eq!(to(&hello), json!(["Kai"]));
    // A preset opened meanwhile joins at the next connect.
    let mira = yui_core::presets::add(&h.store, "Mira").unwrap();
    yui_core::presets::open(&h.store, &mira.id).unwrap();
    c.kill();
    state
        .wait_for(|s| matches!(s, ConnState::Reconnecting { .. }))
        .await
        .unwrap();
    let (_c2, hello2) = srv.accept_hello().await;
    assert_eq!(to(&hello2), json!(["Kai", "Mira"]));
    state
        .wait_for(|s| *s == ConnState::Connected)
        .await
        .unwrap();
    assert_eq!(srv.accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
}
