//! Configured command client tools, with real processes: the fixtures under
//! `tests/fixtures/command_tools/` speak (or break) the version 4 frames.

use crate::turn_support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use turn_support::*;
use yui_core::backend::Transport;
use yui_core::settings;
use yui_core::tools::command::run::RunConfig;
use yui_core::tools::command::{self, config, select, CommandTool, Loaded, Selection};
use yui_core::tools::registry::{RegistryEnv, ToolRegistry};
use yui_core::tools::{CallScope, ToolContext};
use yui_core::turn::CancellationToken;
use yui_core::WindowKind;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/command_tools")
        .join(name)
}

fn def(name: &str, program: &Path, args: &[&str], timeout_ms: u64) -> Value {
    json!({
        "name": name, "defaultEnabled": true, "description": format!("test tool {name}"),
        "parameters": {"type": "object", "properties": {"who": {"type": "string"}, "text": {"type": "string"}}, "additionalProperties": false},
        "command": program.to_str().unwrap(), "args": args, "executionTimeoutMs": timeout_ms,
    })
}

fn loaded(entries: Vec<Value>) -> Loaded {
    let (definitions, diagnostics) = config::parse_entries(&entries, Some(Path::new("/home/u")));
    Loaded {
        definitions,
        diagnostics,
        ..Loaded::default()
    }
}

fn tool(entry: Value) -> CommandTool {
    let l = loaded(vec![entry]);
    assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
    CommandTool::with_config(
        l.definitions[0].clone(),
        RunConfig {
            grace: Duration::from_millis(300),
            drain: Duration::from_millis(200),
        },
    )
}

/// A context whose status lines land in the returned list.
fn ctx(h: &Harness) -> (ToolContext, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    (
        ToolContext {
            store: h.store.clone(),
            clock: h.clock.clone(),
            preset_id: "yui".into(),
            window: WindowKind::Main,
            turn_id: "t1".into(),
            call: CallScope {
                call_id: Some("call_1".into()),
                progress: Some(Arc::new(move |s| s2.lock().unwrap().push(s))),
            },
        },
        seen,
    )
}

async fn call(t: &CommandTool, args: Value) -> (String, Vec<String>) {
    let h = Harness::new();
    let (c, seen) = ctx(&h);
    let out = t.execute(&args, &c, &CancellationToken::new()).await;
    let seen = seen.lock().unwrap().clone();
    (out, seen)
}

async fn misbehave(mode: &str, extra: &str) -> String {
    let t = tool(def(
        "misbehave",
        &fixture("misbehave.sh"),
        &[mode, extra],
        5000,
    ));
    call(&t, json!({})).await.0
}

#[tokio::test]
async fn bash_and_jq_tool_speaks_version_4() {
    let t = tool(def("greet", &fixture("greet.sh"), &[], 10_000));
    let (out, status) = call(&t, json!({"who": "Ann"})).await;
    // sessionId = the turn, agentId = the preset, callId = the model's call id.
    assert_eq!(out, "hello, Ann (t1 yui call_1)");
    assert_eq!(status, vec!["running greet… Ann".to_string()]);
}

#[tokio::test]
async fn node_tool_uses_exec() {
    let t = tool(def("shout", &fixture("shout.mjs"), &[], 10_000));
    let (out, status) = call(&t, json!({"text": "hello"})).await;
    assert_eq!(out, "HELLO hello/env-ok exit=0 timedOut=false");
    assert_eq!(status, vec!["running shout…".to_string()]);
}

/// Whether `pid` is gone (or a zombie nobody has reaped yet: it runs nothing).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

fn pids(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file)
        .expect("pid file")
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

async fn all_gone(pids: &[i32], within: Duration) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if pids.iter().all(|&p| gone(p)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn a_hanging_tool_and_its_grandchild_are_gone_after_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pids");
    let t = tool(def(
        "misbehave",
        &fixture("misbehave.sh"),
        &["hang", file.to_str().unwrap()],
        1500,
    ));
    let started = Instant::now();
    let (out, status) = call(&t, json!({})).await;
    assert_eq!(out, "error: misbehave timed out after 1500 ms");
    assert_eq!(status, vec!["running misbehave…".to_string()]);
    // The timeout covers prepare and execute; the stop takes at most the grace on top.
    assert!(started.elapsed() < Duration::from_millis(1500 + 300 + 700));
    let p = pids(&file);
    assert_eq!(p.len(), 2);
    assert!(
        all_gone(&p, Duration::from_secs(2)).await,
        "still running: {p:?}"
    );
}

#[tokio::test]
async fn the_group_is_killed_even_when_the_leader_exited_first() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pids");
    let out = misbehave("leader-exits", file.to_str().unwrap()).await;
    assert_eq!(
        out,
        "error: misbehave exited without a result (exited with status 0)"
    );
    let p = pids(&file);
    // The grandchild ignores SIGTERM: only the SIGKILL after the grace stops it.
    assert!(
        all_gone(&p, Duration::from_secs(2)).await,
        "still running: {p:?}"
    );
}

#[tokio::test]
async fn stopping_the_turn_stops_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pids");
    let t = tool(def(
        "misbehave",
        &fixture("misbehave.sh"),
        &["hang", file.to_str().unwrap()],
        30_000,
    ));
    let h = Harness::new();
    let (c, _) = ctx(&h);
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        c2.cancel();
    });
    let out = t.execute(&json!({}), &c, &cancel).await;
    assert_eq!(out, "error: turn stopped");
    assert!(all_gone(&pids(&file), Duration::from_secs(2)).await);
}

#[tokio::test]
async fn protocol_violations_fail_the_call() {
    assert_eq!(
        misbehave("stderr-flood", "").await,
        "error: misbehave wrote more than 1 MiB to stderr"
    );
    assert_eq!(
        misbehave("two-results", "").await,
        "error: misbehave sent a second result"
    );
    assert_eq!(
        misbehave("result-before-execute", "").await,
        "error: misbehave sent a result before execute"
    );
    assert_eq!(
        misbehave("unknown-field", "").await,
        "error: misbehave sent a malformed frame: the ready frame has an unknown field \"colour\""
    );
    assert_eq!(
        misbehave("exit-after-result", "").await,
        "error: misbehave exited with status 3 after its result: it went wrong after all"
    );
    assert_eq!(
        misbehave("no-ready", "").await,
        "error: misbehave exited without a ready frame (exited with status 0)"
    );
    assert_eq!(
        misbehave("two-ready", "").await,
        "error: misbehave sent a second ready frame"
    );
    assert!(misbehave("not-json", "")
        .await
        .starts_with("error: misbehave sent a malformed frame: a line is not JSON"));
    assert_eq!(
        misbehave("reused-id", "").await,
        "error: misbehave reused the exec request id \"a\""
    );
    // A communicated failure is the model's answer as written.
    assert_eq!(
        misbehave("fail-ok-false", "").await,
        "the lamp is unplugged"
    );
}

#[tokio::test]
async fn arguments_failing_the_schema_start_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let script = dir.path().join("touch.sh");
    std::fs::write(&script, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let t = tool(def("touchy", &script, &[], 5000));
    let (out, status) = call(&t, json!({"who": 5})).await;
    assert!(
        out.starts_with("error: invalid arguments: /who: 5 is not of type \"string\""),
        "{out}"
    );
    let (out, _) = call(&t, json!({"colour": "red"})).await;
    assert!(out.starts_with("error: invalid arguments: "), "{out}");
    assert!(status.is_empty());
    assert!(!marker.exists(), "no process may start");
    // Valid arguments do start it (the marker proves the check above could fail).
    let (out, _) = call(&t, json!({"who": "x"})).await;
    assert!(
        out.starts_with("error: touchy exited without a ready frame"),
        "{out}"
    );
    assert!(marker.exists());
}

#[tokio::test]
async fn a_missing_executable_is_a_plain_error() {
    let t = tool(def("ghost", Path::new("/nonexistent/yui-ghost"), &[], 5000));
    let (out, _) = call(&t, json!({})).await;
    assert!(
        out.starts_with("error: ghost could not start (/nonexistent/yui-ghost):"),
        "{out}"
    );
}

// ------------------------------------------------------------------ definitions

#[test]
fn definitions_are_checked_entry_by_entry() {
    let good = |name: &str| def(name, Path::new("./bin/tool"), &[], 1000);
    let mut extra = good("extra_fields");
    extra["colour"] = json!("red");
    let l = loaded(vec![
        good("notify_desktop"),
        good("notify_desktop"),
        good("Notify_desktop"),
        good("browser"),
        good("my_generate_express"),
        json!({"name": "no_schema", "defaultEnabled": true, "description": "d", "command": "x"}),
        json!({"name": "bad_root", "defaultEnabled": true, "description": "d", "command": "x", "parameters": {"type": "string"}}),
        json!({"name": "bad_timeout", "defaultEnabled": true, "description": "d", "command": "x", "parameters": {"type": "object"}, "executionTimeoutMs": 0}),
        json!({"name": "no_default", "description": "d", "command": "x", "parameters": {"type": "object"}}),
        json!({"name": "plain", "defaultEnabled": false, "description": "d", "command": "tau-notify", "parameters": {"type": "object"}}),
        extra,
        json!("not an object"),
    ]);
    let names: Vec<&str> = l.definitions.iter().map(|d| d.name.as_str()).collect();
    // Names are exact and case-sensitive: Notify_desktop is another tool.
    assert_eq!(
        names,
        vec!["notify_desktop", "Notify_desktop", "plain", "extra_fields"]
    );
    let diag: Vec<String> = l.diagnostics.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        diag,
        vec![
            "clientTools[1] (notify_desktop): duplicate name \"notify_desktop\": an earlier entry has it",
            "clientTools[3] (browser): \"browser\" is the name of a built-in tool",
            "clientTools[4] (my_generate_express): \"my_generate_express\" ends in generate_express: such calls play as expression cues",
            "clientTools[5] (no_schema): parameters is required (an object JSON Schema)",
            "clientTools[6] (bad_root): parameters must be a JSON Schema with \"type\": \"object\"",
            "clientTools[7] (bad_timeout): executionTimeoutMs must be a positive integer (milliseconds)",
            "clientTools[8] (no_default): defaultEnabled is required (true or false)",
            "clientTools[11]: an entry must be a JSON object",
        ]
    );
    // A path command resolves from home; a bare one stays for PATH; the default timeout is 60 s.
    assert_eq!(l.definitions[0].program, PathBuf::from("/home/u/bin/tool"));
    assert_eq!(l.definitions[2].program, PathBuf::from("tau-notify"));
    assert_eq!(l.definitions[2].execution_timeout_ms, 60_000);
}

#[test]
fn the_config_file_is_read_whole_or_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("client-tools.json");
    assert!(
        config::load(&path, None).diagnostics.is_empty(),
        "a missing file is no tools"
    );
    std::fs::write(&path, "{ nope").unwrap();
    let l = config::load(&path, None);
    assert!(l.definitions.is_empty());
    assert!(
        l.diagnostics[0].message.contains("is not valid JSON"),
        "{:?}",
        l.diagnostics
    );
    std::fs::write(
        &path,
        json!({"clientTools": [def("greet", &fixture("greet.sh"), &[], 1000)]}).to_string(),
    )
    .unwrap();
    let l = config::load(&path, Some(dir.path()));
    assert_eq!(l.definitions.len(), 1, "{:?}", l.diagnostics);
    assert!(l.diagnostics.is_empty());
}

// ------------------------------------------------------------------ selection and declaration

fn declared(h: &Harness, kind: WindowKind, loaded: &Arc<Loaded>) -> Vec<String> {
    let mut env = RegistryEnv::load(&h.store, "yui", kind).unwrap();
    env.client_tools = loaded.clone();
    ToolRegistry::for_window(&env)
        .unwrap()
        .names()
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn three() -> Arc<Loaded> {
    let mut a = def("alpha", Path::new("/bin/true"), &[], 1000);
    let b = def("beta", Path::new("/bin/true"), &[], 1000);
    let mut c = def("gamma", Path::new("/bin/true"), &[], 1000);
    a["defaultEnabled"] = json!(true);
    c["defaultEnabled"] = json!(false);
    Arc::new(loaded(vec![a, b, c]))
}

fn built_ins(h: &Harness, kind: WindowKind) -> Vec<String> {
    declared(h, kind, &Arc::new(Loaded::default()))
}

#[test]
fn selection_has_three_states() {
    let h = Harness::new();
    let l = three();
    let base = built_ins(&h, WindowKind::Main);
    let with = |extra: &[&str]| {
        let mut v = base.clone();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    // No entry: the defaultEnabled ones, after the built-in tools.
    assert_eq!(declared(&h, WindowKind::Main, &l), with(&["alpha", "beta"]));
    // A list: exactly the known names in it, once each, whatever defaultEnabled says.
    settings::set(
        &h.store,
        settings::ENABLED_CLIENT_TOOLS,
        &json!({"yui": ["gamma", "nope", "gamma", "Alpha"]}),
    )
    .unwrap();
    assert_eq!(declared(&h, WindowKind::Main, &l), with(&["gamma"]));
    // []: none.
    select::set(&h.store, "yui", &Selection::None).unwrap();
    assert_eq!(declared(&h, WindowKind::Main, &l), base);
    // Another character keeps its own (default) selection.
    let mut env = RegistryEnv::load(&h.store, "kai", WindowKind::Pet).unwrap();
    env.client_tools = l.clone();
    let names = ToolRegistry::for_window(&env).unwrap().names().join(",");
    assert!(names.ends_with("browser,remind,alpha,beta"), "{names}");
    // Toggling from the defaults stores an explicit list.
    select::set(&h.store, "yui", &Selection::Default).unwrap();
    select::toggle(&h.store, &l, "yui", "beta", false).unwrap();
    assert_eq!(
        select::get(&h.store, "yui").unwrap(),
        Selection::List(vec!["alpha".into()])
    );
    select::toggle(&h.store, &l, "yui", "alpha", false).unwrap();
    assert_eq!(select::get(&h.store, "yui").unwrap(), Selection::None);
}

#[test]
fn only_main_and_pet_windows_declare_them() {
    let h = Harness::new();
    let l = three();
    for kind in [WindowKind::Phone, WindowKind::BrowserBuild] {
        assert_eq!(declared(&h, kind, &l), built_ins(&h, kind), "{kind:?}");
    }
    let pet = declared(&h, WindowKind::Pet, &l);
    assert_eq!(&pet[pet.len() - 2..], ["alpha", "beta"]);
}

#[test]
fn no_client_tools_declares_none() {
    let h = Harness::new();
    let mut l = (*three()).clone();
    l.disabled = true;
    assert_eq!(
        declared(&h, WindowKind::Main, &Arc::new(l)),
        built_ins(&h, WindowKind::Main)
    );
}

#[test]
fn the_declared_set_is_the_same_in_every_switch_state() {
    let h = Harness::new();
    let l = three();
    let keys = [settings::BROWSER, settings::RELATIONS, settings::SCREEN];
    let mut first: Option<Vec<String>> = None;
    for combo in 0..8u8 {
        for (bit, key) in keys.iter().enumerate() {
            settings::set(&h.store, key, &json!({"enabled": combo & (1 << bit) != 0})).unwrap();
        }
        let names = declared(&h, WindowKind::Main, &l);
        match &first {
            None => first = Some(names),
            Some(f) => assert_eq!(&names, f, "switch combo {combo:03b}"),
        }
    }
}

#[test]
fn the_report_lists_definitions_diagnostics_and_selection() {
    let h = Harness::new();
    let mut entries = vec![def("greet", &fixture("greet.sh"), &[], 1000)];
    entries.push(def("greet", &fixture("greet.sh"), &[], 1000));
    entries.push(def("ghost", Path::new("/nonexistent/ghost"), &[], 1000));
    let l = loaded(entries);
    let r = command::report(&h.store, &l).unwrap();
    assert_eq!(r["definitions"][0]["name"], "greet");
    assert_eq!(r["definitions"][0]["diagnostics"], json!([]));
    assert_eq!(
        r["definitions"][1]["diagnostics"],
        json!(["/nonexistent/ghost: no executable file there"])
    );
    assert_eq!(r["definitions"][0]["enabledFor"], json!(["yui", "kai"]));
    assert_eq!(r["diagnostics"].as_array().unwrap().len(), 2, "{r}");
    assert_eq!(r["presets"][0]["selection"], "default");
}

// ------------------------------------------------------------------ a whole turn

#[tokio::test]
async fn a_turn_calls_a_command_tool_end_to_end() {
    let srv = ScriptServer::start(vec![
        Reply::Sse(vec![
            c_call(0, "call_7", "greet", r#"{"who":"Kai"}"#),
            c_finish("tool_calls"),
            done(),
        ]),
        Reply::Sse(vec![c_text("Said hello."), c_finish("stop"), done()]),
    ])
    .await;
    let h = Harness::new();
    let l = Arc::new(loaded(vec![def(
        "greet",
        &fixture("greet.sh"),
        &[],
        10_000,
    )]));
    let mut env = RegistryEnv::load(&h.store, "yui", WindowKind::Main).unwrap();
    env.client_tools = l;
    let reg = ToolRegistry::for_window(&env).unwrap();
    // Declared after the built-in tools, on the wire too.
    let tools = reg.chat_tools().unwrap();
    let last = tools.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["function"]["name"], "greet");
    assert_eq!(
        last["function"]["parameters"]["properties"]["who"]["type"],
        "string"
    );
    let (events, _) = h
        .run(
            &h.request(&srv.base_url, Transport::ChatCompletions, "greet Kai"),
            &reg,
        )
        .await;
    assert_eq!(
        of_type(&events, "tool_status"),
        vec![
            json!({"type":"tool_status","call_id":"call_7","name":"greet","status":"running greet… Kai"})
        ]
    );
    let results = of_type(&events, "tool_result");
    assert_eq!(results[0]["result"], "hello, Kai (t1 yui call_7)");
    assert_eq!(results[0]["failed"], false);
    let second = &srv.bodies()[1];
    let tool_msg = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert_eq!(tool_msg["content"], "hello, Kai (t1 yui call_7)");
    assert_eq!(tool_msg["tool_call_id"], "call_7");
}

#[tokio::test]
async fn the_documented_example_works() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples/command-tools");
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("bin")).unwrap();
    std::fs::copy(
        docs.join("notify-desktop"),
        home.path().join("bin/yui-notify"),
    )
    .unwrap();
    let l = config::load(&docs.join("client-tools.json"), Some(home.path()));
    assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
    let t = CommandTool::new(l.definitions[0].clone());
    let (out, status) = call(&t, json!({"title": "Tea", "message": "It is ready."})).await;
    assert!(
        out == "Notification shown."
            || out == "No notification service here; the notification was logged instead.",
        "{out}"
    );
    assert_eq!(status, vec!["running notify_desktop… Tea".to_string()]);
    let (out, _) = call(&t, json!({"title": "Tea"})).await;
    assert!(out.starts_with("error: invalid arguments: "), "{out}");
}
