//! `yui turn --transport push`: one turn over the test kit's scripted WebSocket server, printing
//! the same JSON lines as the other transports.

use crate::support;

use serde_json::{json, Value};
use std::process::Stdio;
use support::yui_command;
use yui_testkit::ws::WsServer;

#[tokio::test]
async fn yui_turn_over_push_prints_the_same_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut srv = WsServer::start().await;
    let mut cmd = tokio::process::Command::from(yui_command(dir.path()));
    cmd.args([
        "turn",
        "--transport",
        "push",
        "--push-url",
        &srv.url,
        "--window",
        "pet",
        "--message",
        "hi",
    ])
    .env_remove("YUI_API_KEY")
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn yui");
    let (mut c, hello) = srv.accept_hello().await;
    assert_eq!(hello["window"], "pet");
    assert_eq!(
        hello["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect::<Vec<_>>(),
        vec![
            json!("rate_relation"),
            json!("address_character"),
            json!("browser"),
            json!("remind")
        ]
    );
    let m = c.recv_type("user_message").await.unwrap();
    assert_eq!(m["text"], "hi");
    assert!(m["context"]
        .as_str()
        .unwrap()
        .starts_with("[client context]"));
    let tid = m["turn_id"].clone();
    c.send(&json!({"type":"segment","turn_id":tid,"kind":"speech","text":"Hello!","cues":[{"at":0,"emotion_id":"happy"}]}));
    c.send(&json!({"type":"tool_call","turn_id":tid,"call_id":"c1","name":"browser","arguments":{"guide":true}}));
    let r = c.recv_type("tool_result").await.unwrap();
    assert_eq!(r["result"], "error: browser is off");
    c.send(&json!({"type":"turn_end","turn_id":tid,"status":"ok"}));
    let out = child.wait_with_output().await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["cue", "speech", "tool_call", "tool_result", "turn_end"]
    );
    assert_eq!(lines[4]["status"], "ok");
    assert_eq!(lines[4]["text"], "Hello!");
}

#[test]
fn yui_turn_push_without_a_url_says_how_to_give_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = yui_command(dir.path())
        .args(["turn", "--transport", "push", "--message", "hi"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert!(
        err["message"].as_str().unwrap().contains("--push-url"),
        "{err}"
    );
}
