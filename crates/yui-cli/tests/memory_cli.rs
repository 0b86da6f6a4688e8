//! `yui memory` and recall in `yui turn` as real processes against a temp `--data-dir`, with the
//! test kit's scripted server speaking the exact Chat Completions wire (non-streaming JSON for
//! `yui memory extract`).

use crate::support::yui_command;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Output;
use yui_testkit::sse::{chat_json, chat_say, ScriptServer};

fn yui(dir: &Path, args: &[&str]) -> Output {
    yui_command(dir)
        .args(args)
        .env_remove("YUI_API_KEY")
        .output()
        .expect("run yui")
}

fn ok(dir: &Path, args: &[&str]) -> Value {
    let out = yui(dir, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn add_search_edit_pin_forget_and_recall_in_a_turn() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = ok(
        d,
        &[
            "memory",
            "add",
            "--text",
            "The user's cat is named Mochi.",
            "--kind",
            "fact",
        ],
    );
    let id = a["id"].as_i64().unwrap();
    assert_eq!(a["preset_id"], "yui");
    ok(
        d,
        &[
            "memory",
            "add",
            "--preset",
            "kai",
            "--text",
            "Kai likes rain.",
        ],
    );
    let found = ok(
        d,
        &["memory", "search", "--query", "what is my cat called?"],
    );
    assert_eq!(found[0]["id"], id);
    assert_eq!(
        ok(d, &["memory", "search", "--query", "rain"]),
        json!([]),
        "kept apart"
    );
    let e = ok(
        d,
        &[
            "memory",
            "edit",
            &id.to_string(),
            "--text",
            "The user's cat is named Tama.",
        ],
    );
    assert_eq!(e["text"], "The user's cat is named Tama.");
    assert_eq!(ok(d, &["memory", "pin", &id.to_string()])["pinned"], true);

    // `yui turn` recalls as the app does.
    let srv = ScriptServer::builder()
        .responder(|_| chat_say("ok"))
        .start_blocking();
    let turn = |msg: &str| {
        let out = yui(
            d,
            &[
                "turn",
                "--message",
                msg,
                "--base-url",
                &srv.base_url,
                "--model",
                "m",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let body = srv.bodies().last().unwrap().clone();
        body["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(turn("hello").contains("memory: The user's cat is named Tama."));
    let used = ok(d, &["memory", "used"]);
    assert_eq!(used["memories"][0]["id"], id);

    let bad = yui(d, &["memory", "add", "--text", " "]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("empty"));
    assert_eq!(
        ok(d, &["memory", "forget", &id.to_string()])["forgotten"][0]["id"],
        id
    );
    assert!(!turn("how is my cat Tama?").contains("memory: The user's cat"));
    assert_eq!(ok(d, &["memory", "list"]), json!([]));
    assert_eq!(
        ok(d, &["memory", "forget", "--all", "--preset", "kai"])["forgotten"],
        1
    );
}

#[test]
fn extract_runs_one_request_and_stores_its_memories() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let srv = ScriptServer::builder()
        .responder(|s| {
            if s.body["stream"] == json!(false) {
                chat_json(r#"{"add":[{"kind":"preference","text":"The user loves jazz."}],"update":[],"delete":[],"summary":"Talked about jazz."}"#, "stop")
            } else {
                chat_say("Jazz, nice!")
            }
        })
        .start_blocking();
    let out = yui(
        d,
        &[
            "turn",
            "--message",
            "I love jazz.",
            "--base-url",
            &srv.base_url,
            "--model",
            "m",
        ],
    );
    assert!(out.status.success());
    let r = ok(
        d,
        &[
            "memory",
            "extract",
            "--preset",
            "yui",
            "--base-url",
            &srv.base_url,
            "--model",
            "m",
        ],
    );
    assert_eq!(r["report"]["added"].as_array().unwrap().len(), 1);
    assert_eq!(r["report"]["lines"], 2);
    let ask = srv.bodies().last().unwrap().clone();
    assert_eq!(ask["stream"], false);
    assert!(ask["messages"][1]["content"]
        .as_str()
        .unwrap()
        .contains("user: I love jazz."));
    let list = ok(d, &["memory", "list"]);
    assert!(list
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["text"] == "The user loves jazz."));
    let exported = ok(d, &["memory", "export"]);
    assert_eq!(exported["memories"].as_array().unwrap().len(), 2);
    // --out saves the same document and says where; a folder gets a dated file in it.
    let file = d.join("mem.json");
    let saved = ok(d, &["memory", "export", "--out", file.to_str().unwrap()]);
    assert_eq!(saved["path"], file.to_str().unwrap());
    assert_eq!(saved["memories"], 2);
    let doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(doc["memories"], exported["memories"]);
    let into = ok(d, &["memory", "export", "--out", d.to_str().unwrap()]);
    let named = into["path"].as_str().unwrap();
    assert!(
        named.contains("yui-memories-yui-") && named.ends_with(".json"),
        "{named}"
    );
    assert!(Path::new(named).is_file());
    let out = yui(d, &["memory", "export", "--out", "/nonexistent-dir/x.json"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("could not be saved to"));
    // Paused: nothing asked.
    ok(d, &["memory", "pause"]);
    let r = ok(d, &["memory", "extract", "--base-url", &srv.base_url]);
    assert!(r["report"]["skipped"].as_str().unwrap().contains("paused"));
}
