//! MCP servers that do not start well, as real processes (issue 46): one that never answers
//! `initialize` (`sleep`) costs a tool call of another server nothing and a turn its grace at
//! most, and stopping it gives its start up at once; each way a start fails (no such command,
//! not executable, no such working directory, exits at once) is reported in plain words without
//! the OS's error code.

use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use yui_core::tools::mcp::{config, Hub, State};
use yui_core::turn::CancellationToken;

fn hostile_ok() -> Value {
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/hostile.py");
    json!({"command": "python3", "args": [py, "ok"]})
}

/// A server that starts and never answers: it just sleeps. `tag` makes its command line
/// unique, to find the process.
fn sleeper(tag: &str) -> Value {
    json!({"command": "sleep", "args": [tag]})
}

fn hub(servers: Value) -> Hub {
    let text = json!({ "mcpServers": servers }).to_string();
    let (servers, diagnostics) = config::parse(&text, Some(Path::new("/")));
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let config = config::McpConfig {
        servers,
        ..Default::default()
    };
    Hub::new(config, false, &HashSet::new())
}

/// Processes whose command line is exactly `sleep <tag>`.
fn sleeping(tag: &str) -> usize {
    let want = format!("sleep\0{tag}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|c| c == want.as_bytes())
        .count()
}

#[tokio::test]
async fn a_tool_call_waits_for_its_own_server_only() {
    let tag = "4601";
    let hub = hub(json!({"hang": sleeper(tag), "fx": hostile_ok()}));
    let t0 = Instant::now();
    let server = hub.server_of("mcp__fx__echo").expect("fx's tool").clone();
    assert_eq!(server.def.name, "fx");
    hub.settle_one(&server).await;
    let tool = hub
        .tools()
        .find(|t| t.def.name == "mcp__fx__echo")
        .expect("fx listed its tools");
    let out = tool
        .execute(&json!({"text": "hi"}), &CancellationToken::new())
        .await;
    let took = t0.elapsed();
    assert_eq!(out.as_text(), "echo: hi");
    // The hanging server's start timeout is 60 s; the call did not wait for it (nor start it).
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert_eq!(hub.get("hang").unwrap().state(), State::Idle);
    assert_eq!(sleeping(tag), 0);
    assert!(hub.server_of("mcp__nobody__echo").is_none());
    assert!(hub.server_of("look").is_none());
    hub.stop().await;
}

#[tokio::test]
async fn a_turn_waits_its_grace_for_a_hanging_server_and_stopping_gives_its_start_up() {
    let tag = "4602";
    let hub = hub(json!({"hang": sleeper(tag), "fx": hostile_ok()}));
    // fx started first (however long Python takes on a loaded machine): the grace is hang's.
    hub.settle_one(hub.get("fx").unwrap()).await;
    let t0 = Instant::now();
    let late = hub.settle_for_turn(Duration::from_millis(1500)).await;
    let took = t0.elapsed();
    assert_eq!(late, ["hang"]);
    assert!(took >= Duration::from_millis(1500), "{took:?}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert_eq!(hub.get("fx").unwrap().state(), State::Ready);
    assert_eq!(hub.get("hang").unwrap().state(), State::Starting);
    let names: Vec<String> = hub.tools().map(|t| t.def.name.clone()).collect();
    assert!(names.contains(&"mcp__fx__echo".to_string()), "{names:?}");
    assert!(names.iter().all(|n| !n.starts_with("mcp__hang__")));
    assert_eq!(sleeping(tag), 1, "the hanging server runs");

    // Exit: the start in progress gives up now, not when its 60 s timeout ends, and its
    // process is gone.
    let t0 = Instant::now();
    hub.stop().await;
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert_eq!(hub.get("hang").unwrap().state(), State::Idle);
    assert_eq!(sleeping(tag), 0, "the hanging server was stopped");
}

#[tokio::test]
async fn start_failures_are_reported_in_plain_words_without_the_os_code() {
    let dir = tempfile::tempdir().unwrap();
    let not_x: PathBuf = dir.path().join("mcp-not-executable");
    std::fs::write(&not_x, "#!/bin/sh\n").unwrap();
    let hub = hub(json!({
        "nothing": {"command": "/nonexistent/bin/mcp-nothing"},
        "notx": {"command": not_x},
        "nodir": {"command": "sh", "cwd": "/nonexistent/dir"},
        "quits": {"command": "sh", "args": ["-c", "echo 'boom: missing API key' >&2; exit 3"]},
    }));
    hub.settle(Duration::from_secs(30)).await;
    let reason = |name: &str| match hub.get(name).unwrap().state() {
        State::Failed(r) => r,
        s => panic!("{name}: {s:?}"),
    };
    assert_eq!(
        reason("nothing"),
        "the command /nonexistent/bin/mcp-nothing was not found"
    );
    assert_eq!(
        reason("notx"),
        format!("the command {} is not executable", not_x.display())
    );
    assert_eq!(
        reason("nodir"),
        "the working directory /nonexistent/dir does not exist"
    );
    assert_eq!(
        reason("quits"),
        "exited with status 3: boom: missing API key"
    );
    for s in &hub.servers {
        let r = reason(&s.def.name);
        assert!(!r.contains("os error"), "{r}");
    }
    // `yui tools check` and a call say the same.
    let problems = yui_core::tools::mcp::check(&hub);
    assert!(
        problems.contains(
            &"nothing: could not start: the command /nonexistent/bin/mcp-nothing was not found"
                .to_string()
        ),
        "{problems:?}"
    );
    hub.stop().await;
}

/// Reload or exit right after the servers were asked to start (the start's task not run yet):
/// nothing starts after the stop.
#[tokio::test]
async fn a_stop_right_after_warm_starts_nothing() {
    let tag = "4603";
    let hub = hub(json!({"hang": sleeper(tag)}));
    hub.warm();
    hub.stop().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(sleeping(tag), 0);
    assert_eq!(hub.get("hang").unwrap().state(), State::Idle);
}
