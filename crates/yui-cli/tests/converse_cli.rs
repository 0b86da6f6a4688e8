//! `yui converse` against the test kit's scripted Chat Completions server on 127.0.0.1: the
//! user's turn, the addressed turns that follow (each line names its character), the chain cap
//! and `[SILENT]`, and the exit code.

use crate::support;

use serde_json::{json, Value};
use support::yui_command;
use yui_testkit::sse::*;

fn say_to(text: &str, to: &str) -> [Reply; 2] {
    [
        Reply::Sse(vec![
            c_text(text),
            c_call(
                0,
                "c1",
                "address_character",
                &json!({ "to": to }).to_string(),
            ),
            c_finish("tool_calls"),
            done(),
        ]),
        Reply::Sse(vec![c_finish("stop"), done()]),
    ]
}

/// Run `yui converse` (off the test's runtime: the binary blocks) and parse its JSON lines.
async fn converse(dir: &std::path::Path, base_url: &str, extra: &[&str]) -> (i32, Vec<Value>) {
    let mut cmd = yui_command(dir);
    cmd.args([
        "converse",
        "--message",
        "talk to Kai",
        "--base-url",
        base_url,
        "--model",
        "m",
    ]);
    cmd.args(["--transport", "chat_completions"]).args(extra);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (out.status.code().unwrap_or(-1), lines)
}

fn ends(lines: &[Value]) -> Vec<(String, String)> {
    lines
        .iter()
        .filter(|l| l["type"] == "turn_end")
        .map(|l| {
            (
                l["preset"].as_str().unwrap().to_string(),
                l["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converse_runs_the_addressed_turns_and_ends_at_silent() {
    let dir = tempfile::tempdir().unwrap();
    let [a1, a2] = say_to("Kai, what do you think?", "Kai");
    let [b1, b2] = say_to("Yui, I like it.", "Yui");
    let silent = Reply::Sse(vec![c_text("[SILENT]"), c_finish("stop"), done()]);
    let server = ScriptServer::start(vec![a1, a2, b1, b2, silent]).await;
    let (code, lines) = converse(dir.path(), &server.base_url, &[]).await;
    assert_eq!(code, 0, "{lines:?}");
    assert_eq!(
        ends(&lines),
        [
            ("yui".into(), "ok".into()),
            ("kai".into(), "ok".into()),
            ("yui".into(), "silent".into())
        ]
    );
    let handovers: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "character_addressed")
        .map(|l| (l["from"].clone(), l["to"].clone(), l["text"].clone()))
        .collect();
    assert_eq!(
        handovers,
        [
            (json!("yui"), json!("kai"), json!("Kai, what do you think?")),
            (json!("kai"), json!("yui"), json!("Yui, I like it."))
        ]
    );
    // The silent reply is not in the stream: no speech line of yui's last turn.
    let speech: Vec<_> = lines
        .iter()
        .filter(|l| l["type"] == "speech")
        .map(|l| (l["preset"].as_str().unwrap(), l["delta"].as_str().unwrap()))
        .collect();
    assert_eq!(
        speech,
        [
            ("yui", "Kai, what do you think?"),
            ("kai", "Yui, I like it.")
        ]
    );
    assert!(lines
        .iter()
        .filter(|l| l["preset"] == "kai")
        .all(|l| l["addressed_by"] == "yui"));
    assert_eq!(server.bodies().len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converse_stops_at_the_chain_cap_set_in_settings() {
    let dir = tempfile::tempdir().unwrap();
    let set = yui_command(dir.path())
        .args(["settings", "set", "rate_limit.addressed_chain_max", "2"])
        .output()
        .unwrap();
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    let mut replies = Vec::new();
    for i in 0..6 {
        replies.extend(say_to(
            &format!("line {i}"),
            if i % 2 == 0 { "Kai" } else { "Yui" },
        ));
    }
    let server = ScriptServer::start(replies).await;
    let (code, lines) = converse(dir.path(), &server.base_url, &[]).await;
    assert_eq!(code, 0);
    let who: Vec<_> = ends(&lines).into_iter().map(|(p, _)| p).collect();
    assert_eq!(who, ["yui", "kai", "yui"]);
    assert_eq!(server.bodies().len(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converse_exits_1_when_the_users_turn_fails() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptServer::start(vec![Reply::Status(500, "boom".into())]).await;
    let (code, lines) = converse(dir.path(), &server.base_url, &[]).await;
    assert_eq!(code, 1, "{lines:?}");
    assert_eq!(ends(&lines), [("yui".into(), "error".into())]);
}
