//! `yui tools list|check|enable|disable`, `yui tool <command tool>` and `--no-client-tools`, as
//! real processes with a real config file and the Bash + jq fixture tool.

use crate::support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;
use support::{json_ok, yui_command};

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    /// A data dir, a home holding `bin/greet`, and a config defining greet (path from home),
    /// quiet (a bare name on PATH, defaultEnabled false) and a colliding `look`.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("home/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../yui-core/tests/fixtures/command_tools/greet.sh");
        std::fs::copy(&fixture, bin.join("greet")).unwrap();
        let schema = json!({"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]});
        let config = json!({"clientTools": [
            {"name": "greet", "defaultEnabled": true, "description": "Greets.", "parameters": schema, "command": "./bin/greet", "executionTimeoutMs": 10000},
            {"name": "quiet", "defaultEnabled": false, "description": "Nothing.", "parameters": {"type": "object"}, "command": "yui-no-such-program"},
            {"name": "look", "defaultEnabled": true, "description": "Collides.", "parameters": {"type": "object"}, "command": "x"},
        ]});
        std::fs::create_dir_all(dir.path().join("cfg")).unwrap();
        std::fs::write(dir.path().join("cfg/client-tools.json"), config.to_string()).unwrap();
        Self { dir }
    }
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn yui(&self, args: &[&str]) -> Output {
        yui_command(&self.dir.path().join("data"))
            .args(args)
            .env("YUI_CONFIG_DIR", self.dir.path().join("cfg"))
            .env("HOME", self.home())
            .output()
            .expect("spawn yui")
    }
    fn ok(&self, args: &[&str]) -> Value {
        json_ok(args, &self.yui(args))
    }
}

#[test]
fn list_shows_definitions_diagnostics_and_selection() {
    let e = Env::new();
    let v = e.ok(&["tools", "list"]);
    let names: Vec<&str> = v["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["greet", "quiet"]);
    assert_eq!(
        v["definitions"][0]["program"],
        e.home().join("bin/greet").to_str().unwrap()
    );
    assert_eq!(v["definitions"][0]["enabledFor"], json!(["yui", "kai"]));
    assert_eq!(
        v["definitions"][1]["diagnostics"],
        json!(["yui-no-such-program: not found on PATH"])
    );
    assert_eq!(
        v["diagnostics"][0],
        "clientTools[2] (look): \"look\" is the name of a built-in tool"
    );
    assert_eq!(v["presets"][0]["enabled"], json!(["greet"]));
}

#[test]
fn check_fails_on_any_problem() {
    let e = Env::new();
    let out = e.yui(&["tools", "check"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 2, "{v}");
}

#[test]
fn tool_runs_a_configured_tool_as_a_turn_would() {
    let e = Env::new();
    let out = e.yui(&[
        "tool",
        "greet",
        "--args",
        r#"{"who":"Ann"}"#,
        "--preset",
        "kai",
        "--turn",
        "t9",
    ]);
    let v = json_ok(&[], &out);
    let text = v.as_str().unwrap();
    assert!(text.starts_with("hello, Ann (t9 kai call-"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("running greet… Ann"));
    let v = e.ok(&["tool", "greet", "--args", r#"{"who":1}"#]);
    assert_eq!(
        v,
        "error: invalid arguments: /who: 1 is not of type \"string\""
    );
}

#[test]
fn enable_and_disable_per_character() {
    let e = Env::new();
    e.ok(&["tools", "disable", "greet", "--preset", "kai"]);
    e.ok(&["tools", "enable", "quiet", "--preset", "kai"]);
    let v = e.ok(&["tools", "list"]);
    assert_eq!(v["presets"][1]["enabled"], json!(["quiet"]));
    assert_eq!(v["presets"][0]["enabled"], json!(["greet"]));
    let out = e.yui(&[
        "tool",
        "greet",
        "--args",
        r#"{"who":"x"}"#,
        "--preset",
        "kai",
    ]);
    assert_eq!(out.status.code(), Some(1), "greet is off for kai");
}

#[test]
fn no_client_tools_disables_every_configured_tool() {
    let e = Env::new();
    let v = e.ok(&["--no-client-tools", "tools", "list"]);
    assert_eq!(v["disabled"], true);
    assert_eq!(v["presets"][0]["enabled"], json!([]));
    let out = e.yui(&[
        "--no-client-tools",
        "tool",
        "greet",
        "--args",
        r#"{"who":"x"}"#,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("declares no tool named \\\"greet\\\""));
}

#[test]
fn an_unknown_settings_key_is_refused_and_nothing_is_stored() {
    let e = Env::new();
    let out = e.yui(&["settings", "set", "no.such.key", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown setting key"));
    let all = e.ok(&["settings", "list"]);
    assert!(all.get("no.such.key").is_none(), "{all}");
    assert_eq!(all["yui.enabled_client_tools"], json!({}));
}

// ------------------------------------------------------------------ MCP servers (docs/mcp.md)

/// An mcp.json with the hostile fixture server (well-behaved mode), one that dies at start, and
/// an invalid entry.
fn with_mcp(e: &Env) {
    let fx =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../yui-core/tests/fixtures/mcp/hostile.py");
    let config = json!({"mcpServers": {
        "fx": {"command": "python3", "args": [fx, "ok"]},
        "dead": {"command": "python3", "args": [fx, "die"]},
        "bad": {"url": "ftp://nowhere/"},
    }});
    std::fs::write(e.dir.path().join("cfg/mcp.json"), config.to_string()).unwrap();
}

#[test]
fn tools_list_shows_mcp_servers_their_state_and_tools() {
    let e = Env::new();
    with_mcp(&e);
    let v = e.ok(&["tools", "list"]);
    let mcp = &v["mcp"];
    assert_eq!(
        mcp["diagnostics"],
        json!(["mcpServers.bad: url \"ftp://nowhere/\": use http:// or https://"])
    );
    // In file order (json! writes the keys sorted: dead, fx).
    let servers = mcp["servers"].as_array().unwrap();
    assert_eq!(servers[1]["name"], "fx");
    assert_eq!(servers[1]["state"], "ready");
    assert_eq!(servers[1]["tools"][0]["name"], "mcp__fx__echo");
    assert_eq!(servers[1]["tools"][0]["enabledFor"], json!(["yui", "kai"]));
    assert_eq!(servers[0]["state"], "failed");
    assert_eq!(
        servers[0]["reason"],
        "exited with status 1: boom: missing API key"
    );
}

#[test]
fn tools_check_fails_on_mcp_problems() {
    let e = Env::new();
    with_mcp(&e);
    let out = e.yui(&["tools", "check"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = v["mcp"]["diagnostics"].as_array().unwrap();
    assert!(
        problems.contains(&json!(
            "dead: could not start: exited with status 1: boom: missing API key"
        )),
        "{problems:?}"
    );
    assert!(problems
        .iter()
        .any(|p| p.as_str().unwrap().starts_with("mcpServers.bad: ")));
}

#[test]
fn tool_calls_an_mcp_tool_and_enable_disable_selects_it() {
    let e = Env::new();
    with_mcp(&e);
    let v = e.ok(&["tool", "mcp__fx__echo", "--args", r#"{"text":"hi"}"#]);
    assert_eq!(v, json!("echo: hi"));
    let v = e.ok(&["tool", "mcp__fx__echo", "--args", r#"{"text":1}"#]);
    assert_eq!(
        v,
        json!("error: invalid arguments: /text: 1 is not of type \"string\"")
    );
    e.ok(&["tools", "disable", "mcp__fx__echo"]);
    let out = e.yui(&["tool", "mcp__fx__echo", "--args", r#"{"text":"hi"}"#]);
    assert_eq!(out.status.code(), Some(1));
    // Disabling one MCP tool keeps the other defaults, command tools and MCP tools alike.
    let v = e.ok(&["tools", "list"]);
    assert_eq!(
        v["mcp"]["servers"][1]["tools"][0]["enabledFor"],
        json!(["kai"])
    );
    assert_eq!(
        v["mcp"]["servers"][1]["tools"][1]["enabledFor"],
        json!(["yui", "kai"])
    );
    let greet = v["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "greet")
        .unwrap()
        .clone();
    assert_eq!(greet["enabledFor"], json!(["yui", "kai"]));
    e.ok(&["tools", "enable", "mcp__fx__echo"]);
    assert_eq!(
        e.ok(&["tool", "mcp__fx__echo", "--args", r#"{"text":"hi"}"#]),
        json!("echo: hi")
    );
    // --no-client-tools: none declared.
    let out = e.yui(&[
        "--no-client-tools",
        "tool",
        "mcp__fx__echo",
        "--args",
        r#"{"text":"hi"}"#,
    ]);
    assert_eq!(out.status.code(), Some(1));
}

/// An mcp.json with a server that starts and never answers `initialize` (it just sleeps) next to
/// the well-behaved fixture server.
fn with_hanging_mcp(e: &Env) {
    let fx =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../yui-core/tests/fixtures/mcp/hostile.py");
    let config = json!({"mcpServers": {
        "hang": {"command": "sleep", "args": ["4646"]},
        "fx": {"command": "python3", "args": [fx, "ok"]},
    }});
    std::fs::write(e.dir.path().join("cfg/mcp.json"), config.to_string()).unwrap();
}

/// Each bound is far past what the command needs and far short of the hanging server's 60 s
/// start timeout, which every call and turn waited for before (issue 46).
const BOUND: std::time::Duration = std::time::Duration::from_secs(20);

#[test]
fn a_hanging_mcp_server_costs_a_tool_call_of_another_server_nothing() {
    let e = Env::new();
    with_hanging_mcp(&e);
    let t0 = std::time::Instant::now();
    let v = e.ok(&["tool", "mcp__fx__echo", "--args", r#"{"text":"hi"}"#]);
    let took = t0.elapsed();
    assert_eq!(v, json!("echo: hi"));
    assert!(took < BOUND, "{took:?}");
}

#[test]
fn a_hanging_mcp_server_costs_a_turn_its_grace_and_its_tools_are_left_out() {
    use yui_testkit::sse::{chat_stream, ScriptServer};
    let e = Env::new();
    with_hanging_mcp(&e);
    let srv = ScriptServer::builder()
        .script(vec![chat_stream(&[json!({"choices":[{"index":0,
            "delta":{"content":"Hi!"},"finish_reason":"stop"}]})])])
        .start_blocking();
    e.ok(&["settings", "set", "yui.mcp", r#"{"turn_grace_ms":1500}"#]);
    let args = [
        "turn",
        "--base-url",
        &srv.base_url,
        "--transport",
        "chat_completions",
        "--message",
        "hi",
    ];
    let t0 = std::time::Instant::now();
    let out = e.yui(&args);
    let took = t0.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took < BOUND, "{took:?}");
    let last = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .unwrap();
    assert_eq!(last["text"], "Hi!");
    let tools: Vec<String> = srv.bodies()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    // fx is declared when it was ready within the grace (a loaded machine may take longer to
    // start Python: not asserted); hang never is, and the log names it.
    assert!(
        !tools.iter().any(|t| t.starts_with("mcp__hang__")),
        "{tools:?}"
    );
    let logs = std::fs::read_dir(e.dir.path().join("data/logs"))
        .unwrap()
        .map(|f| std::fs::read_to_string(f.unwrap().path()).unwrap_or_default())
        .collect::<String>();
    let line = logs
        .lines()
        .find(|l| l.contains("still starting after the turn's grace"))
        .unwrap_or_else(|| panic!("no grace line in the log:\n{logs}"));
    assert!(
        line.contains("hang") && line.contains("grace_ms=1500"),
        "{line}"
    );
    // A grace past 1.5 s is refused, in words.
    let out = e.yui(&["settings", "set", "yui.mcp", r#"{"turn_grace_ms":60000}"#]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("yui.mcp must be") && err.contains("0..=1500"),
        "{err}"
    );
}

#[test]
fn tools_list_says_why_a_server_could_not_start_in_plain_words() {
    let e = Env::new();
    let config = json!({"mcpServers": {"nothing": {"command": "/nonexistent/bin/mcp-nothing"}}});
    std::fs::write(e.dir.path().join("cfg/mcp.json"), config.to_string()).unwrap();
    let v = e.ok(&["tools", "list"]);
    assert_eq!(v["mcp"]["servers"][0]["state"], "failed");
    assert_eq!(
        v["mcp"]["servers"][0]["reason"],
        "the command /nonexistent/bin/mcp-nothing was not found"
    );
}
