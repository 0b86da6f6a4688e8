//! `yui vocab`: the real binary over a fresh data dir.

use serde_json::Value;
use std::process::Command;

fn yui(dir: &std::path::Path, args: &[&str]) -> (bool, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_yui"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env_remove("YUI_LOG")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.success(), v, stderr)
}

#[test]
fn vocab_show_prints_the_vocabulary_and_both_transport_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, v, err) = yui(dir.path(), &["vocab", "show"]);
    assert!(ok, "{err}");
    assert_eq!(v["vocabulary"]["emotions"][0]["id"], "neutral");
    let chat = &v["declared"]["chat_completions"];
    assert_eq!(chat["type"], "function");
    assert_eq!(chat["function"]["name"], "generate_express");
    assert_eq!(
        chat["function"]["description"],
        "Places an expression cue (face, body motion, voice tone) on the speech around the call"
    );
    assert_eq!(
        chat["function"]["parameters"]["additionalProperties"],
        Value::Bool(false)
    );
    let resp = &v["declared"]["responses"];
    assert_eq!(resp["name"], "generate_express");
    assert_eq!(resp["strict"], Value::Bool(false));
    assert_eq!(resp["parameters"], chat["function"]["parameters"]);
    assert!(resp.get("function").is_none());
}

#[test]
fn vocab_select_reaches_the_schema_shown_next() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, v, err) = yui(dir.path(), &["vocab", "select", "wave", "nod"]);
    assert!(ok, "{err}");
    assert_eq!(
        v["declared"]["responses"]["parameters"]["properties"]["motion_id"]["enum"],
        serde_json::json!(["nod", "wave"])
    );
    let (ok, v, err) = yui(dir.path(), &["vocab", "select"]);
    assert!(ok, "{err}");
    let resp = &v["declared"]["responses"];
    assert!(resp["parameters"]["properties"].get("motion_id").is_none());
    assert_eq!(
        resp["description"],
        "Places an expression cue (face, voice tone) on the speech around the call"
    );
    let (ok, _, err) = yui(dir.path(), &["vocab", "select", "moonwalk"]);
    assert!(!ok);
    let e: Value = serde_json::from_str(err.trim()).unwrap();
    assert_eq!(e["message"], "unknown motion id moonwalk");
}

#[test]
fn tool_generate_express_answers_ok() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        r#"{"emotion_id":"happy"}"#,
        r#"{"motion_id":"wave","emotion_text":"cheerful","caption":"brightly"}"#,
        // A deselected or unknown id still answers ok: the window ignores what it cannot draw.
        r#"{"motion_id":"moonwalk"}"#,
    ] {
        let (ok, v, err) = yui(dir.path(), &["tool", "generate_express", "--args", args]);
        assert!(ok, "{err}");
        assert_eq!(v, Value::String("ok".into()), "{args}");
    }
}

#[test]
fn an_empty_vocabulary_declares_no_generate_express() {
    let dir = tempfile::tempdir().unwrap();
    let empty = r#"{"emotions":[],"motions":[],"motion_selection":[]}"#;
    let (ok, _, err) = yui(dir.path(), &["settings", "set", "yui.vocab", empty]);
    assert!(ok, "{err}");
    let (ok, v, err) = yui(dir.path(), &["vocab", "show"]);
    assert!(ok, "{err}");
    assert_eq!(v["declared"]["chat_completions"], Value::Null);
    assert_eq!(v["declared"]["responses"], Value::Null);
    let (ok, _, err) = yui(dir.path(), &["tool", "generate_express", "--args", "{}"]);
    assert!(!ok);
    assert!(err.contains("declares no tool named"), "{err}");
}
