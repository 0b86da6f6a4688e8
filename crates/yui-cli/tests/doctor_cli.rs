//! `yui doctor` and the reply-length settings as real processes: against the test kit's
//! scripted servers on 127.0.0.1 (on a thread of their own while the test blocks on the child),
//! the exit code, the JSON shape, the time bound.

use crate::support;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::{json_ok, yui_command};
use yui_testkit::sse::{Reply, ScriptServer};

/// Answer every request (any method and path) with `reply`; the server keeps each request.
fn serve(reply: Reply) -> ScriptServer {
    ScriptServer::builder()
        .responder(move |_| reply.clone())
        .start_blocking()
}

/// A server that refuses the key, as OpenAI does.
fn unauthorized() -> Reply {
    Reply::Status(401, r#"{"error":{"message":"Invalid key"}}"#.into())
}

#[test]
fn doctor_json_is_one_object_and_exits_0_on_a_refused_key() {
    let srv = serve(unauthorized());
    let base = srv.base_url.clone();
    let dir = tempfile::tempdir().unwrap();
    let out = yui_command(dir.path())
        .args(["doctor", "--json", "--base-url", &base])
        .env("YUI_API_KEY", "sk-per-run")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "one object: {stdout}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["checks", "cues", "transport"]);
    assert_eq!(v["transport"], Value::Null);
    assert_eq!(v["cues"], false);
    let names: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "reachable",
            "auth",
            "model",
            "chat_completions_stream",
            "responses_stream",
            "chat_completions_tool_call",
            "responses_tool_call",
            "round_trip"
        ]
    );
    assert_eq!(v["checks"][0]["ok"], true);
    assert_eq!(v["checks"][1]["ok"], false);
    let port = base.trim_start_matches("http://").trim_end_matches("/v1");
    assert!(
        v["checks"][1]["detail"]
            .as_str()
            .unwrap()
            .starts_with(&format!(
                "The model server at {port} did not accept the API key"
            )),
        "{v}"
    );
    // YUI_API_KEY is the key of this run.
    assert_eq!(srv.seen()[0].auth.as_deref(), Some("Bearer sk-per-run"));
}

#[test]
fn doctor_against_a_stalling_server_reports_within_a_minute() {
    // A stalling server: it reads each request and sends nothing.
    let srv = serve(Reply::Hang);
    let base = srv.base_url.clone();
    let dir = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let out = yui_command(dir.path())
        .args(["doctor", "--base-url", &base, "--model", "m"])
        .output()
        .unwrap();
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("YUI doctor: {base}, model \"m\""));
    assert_eq!(lines.len(), 10, "{text}");
    assert!(lines[1].starts_with("FAIL  Reachable:"), "{text}");
    assert!(
        lines[1].contains("The model stopped answering (nothing for 10 s)"),
        "{text}"
    );
    assert!(
        lines[5].starts_with("skip  Streamed reply, Responses:"),
        "{text}"
    );
    assert!(
        lines[9].starts_with("Summary: no transport works with this server."),
        "{text}"
    );
}

#[test]
fn backend_set_takes_the_reply_cap_and_temperature() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "backend",
        "set",
        "--max-output-tokens",
        "256",
        "--temperature",
        "0.5",
    ];
    let out = yui_command(dir.path()).args(args).output().unwrap();
    let v = json_ok(&args, &out);
    assert_eq!(
        (v["max_output_tokens"].clone(), v["temperature"].clone()),
        (json!(256), json!(0.5))
    );
    let args = ["backend", "set", "--temperature", "none"];
    let out = yui_command(dir.path()).args(args).output().unwrap();
    let v = json_ok(&args, &out);
    assert_eq!(
        (v["max_output_tokens"].clone(), v["temperature"].clone()),
        (json!(256), Value::Null)
    );
    let out = yui_command(dir.path())
        .args(["backend", "set", "--temperature", "7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(
        e,
        json!({"code": "invalid_input", "message": "temperature must be between 0 and 2, not 7"})
    );
    let help = yui_command(dir.path()).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("YUI_API_KEY"));
}
