//! A scripted model for scripts that drive the real app's client tools (tests/e2e/wayland.sh):
//! an OpenAI-compatible Chat Completions server on 127.0.0.1 (the test kit's SSE server) that
//! asks for the tool call a request's last user message names, and answers `[SILENT]` once the
//! tool's result came back (and to anything else). The script asks through the app's inbox
//! (`yui event --text "CALL look at=screen"`): the event's words reach the model in the turn's
//! client context.
//!
//! `tool_model DIR` writes `DIR/url` (the base URL, once listening), then each request's body
//! as `DIR/req-N.json` before answering it, and serves until killed.
//!
//! `CALL <tool> key=value ...`: the call's arguments; a value that reads as a number is one.

use serde_json::{json, Map, Value};
use std::path::PathBuf;
use yui_testkit::sse::{self, Reply, ScriptServer, Seen};

/// Every reply but a call: nothing shown or spoken, so the next event is not held back while a
/// character speaks.
const SILENT: &str = "[SILENT]";

/// The call the words ask for: `CALL look at=screen` → (`look`, `{"at": "screen"}`).
fn asked_call(text: &str) -> Option<(String, Value)> {
    let rest = &text[text.find("CALL ")? + 5..];
    let mut words = rest
        .split(|c: char| c.is_whitespace() || c == '"' || c == '\\')
        .filter(|w| !w.is_empty());
    let name = words.next()?.to_string();
    let mut args = Map::new();
    for w in words {
        let Some((k, v)) = w.split_once('=') else {
            break;
        };
        let v = v
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::from(v));
        args.insert(k.to_string(), v);
    }
    Some((name, Value::Object(args)))
}

/// Every string in a message's content (a string, or an array of parts).
fn words(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The reply to one Chat Completions request.
fn reply(seen: &Seen) -> Reply {
    if seen.path.ends_with("/models") {
        return Reply::Status(200, json!({"data": [{"id": "fake-model"}]}).to_string());
    }
    let messages = seen.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // The last messages after the model's own: a tool's result (and the images a result
    // carries, which follow it as a user message) means the call was answered.
    let answered = messages
        .iter()
        .rev()
        .take_while(|m| m["role"] != "assistant")
        .any(|m| m["role"] == "tool");
    if answered {
        return sse::chat_say(SILENT);
    }
    let last_user = messages.iter().rev().find(|m| m["role"] == "user");
    match last_user.and_then(|m| asked_call(&words(&m["content"]))) {
        Some((name, args)) => Reply::Sse(vec![
            sse::c_call(0, &format!("call_{}", seen.n), &name, &args.to_string()),
            sse::c_finish("tool_calls"),
            sse::done(),
        ]),
        None => sse::chat_say(SILENT),
    }
}

fn main() {
    let Some(dir) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: tool_model DIR");
        std::process::exit(2);
    };
    let log = dir.clone();
    let server = ScriptServer::builder()
        .responder(move |seen| {
            let body = serde_json::to_string_pretty(&seen.body).unwrap_or_default();
            if let Err(e) = std::fs::write(log.join(format!("req-{}.json", seen.n)), body) {
                eprintln!("cannot write request {}: {e}", seen.n);
            }
            reply(seen)
        })
        .start_blocking();
    // Written whole, then renamed: a script waiting for the file never reads half of it.
    let tmp = dir.join("url.tmp");
    std::fs::write(&tmp, &server.base_url)
        .and_then(|()| std::fs::rename(&tmp, dir.join("url")))
        .unwrap_or_else(|e| {
            eprintln!("cannot write {}: {e}", dir.display());
            std::process::exit(1);
        });
    loop {
        std::thread::park();
    }
}
