//! `yui mcp-serve` driven by rmcp's own client over the real binary's stdio, with the app's core
//! (a stage on a real SQLite file and the scripted Chat Completions server) serving its inbox:
//! the tools listed, `notify` becoming a proactive turn, `say` too, and an unknown character, a
//! missing argument and no app running as tool errors in plain words.

use crate::support::yui_command;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use yui_core::backend::{Backend, Transport};
use yui_core::clock::ShiftedClock;
use yui_core::paths::Paths;
use yui_core::stage::{inbox, BackendSource, Stage, StageEvent, StageOptions, Window};
use yui_core::turn::{Timeouts, TurnEvent, TurnStatus};
use yui_core::Store;
use yui_testkit::sse::*;

/// `yui mcp-serve` on `dir`, with rmcp's client on its pipes.
async fn client(dir: &Path) -> (RunningService<RoleClient, ()>, tokio::process::Child) {
    let mut cmd = tokio::process::Command::from(yui_command(dir));
    cmd.arg("mcp-serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    let mut child = cmd.spawn().expect("spawn yui mcp-serve");
    let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let service = ().serve((stdout, stdin)).await.expect("the MCP session started");
    (service, child)
}

async fn call(c: &RunningService<RoleClient, ()>, name: &str, args: Value) -> (bool, String) {
    let Value::Object(args) = args else { panic!() };
    let r: CallToolResult = c
        .peer()
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args))
        .await
        .expect("a tool result");
    let text = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("");
    (r.is_error == Some(true), text)
}

fn stage_on(
    dir: &Path,
    base_url: &str,
) -> (Stage, tokio::sync::mpsc::UnboundedReceiver<StageEvent>) {
    let paths = Paths::resolve(Some(dir.to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let backend = Backend {
        transport: Transport::ChatCompletions,
        base_url: base_url.into(),
        model: "m".into(),
        api_key: None,
        max_output_tokens: None,
        temperature: None,
        push_url: None,
        realtime_url: None,
    };
    let timeouts = Timeouts {
        connect: Duration::from_secs(2),
        headers: Duration::from_secs(5),
        stall: Duration::from_secs(5),
    };
    let opts = StageOptions {
        backend: BackendSource::Fixed { backend, timeouts },
        headless: true,
        ..StageOptions::default()
    };
    let (stage, rx) = Stage::new(store, Arc::new(ShiftedClock::at_hour(12)), paths, opts);
    stage.window_opened(Window::Main);
    let s = stage.clone();
    let sock = inbox::socket_path(dir);
    tokio::spawn(async move { s.serve_inbox(sock).await });
    (stage, rx)
}

async fn turn_reason(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<StageEvent>,
) -> (String, TurnStatus) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let ev = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .unwrap()
            .unwrap();
        if let StageEvent::Turn {
            origin: yui_core::stage::Origin::Proactive { reason, .. },
            event: TurnEvent::TurnEnd { status, .. },
            ..
        } = ev
        {
            return (reason, status);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_and_say_over_mcp_reach_the_running_app() {
    let server = ScriptServer::start(vec![chat_say("Build done!"), chat_say("Mum called.")]).await;
    let dir = tempfile::tempdir().unwrap();
    let (stage, mut rx) = stage_on(dir.path(), &server.base_url);
    let (c, _child) = client(dir.path()).await;
    let info = c.peer().peer_info().expect("server info").clone();
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("yui")
    );
    let tools = c.peer().list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["notify", "say"]);

    let got = call(
        &c,
        "notify",
        json!({"preset": "yui", "text": "the build finished", "importance": "high"}),
    )
    .await;
    assert_eq!(got, (false, "went".to_string()));
    let (reason, status) = turn_reason(&mut rx).await;
    assert_eq!(status, TurnStatus::Ok);
    assert_eq!(
        reason,
        "event from another program (importance high): \"the build finished\""
    );

    // The turn's end reaches this receiver a moment before its seat is free (under load, long
    // enough for say to find "a turn is running").
    let freed = Instant::now();
    while stage.running("yui").is_some() {
        assert!(
            freed.elapsed() < Duration::from_secs(10),
            "the turn never let go of its seat"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Right after a turn the cooldown holds a normal one; say waits for it.
    let got = call(
        &c,
        "say",
        json!({"preset": "yui", "text": "your mum called"}),
    )
    .await;
    assert_eq!(got, (false, "waiting: held: cooldown".to_string()));

    let got = call(&c, "notify", json!({"preset": "nobody", "text": "hi"})).await;
    assert_eq!(
        got,
        (
            true,
            "there is no character \"nobody\"; the characters are yui, kai".to_string()
        )
    );
    let got = call(&c, "notify", json!({"preset": "yui"})).await;
    assert_eq!(got, (true, "text is missing".to_string()));
    let got = call(
        &c,
        "notify",
        json!({"preset": "yui", "text": "x", "importance": "urgent"}),
    )
    .await;
    assert_eq!(
        got,
        (
            true,
            "importance must be low, normal or high, not \"urgent\"".to_string()
        )
    );
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_app_running_a_call_is_a_tool_error_in_plain_words() {
    let dir = tempfile::tempdir().unwrap();
    let (c, _child) = client(dir.path()).await;
    let (is_error, text) = call(&c, "say", json!({"preset": "yui", "text": "hello"})).await;
    assert!(is_error);
    assert!(text.starts_with("YUI is not running on "), "{text}");
    assert!(text.ends_with(": start the app first"), "{text}");
    c.cancel().await.unwrap();
}
