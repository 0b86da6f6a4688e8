//! `yui turn`, `yui tool` and `yui chat` as real processes against the test kit's scripted SSE
//! server on 127.0.0.1 (one scripted reply per request, run on a thread of its own while the test
//! blocks on the child).

use crate::support;

use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};
use support::yui_command;
use yui_testkit::sse::{chat_stream, Reply, ScriptServer};

/// Serve `replies` in order; the server keeps the request bodies.
fn serve(replies: Vec<Reply>) -> ScriptServer {
    ScriptServer::builder().script(replies).start_blocking()
}

fn yui(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = yui_command(dir)
        .args(args)
        .env_remove("YUI_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn yui");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().expect("wait yui")
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

#[test]
fn yui_turn_prints_json_lines_with_cue_and_round_trip() {
    let chunk =
        |delta: Value, fr: Value| json!({"choices":[{"index":0,"delta":delta,"finish_reason":fr}]});
    let srv = serve(vec![
        chat_stream(&[
            chunk(json!({"content":"Hi!"}), Value::Null),
            chunk(
                json!({"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"generate_express","arguments":"{\"emotion_id\":\"joy\"}"}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"address_character","arguments":"{\"to\":\"Kai\"}"}}]}),
                Value::Null,
            ),
            chunk(json!({}), json!("tool_calls")),
        ]),
        chat_stream(&[chunk(json!({"content":"Kai, hello."}), json!("stop"))]),
    ]);
    let base = srv.base_url.clone();
    let dir = tempfile::tempdir().unwrap();
    let out = yui(
        dir.path(),
        &[
            "turn",
            "--message",
            "hello",
            "--transport",
            "chat_completions",
            "--base-url",
            &base,
            "--model",
            "test-model",
        ],
        "",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ev = lines(&out);
    let types: Vec<&str> = ev.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "speech",
            "cue",
            "tool_call",
            "tool_result",
            "tool_call",
            "tool_result",
            "speech",
            "turn_end"
        ]
    );
    assert_eq!(
        ev[1],
        json!({"type":"cue","call_id":"c1","name":"generate_express","emotion_id":"joy"})
    );
    assert_eq!(ev[5]["result"], "ok");
    assert_eq!(
        ev[7],
        json!({"type":"turn_end","status":"ok","text":"Hi! Kai, hello.","addressed":{"preset_id":"kai","name":"Kai"}})
    );
    let bodies = srv.bodies();
    assert_eq!(bodies[0]["model"], "test-model");
    let names: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "generate_express",
            "rate_relation",
            "address_character",
            "browser",
            "body_action",
            "look",
            "remind"
        ]
    );
}

#[test]
fn yui_turn_error_exits_non_zero_and_silent_does_not() {
    let srv = serve(vec![
        Reply::Status(503, "model loading".into()),
        chat_stream(&[json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})]),
    ]);
    let base = srv.base_url.clone();
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "turn",
        "--message",
        "hi",
        "--base-url",
        &base,
        "--transport",
        "responses",
        "--window",
        "phone",
    ];
    let out = yui(dir.path(), &args, "");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        lines(&out),
        vec![
            json!({"type":"turn_end","status":"error","text":"","error":"The model server failed (HTTP 503: model loading) — try again; if it keeps failing, look at the server's log."})
        ]
    );
    let args = [
        "turn",
        "--message",
        "hi",
        "--base-url",
        &base,
        "--transport",
        "chat_completions",
    ];
    let out = yui(dir.path(), &args, "");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        lines(&out),
        vec![json!({"type":"turn_end","status":"silent","text":""})]
    );
}

#[test]
fn yui_tool_runs_one_client_tool() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = yui(dir.path(), args, "");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    assert_eq!(
        run(&["tool", "address_character", "--args", r#"{"to":"Kai"}"#]),
        json!("ok")
    );
    assert_eq!(
        run(&["tool", "address_character", "--args", r#"{"to":"Nobody"}"#]),
        json!("error: unknown target")
    );
    // Without the app: the last state the app wrote (none yet), and no body to move.
    let body = run(&["tool", "look", "--args", r#"{"at":"body"}"#]);
    let body: Value = serde_json::from_str(body.as_str().expect("a JSON string")).unwrap();
    assert_eq!(body, json!({"state": "unknown", "live": false}));
    assert_eq!(
        run(&["tool", "body_action", "--args", r#"{"action":"stand"}"#]),
        json!("unsupported")
    );
    let bad = run(&["tool", "address_character", "--args", "{nope"]);
    let parse_msg = serde_json::from_str::<Value>("{nope")
        .unwrap_err()
        .to_string();
    assert_eq!(
        bad,
        json!(format!("error: arguments JSON parse failed: {parse_msg}"))
    );
    // A tool the window does not declare is a usage error.
    let out = yui(dir.path(), &["tool", "look", "--window", "phone"], "");
    assert_eq!(out.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "not_found");
}

#[test]
fn yui_chat_talks_until_quit() {
    let srv = serve(vec![chat_stream(&[
        json!({"choices":[{"index":0,"delta":{"content":"Hello!"},"finish_reason":"stop"}]}),
    ])]);
    let base = srv.base_url.clone();
    let dir = tempfile::tempdir().unwrap();
    let out = yui(
        dir.path(),
        &[
            "chat",
            "--base-url",
            &base,
            "--transport",
            "chat_completions",
        ],
        "hi\n/quit\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Yui> Hello!\n");
    assert_eq!(srv.bodies().len(), 1);
}
