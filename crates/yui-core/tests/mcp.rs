//! MCP servers as client tools, against real servers: `tests/fixtures/mcp/hostile.py` (a small
//! stdio server that misbehaves on purpose), and the registries' own servers that
//! `scripts/dev.sh` installs into `tests/fixtures/mcp/` — `@modelcontextprotocol/server-everything`
//! (npm; stdio and streamable HTTP) and `mcp-server-time` (PyPI, in `.venv`). A test that needs
//! one of those fails with a plain message when it is missing.

use crate::turn_support;

use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use turn_support::*;
use yui_core::backend::Transport;
use yui_core::tools::mcp::{config, Hub, McpTool, State};
use yui_core::tools::registry::{RegistryEnv, ToolRegistry};
use yui_core::tools::ToolOutput;
use yui_core::turn::CancellationToken;
use yui_core::WindowKind;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp")
}

fn hostile(mode: &str) -> Value {
    json!({"command": "python3", "args": [fixtures().join("hostile.py"), mode]})
}

/// A hub over `servers` (name → mcp.json entry), nothing started.
fn hub(servers: Value) -> Hub {
    let text = json!({ "mcpServers": servers }).to_string();
    let (servers, diagnostics) = config::parse(&text, Some(Path::new("/")));
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    Hub::new(
        config::McpConfig {
            servers,
            ..Default::default()
        },
        false,
        &HashSet::new(),
    )
}

async fn ready(hub: &Hub) -> &Hub {
    hub.settle(Duration::from_secs(30)).await;
    hub
}

fn tool(hub: &Hub, name: &str) -> McpTool {
    hub.tools()
        .find(|t| t.def.name == name)
        .unwrap_or_else(|| panic!("no tool {name}; states: {:?}", states(hub)))
}

fn states(hub: &Hub) -> Vec<State> {
    hub.servers.iter().map(|s| s.state()).collect()
}

async fn call(hub: &Hub, name: &str, args: Value) -> ToolOutput {
    tool(hub, name)
        .execute(&args, &CancellationToken::new())
        .await
}

async fn text(hub: &Hub, name: &str, args: Value) -> String {
    call(hub, name, args).await.as_text().to_string()
}

fn npm_server() -> PathBuf {
    let p = fixtures().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        p.is_file(),
        "{} is missing: install the test servers with `scripts/dev.sh deps` (npm ci in tests/fixtures/mcp)",
        p.display()
    );
    p
}

fn time_server() -> PathBuf {
    let p = fixtures().join(".venv/bin/mcp-server-time");
    assert!(
        p.is_file(),
        "{} is missing: install the test servers with `scripts/dev.sh deps` (a venv with mcp-server-time)",
        p.display()
    );
    p
}

// ------------------------------------------------------------------ hostile fixtures

#[tokio::test]
async fn a_well_behaved_server_answers_text_errors_and_bad_arguments() {
    let h = hub(json!({"fx": hostile("ok")}));
    ready(&h).await;
    assert_eq!(states(&h), [State::Ready]);
    let names: Vec<String> = h.tools().map(|t| t.def.name.clone()).collect();
    assert_eq!(
        names,
        [
            "mcp__fx__echo",
            "mcp__fx__fail",
            "mcp__fx__slow",
            "mcp__fx__crash",
            "mcp__fx__grow"
        ]
    );
    assert_eq!(
        text(&h, "mcp__fx__echo", json!({"text": "hi"})).await,
        "echo: hi"
    );
    assert_eq!(
        text(&h, "mcp__fx__fail", json!({})).await,
        "error: it went wrong"
    );
    assert_eq!(
        text(&h, "mcp__fx__echo", json!({"text": 5})).await,
        "error: invalid arguments: /text: 5 is not of type \"string\""
    );
    assert_eq!(
        text(&h, "mcp__fx__echo", json!({})).await,
        "error: invalid arguments: \"text\" is a required property"
    );
    h.stop().await;
}

#[tokio::test]
async fn a_server_that_never_answers_initialize_fails_within_its_timeout() {
    let mut e = hostile("hang");
    e["timeoutMs"] = json!(800);
    let h = hub(json!({"hang": e}));
    let t0 = Instant::now();
    ready(&h).await;
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert_eq!(
        states(&h),
        [State::Failed(
            "no answer to initialize within 800 ms".into()
        )]
    );
    assert!(h.tools().next().is_none());
}

#[tokio::test]
async fn a_server_that_dies_at_start_says_why() {
    let h = hub(json!({"die": hostile("die")}));
    ready(&h).await;
    assert_eq!(
        states(&h),
        [State::Failed(
            "exited with status 1: boom: missing API key".into()
        )]
    );
    let h = hub(json!({"nope": {"command": "/nonexistent/server"}}));
    ready(&h).await;
    // In plain words, without the OS's error code (which the log keeps).
    assert_eq!(
        states(&h),
        [State::Failed(
            "the command /nonexistent/server was not found".into()
        )]
    );
}

#[tokio::test]
async fn a_server_that_exits_mid_call_is_reported_and_restarted_by_the_next_call() {
    let h = hub(json!({"fx": hostile("ok")}));
    ready(&h).await;
    assert_eq!(
        text(&h, "mcp__fx__crash", json!({})).await,
        "error: fx stopped: exited with status 3: crashing on purpose"
    );
    assert_eq!(
        states(&h),
        [State::Stopped(
            "exited with status 3: crashing on purpose".into()
        )]
    );
    // The tools stay declared while it is down; the next call starts it again.
    assert!(h.tools().any(|t| t.def.name == "mcp__fx__echo"));
    assert_eq!(
        text(&h, "mcp__fx__echo", json!({"text": "back"})).await,
        "echo: back"
    );
    assert_eq!(states(&h), [State::Ready]);
    // A second crash right away: the restart waits its backoff (1 s), within the call's time.
    let _ = text(&h, "mcp__fx__crash", json!({})).await;
    let t0 = Instant::now();
    assert_eq!(
        text(&h, "mcp__fx__echo", json!({"text": "again"})).await,
        "echo: again"
    );
    assert!(
        t0.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t0.elapsed()
    );
    h.stop().await;
}

#[tokio::test]
async fn garbage_and_floods_on_stdout_do_not_break_the_calls() {
    let h = hub(json!({"junk": hostile("garbage"), "flood": hostile("flood")}));
    ready(&h).await;
    assert_eq!(states(&h), [State::Ready, State::Ready]);
    assert_eq!(
        text(&h, "mcp__junk__echo", json!({"text": "a"})).await,
        "echo: a"
    );
    let t0 = Instant::now();
    assert_eq!(
        text(&h, "mcp__flood__echo", json!({"text": "b"})).await,
        "echo: b"
    );
    assert!(t0.elapsed() < Duration::from_secs(20));
    h.stop().await;
}

#[tokio::test]
async fn a_server_listing_500_tools_gets_64_declared_and_a_diagnostic() {
    let h = hub(json!({"many": hostile("many")}));
    ready(&h).await;
    assert_eq!(h.tools().count(), 64);
    let problems = yui_core::tools::mcp::check(&h);
    assert_eq!(
        problems,
        ["many: the server lists more than 64 tools: only the first 64 are declared"]
    );
    h.stop().await;
}

#[tokio::test]
async fn a_stopped_turn_sends_notifications_cancelled_and_a_timeout_answers() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("notes");
    let mut e = hostile("ok");
    e["env"] = json!({"MCP_LOG": log});
    // The timeout bounds the start too: 1.5 s was once too short for python to answer
    // initialize on a loaded machine (lanes of test binaries side by side).
    e["timeoutMs"] = json!(4000);
    let h = hub(json!({"fx": e}));
    ready(&h).await;
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        c2.cancel();
    });
    let t0 = Instant::now();
    let out = tool(&h, "mcp__fx__slow")
        .execute(&json!({"ms": 10000}), &cancel)
        .await;
    assert_eq!(out.as_text(), "error: turn stopped");
    assert!(t0.elapsed() < Duration::from_secs(1));
    assert_eq!(
        text(&h, "mcp__fx__slow", json!({"ms": 10000})).await,
        "error: mcp__fx__slow timed out after 4000 ms"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let notes = std::fs::read_to_string(&log).unwrap();
    let cancelled: Vec<Value> = notes
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["method"] == "notifications/cancelled")
        .collect();
    assert_eq!(cancelled.len(), 2, "{notes}");
    assert_eq!(cancelled[0]["params"]["reason"], "turn stopped");
    assert_eq!(cancelled[1]["params"]["reason"], "timed out");
    assert_ne!(
        cancelled[0]["params"]["requestId"],
        cancelled[1]["params"]["requestId"]
    );
    h.stop().await;
}

#[tokio::test]
async fn a_list_change_reaches_the_declared_tools() {
    let h = hub(json!({"fx": hostile("ok")}));
    ready(&h).await;
    assert_eq!(text(&h, "mcp__fx__grow", json!({})).await, "grown");
    let mut states = h.servers[0].watch();
    let _ = tokio::time::timeout(
        Duration::from_secs(5),
        states.wait_for(|_| h.servers[0].listing().tools.len() == 6),
    )
    .await;
    assert!(h.tools().any(|t| t.def.name == "mcp__fx__extra0"));
    h.stop().await;
}

#[tokio::test]
async fn stopping_the_hub_stops_the_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let mut e = hostile("ok");
    e["env"] = json!({"MCP_PID": pid_file});
    let h = hub(json!({"fx": e}));
    ready(&h).await;
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let alive = |pid: i32| unsafe { libc::kill(pid, 0) } == 0;
    assert!(alive(pid));
    h.stop().await;
    assert_eq!(states(&h), [State::Idle]);
    let t0 = Instant::now();
    while alive(pid) && t0.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid), "the server outlived its stop");
}

// ------------------------------------------------------------------ registry and a turn

fn declared(h: &Harness, kind: WindowKind, hub: Arc<Hub>) -> Vec<String> {
    let mut env = RegistryEnv::load(&h.store, "yui", kind).unwrap();
    env.mcp = hub;
    ToolRegistry::for_window(&env)
        .unwrap()
        .names()
        .iter()
        .map(|s| s.to_string())
        .collect()
}

#[tokio::test]
async fn main_and_pet_windows_declare_them_last_and_per_character() {
    let h = Harness::new();
    let mut fx = hostile("ok");
    fx["defaultEnabled"] = json!(false);
    let hub = Arc::new(hub(json!({"fx": fx})));
    ready(&hub).await;
    let main = declared(&h, WindowKind::Main, hub.clone());
    assert!(
        !main.iter().any(|n| n.starts_with("mcp__")),
        "defaultEnabled false"
    );
    let known = hub.known();
    yui_core::tools::command::select::toggle_among(&h.store, &known, "yui", "mcp__fx__echo", true)
        .unwrap();
    let main = declared(&h, WindowKind::Main, hub.clone());
    assert_eq!(main.last().unwrap(), "mcp__fx__echo");
    let pet = declared(&h, WindowKind::Pet, hub.clone());
    assert_eq!(pet.last().unwrap(), "mcp__fx__echo");
    for kind in [WindowKind::Phone, WindowKind::BrowserBuild] {
        assert!(!declared(&h, kind, hub.clone())
            .iter()
            .any(|n| n.starts_with("mcp__")));
    }
    let off = Arc::new(Hub::new(hub.config.clone(), true, &HashSet::new()));
    assert!(!declared(&h, WindowKind::Main, off)
        .iter()
        .any(|n| n.starts_with("mcp__")));
    hub.stop().await;
}

/// The app's turns never wait for a server (issue 46): the window opened and warmed the
/// servers; its first turn builds its registry at once with the ready server's tools, and a
/// server that never answers `initialize` is left out, not waited for.
#[tokio::test]
async fn a_windows_first_turn_declares_the_ready_servers_at_once_and_never_waits_for_a_hanging_one()
{
    let h = Harness::new();
    let hang = json!({"command": "sleep", "args": ["4604"]});
    let hub = Arc::new(hub(json!({"hang": hang, "fx": hostile("ok")})));
    hub.warm();
    hub.settle_one(hub.get("fx").unwrap()).await;
    let t0 = Instant::now();
    let names = declared(&h, WindowKind::Main, hub.clone());
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(names.contains(&"mcp__fx__echo".to_string()), "{names:?}");
    assert!(
        names.iter().all(|n| !n.starts_with("mcp__hang__")),
        "{names:?}"
    );
    assert_eq!(hub.get("hang").unwrap().state(), State::Starting);
    hub.stop().await;
}

#[tokio::test]
async fn a_turn_calls_an_mcp_tool_end_to_end() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_call(0, "call_9", "mcp__fx__echo", r#"{"text":"from the model"}"#),
            c_finish("tool_calls"),
            done(),
        ]),
        Reply::Sse(vec![c_text("It echoed."), c_finish("stop"), done()]),
    ])
    .await;
    let h = Harness::new();
    let hub = Arc::new(hub(json!({"fx": hostile("ok")})));
    ready(&hub).await;
    let mut env = RegistryEnv::load(&h.store, "yui", WindowKind::Main).unwrap();
    env.mcp = hub.clone();
    let reg = ToolRegistry::for_window(&env).unwrap();
    let tools = reg.chat_tools().unwrap();
    let echo = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__fx__echo")
        .unwrap();
    assert_eq!(echo["function"]["parameters"]["required"], json!(["text"]));
    let (events, _) = h
        .run(
            &h.request(&srv.base_url, Transport::ChatCompletions, "echo something"),
            &reg,
        )
        .await;
    let results = of_type(&events, "tool_result");
    assert_eq!(results[0]["result"], "echo: from the model");
    let second = &srv.bodies()[1];
    let tool_msg = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert_eq!(tool_msg["content"], "echo: from the model");
    assert_eq!(tool_msg["tool_call_id"], "call_9");
    hub.stop().await;
}

// ------------------------------------------------------------------ servers from the registries

#[tokio::test]
async fn server_everything_over_stdio() {
    let js = npm_server();
    let h = hub(json!({"everything": {"command": "node", "args": [js, "stdio"]}}));
    ready(&h).await;
    assert_eq!(states(&h), [State::Ready]);
    assert_eq!(
        text(&h, "mcp__everything__echo", json!({"message": "hi"})).await,
        "Echo: hi"
    );
    assert!(
        text(&h, "mcp__everything__get-sum", json!({"a": 2, "b": 3}))
            .await
            .contains('5')
    );
    assert!(text(&h, "mcp__everything__get-sum", json!({"a": 2}))
        .await
        .starts_with("error: invalid arguments: "));
    match call(&h, "mcp__everything__get-tiny-image", json!({})).await {
        ToolOutput::Images { images, .. } => {
            assert_eq!(images.len(), 1);
            assert!(images[0].starts_with("data:image/jpeg;base64,"));
        }
        o => panic!("{o:?}"),
    }
    let t0 = Instant::now();
    let long = text(
        &h,
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 1, "steps": 2}),
    )
    .await;
    assert!(
        long.starts_with("Long running operation completed"),
        "{long}"
    );
    assert!(t0.elapsed() >= Duration::from_millis(900));
    h.stop().await;
}

/// Node 18 (Debian 12's nodejs, what `scripts/dev.sh` installs on a fresh machine) has Web Crypto
/// as a global only behind this flag; the server's HTTP transport needs it (`crypto.randomUUID`).
/// Node 19 and later have it by default.
fn node_18_webcrypto() -> Vec<&'static str> {
    let v = std::process::Command::new("node").arg("--version").output();
    let major = v
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| {
            s.trim()
                .trim_start_matches('v')
                .split('.')
                .next()?
                .parse::<u32>()
                .ok()
        });
    match major {
        Some(18) => vec!["--experimental-global-webcrypto"],
        _ => Vec::new(),
    }
}

/// server-everything's HTTP transport on a free port, once it says it listens. Its own line is
/// the signal: the port is picked before node binds it, and under parallel tests another
/// process can take it first (node then says so and exits, and a connect would reach the other
/// process), so that is tried again on another port.
async fn everything_over_http() -> (tokio::process::Child, u16) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let js = npm_server();
    for _ in 0..3 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = tokio::process::Command::new("node")
            .args(node_18_webcrypto())
            .arg(&js)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        // Node takes 0.7 s to listen on a quiet machine and several on a loaded one.
        let said = tokio::time::timeout(Duration::from_secs(60), async {
            let mut said = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains("listening on port") {
                    return Ok(());
                }
                said.push(line);
            }
            Err(said)
        })
        .await
        .expect("server-everything did not listen within a minute");
        match said {
            Ok(()) => {
                // The rest of its log is not read: drained, so a full pipe never blocks it.
                tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
                return (child, port);
            }
            Err(said) if said.iter().any(|l| l.contains("already in use")) => continue,
            Err(said) => panic!("server-everything exited: {}", said.join("\n")),
        }
    }
    panic!("server-everything found no free port in 3 tries");
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let (mut child, port) = everything_over_http().await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let h = hub(json!({"web": {"url": url, "headers": {"X-Test": "1"}}}));
    ready(&h).await;
    assert_eq!(states(&h), [State::Ready]);
    assert_eq!(
        text(&h, "mcp__web__echo", json!({"message": "over http"})).await,
        "Echo: over http"
    );
    assert!(matches!(
        call(&h, "mcp__web__get-tiny-image", json!({})).await,
        ToolOutput::Images { .. }
    ));
    // The server goes away: the call says so; the next one tries again and says so again.
    child.kill().await.unwrap();
    let gone = text(&h, "mcp__web__echo", json!({"message": "x"})).await;
    assert!(gone.starts_with("error: web "), "{gone}");
    h.stop().await;
}

#[tokio::test]
async fn mcp_server_time_from_pypi() {
    let bin = time_server();
    let h = hub(json!({"time": {"command": bin, "args": ["--local-timezone", "UTC"]}}));
    ready(&h).await;
    assert_eq!(states(&h), [State::Ready]);
    let now = text(
        &h,
        "mcp__time__get_current_time",
        json!({"timezone": "Asia/Tokyo"}),
    )
    .await;
    let v: Value = serde_json::from_str(&now).unwrap();
    assert_eq!(v["timezone"], "Asia/Tokyo");
    let bad = text(
        &h,
        "mcp__time__get_current_time",
        json!({"timezone": "Mars/Base"}),
    )
    .await;
    assert!(
        bad.starts_with("error: ") && bad.contains("Mars/Base"),
        "{bad}"
    );
    h.stop().await;
}

#[test]
fn the_documented_example_reads_without_a_diagnostic() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples/mcp.json");
    let c = config::load(&path, Some(Path::new("/home/u")));
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let names: Vec<&str> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["time", "everything", "home"]);
}
