//! `yui turn --transport realtime`: one text-mode turn over the test kit's realtime server,
//! printing the same JSON lines as the other transports; `yui doctor` against the same server.

use crate::support;

use serde_json::{json, Value};
use std::process::Stdio;
use support::yui_command;
use yui_testkit::realtime::{self as rt, RealtimeServer};

async fn yui(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut cmd = tokio::process::Command::from(yui_command(dir));
    cmd.args(args)
        .env_remove("YUI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn()
        .expect("spawn yui")
        .wait_with_output()
        .await
        .unwrap()
}

#[tokio::test]
async fn yui_turn_over_realtime_prints_the_same_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = vec![rt::created("r1"), rt::text_delta("m1", "Hello!")];
    first.extend(rt::call_events("c1", "browser", r#"{"guide":true}"#));
    first.push(rt::done("r1", "completed"));
    let srv = RealtimeServer::auto(vec![first, rt::text_reply("r2", &["Browser is off."])]).await;
    let out = yui(
        dir.path(),
        &[
            "turn",
            "--transport",
            "realtime",
            "--realtime-url",
            &srv.url,
            "--model",
            "gpt-realtime",
            "--window",
            "pet",
            "--message",
            "hi",
        ],
    )
    .await;
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
        ["speech", "tool_call", "tool_result", "speech", "turn_end"]
    );
    assert_eq!(lines[2]["result"], "error: browser is off");
    assert_eq!(lines[4]["status"], "ok");
    assert_eq!(lines[4]["text"], "Hello! Browser is off.");
    let sent = srv.events();
    let types: Vec<&str> = sent.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "session.update",
            "conversation.item.create",
            "response.create",
            "conversation.item.create",
            "response.create"
        ]
    );
    assert_eq!(
        sent[1]["item"]["content"][0],
        json!({"type":"input_text","text":"hi"})
    );
    assert_eq!(
        sent[3]["item"],
        json!({"type":"function_call_output","call_id":"c1","output":"error: browser is off"})
    );
}

#[tokio::test]
async fn yui_doctor_checks_a_realtime_endpoint_with_the_turns_code() {
    let dir = tempfile::tempdir().unwrap();
    let srv = RealtimeServer::auto(vec![
        rt::text_reply("r1", &["OK"]),
        rt::call_reply("r2", &[("c1", "ping", r#"{"word":"hello"}"#)]),
        rt::text_reply("r3", &["pong received"]),
    ])
    .await;
    let out = yui(
        dir.path(),
        &[
            "doctor",
            "--transport",
            "realtime",
            "--realtime-url",
            &srv.url,
            "--json",
        ],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "realtime_session",
            "realtime_text",
            "realtime_tool_call",
            "round_trip"
        ]
    );
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["ok"] == true),
        "{v}"
    );
    assert_eq!(v["transport"], "realtime");
    assert_eq!(v["cues"], true);
    let sent = srv.events();
    assert_eq!(sent[0]["session"]["tools"][0]["name"], "ping");
    assert!(sent.contains(&json!({"type":"response.create","response":{"tool_choice":{"type":"function","name":"ping"}}})));
    assert!(sent.contains(&json!({"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"c1","output":"pong"}})));
    assert_eq!(sent.last().unwrap(), &json!({"type":"response.create"}));

    // Nothing listens: one plain failure, the rest not checked.
    let out = yui(
        dir.path(),
        &[
            "doctor",
            "--transport",
            "realtime",
            "--realtime-url",
            "ws://127.0.0.1:9/v1/realtime",
            "--json",
        ],
    )
    .await;
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["checks"][0]["ok"], false);
    assert_eq!(v["transport"], Value::Null);
}

/// `yui turn --transport realtime` against a server that never confirms the session (issue 46):
/// the turn ends with one plain sentence well inside a generous bound (it hung past 120 s), the
/// user's words are stored, and the next turn, once the server confirms, gets its answer.
#[tokio::test]
async fn yui_turn_over_an_unconfirmed_realtime_session_ends_with_a_plain_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let srv = RealtimeServer::unconfirmed(Vec::new()).await;
    let turn = |message: &'static str| {
        let (dir, url) = (dir.path().to_path_buf(), srv.url.clone());
        async move {
            let args = [
                "turn",
                "--transport",
                "realtime",
                "--realtime-url",
                &url,
                "--stall-secs",
                "3",
                "--message",
                message,
            ];
            yui(&dir, &args).await
        }
    };
    let t0 = std::time::Instant::now();
    let out = turn("are you there").await;
    let took = t0.elapsed();
    assert!(took < std::time::Duration::from_secs(20), "{took:?}");
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines,
        [json!({"type":"turn_end","status":"error","text":"",
            "error":"the realtime server did not confirm the session in 3 s. Settings → Backend"})]
    );
    let stored = yui(dir.path(), &["transcript", "--preset", "yui"]).await;
    let stored: Vec<Value> = String::from_utf8_lossy(&stored.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0]["role"], "user");
    assert_eq!(stored[0]["text"], "are you there");

    srv.confirm();
    let out = turn("hello?").await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .map(|l| serde_json::from_str(l).unwrap())
        .unwrap();
    assert_eq!(last["status"], "ok");
    assert_eq!(last["text"], "ok");
}
