//! The API key never leaves the request's `Authorization` header: a distinctive key stored with
//! `yui backend set-key` (the labelled file fallback, `YUI_KEYRING=off`, where it is obfuscated),
//! then turns (a tool round trip on Chat Completions, a Responses turn) and `yui doctor` against
//! the test kit's scripted server, with every log line on (`YUI_LOG=trace`). The key reaches the
//! server in every request's `Authorization: Bearer` header and nowhere else: not in stdout or
//! stderr, not in any file under the data dir (the SQLite file, its WAL and shm, the log files,
//! the key file itself), and not in any request body.
//!
//! A server that refuses the key and quotes it back in its error body (as some do): the streaming
//! client keeps that body as evidence in the error it logs, and the log writers redact the key
//! (`yui_core::logging::redact_secret`); the error the user sees is plain words without it.

use crate::support;

use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use support::yui_command;
use yui_testkit::sse::{self, Reply, Seen};

const KEY: &str = "sk-yui-leakcheck-7f3a9c2e41d05b68";

fn yui(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = yui_command(dir)
        .args(args)
        .env_remove("YUI_API_KEY")
        .env("YUI_LOG", "trace")
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

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn has_key(bytes: &[u8]) -> bool {
    bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes())
}

/// Chat Completions: a reply with a tool call, then the text after the round trip; Responses: a
/// plain reply; a message with "QUOTE-MY-KEY" gets the 401 that quotes the key; `/models` lists one.
fn respond(seen: &Seen) -> Reply {
    let chunk =
        |delta: Value, fr: Value| json!({"choices":[{"index":0,"delta":delta,"finish_reason":fr}]});
    if seen.path.ends_with("/models") {
        return Reply::Status(200, json!({"data": [{"id": "m"}]}).to_string());
    }
    if seen.text.contains("QUOTE-MY-KEY") {
        let body = json!({"error": {"message": format!("Incorrect API key provided: {KEY}"), "type": "invalid_request_error"}});
        return Reply::Status(401, body.to_string());
    }
    if seen.path.ends_with("/responses") {
        return sse::responses_say("resp_1", "Responses say hi.");
    }
    let after_tool = seen.body["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
    if after_tool {
        return sse::chat_say("All done.");
    }
    sse::chat_stream(&[
        chunk(json!({"content":"Hi! "}), Value::Null),
        chunk(
            json!({"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"generate_express","arguments":"{\"emotion_id\":\"joy\"}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
    ])
}

#[test]
fn the_api_key_reaches_the_server_header_and_nowhere_else() {
    let srv = yui_testkit::sse::ScriptServer::builder()
        .responder(respond)
        .start_blocking();
    let base = srv.base_url.clone();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut outputs = Vec::new();

    let out = yui(dir, &["backend", "set-key"], &format!("{KEY}\n"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    outputs.push(out);
    let out = yui(
        dir,
        &["backend", "set", "--base-url", &base, "--model", "m"],
        "",
    );
    assert!(out.status.success());
    outputs.push(out);

    for (message, transport) in [
        ("hello there", "chat_completions"),
        ("and again", "responses"),
    ] {
        let out = yui(
            dir,
            &["turn", "--message", message, "--transport", transport],
            "",
        );
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{message}: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(r#""type":"turn_end","status":"ok""#),
            "{stdout}"
        );
        outputs.push(out);
    }
    let out = yui(dir, &["doctor", "--json"], "");
    outputs.push(out);

    // Every request carried the key, in the header only.
    let seen = srv.seen();
    let turns = seen.iter().filter(|s| s.method == "POST").count();
    assert!(
        turns >= 3,
        "{} requests: {:?}",
        seen.len(),
        seen.iter().map(|s| &s.path).collect::<Vec<_>>()
    );
    for s in &seen {
        assert_eq!(
            s.auth.as_deref(),
            Some(format!("Bearer {KEY}").as_str()),
            "{} {}",
            s.method,
            s.path
        );
        assert!(
            !s.text.contains(KEY),
            "the key is in the body of {}",
            s.path
        );
        let others: Vec<_> = s
            .headers
            .iter()
            .filter(|(n, v)| !n.eq_ignore_ascii_case("authorization") && v.contains(KEY))
            .collect();
        assert!(others.is_empty(), "{others:?}");
    }

    assert_nowhere(dir, &outputs);
    // The transcript has the turns (so the search above did look at a written database).
    let store = yui_core::Store::open(dir.join("yui.sqlite3")).unwrap();
    let lines = yui_core::transcript::recent(&store, "yui", 10).unwrap();
    assert!(
        lines.iter().any(|l| l.text.contains("Responses say hi.")),
        "{:?}",
        lines.iter().map(|l| &l.text).collect::<Vec<_>>()
    );
}

/// The key is in none of `outputs` and no file under `dir`.
fn assert_nowhere(dir: &Path, outputs: &[Output]) {
    // Not in what the program printed (every log line went to stderr too).
    for out in outputs {
        assert!(
            !has_key(&out.stdout),
            "stdout: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            !has_key(&out.stderr),
            "stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Not in any file: the database and its WAL, the logs, the key file (obfuscated).
    let files = walk(dir);
    let names: Vec<String> = files
        .iter()
        .map(|p| p.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    assert!(names.iter().any(|n| n == "yui.sqlite3"), "{names:?}");
    assert!(names.iter().any(|n| n == "secrets.json"), "{names:?}");
    let logs: Vec<_> = names
        .iter()
        .filter(|n| n.starts_with("logs/yui.log"))
        .collect();
    assert!(!logs.is_empty(), "{names:?}");
    let log_text: String = files
        .iter()
        .filter(|p| p.starts_with(dir.join("logs")))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    // The logs are really at trace level and saw the turns.
    assert!(
        log_text.contains("TRACE") || log_text.contains("DEBUG"),
        "{log_text}"
    );
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        assert!(!has_key(&bytes), "the key is in {}", path.display());
    }
}

#[test]
fn a_server_quoting_the_key_back_does_not_leak_it() {
    let srv = yui_testkit::sse::ScriptServer::builder()
        .responder(respond)
        .start_blocking();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut outputs = vec![yui(dir, &["backend", "set-key"], &format!("{KEY}\n"))];
    outputs.push(yui(
        dir,
        &[
            "backend",
            "set",
            "--base-url",
            &srv.base_url,
            "--model",
            "m",
        ],
        "",
    ));
    // The server says no and quotes the key back: the turn fails, and says so without the key.
    let out = yui(
        dir,
        &[
            "turn",
            "--message",
            "QUOTE-MY-KEY please",
            "--transport",
            "chat_completions",
        ],
        "",
    );
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("401"), "the refusal is reported: {said}");
    outputs.push(out);
    assert_eq!(
        srv.seen()[0].auth.as_deref(),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_nowhere(dir, &outputs);
}
