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

/// `yui vocab voice` / `say` / `sprites`: the voice switch, a spoken line through a fake
/// `spd-say` on the PATH, and a sprite-folder check.
mod voice_and_sprites {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn yui_path(
        dir: &std::path::Path,
        path: &std::ffi::OsStr,
        args: &[&str],
    ) -> (bool, Value, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_yui"))
            .arg("--data-dir")
            .arg(dir)
            .args(args)
            .env_remove("YUI_LOG")
            .env("PATH", path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        (
            out.status.success(),
            serde_json::from_str(&stdout).unwrap_or(Value::Null),
            stderr,
        )
    }

    #[test]
    fn voice_switch_and_a_spoken_line() {
        let dir = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        let nobin = bin.path().join("empty");
        std::fs::create_dir(&nobin).unwrap();
        let (ok, v, _) = yui_path(dir.path(), nobin.as_os_str(), &["vocab", "voice"]);
        assert!(ok);
        assert_eq!(v["enabled"], false);
        assert_eq!(v["available"], false);
        assert_eq!(
            v["status"],
            "speech-dispatcher: spd-say not found; install the speech-dispatcher package to hear replies"
        );
        let (ok, v, _) = yui(dir.path(), &["vocab", "voice", "--on"]);
        assert!(ok);
        assert_eq!(v["enabled"], true);

        let log = bin.path().join("calls.log");
        let prog = bin.path().join("spd-say");
        std::fs::write(
            &prog,
            format!("#!/bin/sh\necho \"$*\" >> '{}'\n", log.display()),
        )
        .unwrap();
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([bin.path()]).unwrap();
        let (ok, v, err) = yui_path(
            dir.path(),
            &path,
            &["vocab", "say", "Good night.", "--caption", "whispering"],
        );
        assert!(ok, "{err}");
        assert_eq!(v["spoken"], "Good night.");
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "--wait --application-name yui --rate -10 --volume -50 -- Good night.\n"
        );
        let (ok, _, err) = yui_path(dir.path(), nobin.as_os_str(), &["vocab", "say", "Hi"]);
        assert!(!ok);
        assert!(err.contains("spd-say not found"), "{err}");
    }

    #[test]
    fn sprites_check_names_missing_and_skipped_files() {
        let dir = tempfile::tempdir().unwrap();
        let sprites = tempfile::tempdir().unwrap();
        std::fs::write(sprites.path().join("happy.png"), b"not a png").unwrap();
        let (ok, v, err) = yui(
            dir.path(),
            &["vocab", "sprites", sprites.path().to_str().unwrap()],
        );
        assert!(ok, "{err}");
        assert_eq!(v["emotions"], serde_json::json!({}));
        assert_eq!(v["missing"].as_array().unwrap().len(), 8);
        assert_eq!(v["skipped"][0]["file"], "happy.png");
        assert_eq!(v["skipped"][0]["reason"], "not a PNG image");
    }
}
