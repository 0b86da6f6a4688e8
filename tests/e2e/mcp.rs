//! Settings → Tools' MCP servers in the real app (docs/mcp.md): the servers of `mcp.json` with
//! their state — one that lists its tools (`ready with N tools`, one checkbox per character),
//! one that cannot start (`failed: …`), one turned off — and "Reload tools" reading an edited
//! file again. The servers are `crates/yui-core/tests/fixtures/mcp/hostile.py` (Python's
//! standard library only).
//!
//! `mcp.json` goes in the suite's own config folder (`run.sh` sets `XDG_CONFIG_HOME`); the test
//! removes it when it ends, whatever happens, so no other test sees MCP servers.

use super::{launch_showing, open_settings, settings_section};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

const T: Duration = Duration::from_secs(30);

/// Removes `mcp.json` when the test ends (passed or not).
struct Config(PathBuf);

impl Config {
    fn write(&self, servers: serde_json::Value) {
        std::fs::create_dir_all(self.0.parent().unwrap()).unwrap();
        let text = serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap();
        std::fs::write(&self.0, text).unwrap();
    }
}

impl Drop for Config {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn hostile(mode: &str) -> serde_json::Value {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/yui-core/tests/fixtures/mcp/hostile.py");
    json!({"command": "python3", "args": [script, mode]})
}

/// The server rows as the page shows them: name → (data-state, state line).
const ROWS: &str = "return Object.fromEntries([...document.querySelectorAll('#tools li.mcp-server')]
    .map(li => [li.dataset.mcpServer, [li.dataset.state, li.querySelector('.mcp-state').textContent]]))";

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn settings_tools_shows_mcp_servers_and_reloads() {
    assert!(
        std::env::var_os("XDG_CONFIG_HOME").is_some(),
        "run through tests/e2e/run.sh: it gives the suite a config folder of its own"
    );
    let cfg = Config(yui_core::tools::mcp::config::config_path().expect("a config folder"));
    cfg.write(json!({
        "good": hostile("ok"),
        "broken": {"command": "/nonexistent/mcp-server"},
        "off": {"command": "python3", "args": ["-c", "pass"], "disabled": true},
    }));
    let dir = tempfile::tempdir().unwrap();
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    open_settings(&s).await;
    settings_section(&s, "tools").await;
    // The servers started with the main window; the page asks again while one is starting.
    s.wait_script(
        "const li = document.querySelector(\"#tools li.mcp-server[data-mcp-server='good']\");
         return li?.dataset.state === 'ready'
           && document.querySelector(\"#tools li.mcp-server[data-mcp-server='broken']\")?.dataset.state === 'failed'",
        T,
    )
    .await
    .expect("good is ready and broken failed");
    let rows = s.exec(ROWS, json!([])).await.unwrap();
    assert_eq!(rows["good"][0], "ready");
    let good = rows["good"][1].as_str().unwrap();
    assert!(
        good.starts_with("ready with ") && good.ends_with(" tools"),
        "{good}"
    );
    let broken = rows["broken"][1].as_str().unwrap();
    assert!(broken.starts_with("failed: "), "{broken}");
    assert_eq!(rows["off"], json!(["disabled", "disabled in mcp.json"]));
    // good's tools, each with a checkbox per character, on for both (defaultEnabled).
    let tools = s
        .exec(
            "return [...document.querySelectorAll(\"#tools li.mcp-server[data-mcp-server='good'] li.tool\")]
               .map(li => [li.dataset.toolName,
                           [...li.querySelectorAll('input[type=checkbox]')].map(b => b.dataset.preset + ':' + b.checked)])",
            json!([]),
        )
        .await
        .unwrap();
    let echo = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t[0] == "mcp__good__echo")
        .unwrap_or_else(|| panic!("mcp__good__echo is listed: {tools}"));
    assert_eq!(echo[1], json!(["yui:true", "kai:true"]));
    let n = tools.as_array().unwrap().len();
    assert_eq!(good, format!("ready with {n} tools"));

    // Edit the file and reload: broken goes, a new server comes and starts.
    cfg.write(json!({"good": hostile("ok"), "late": hostile("ok")}));
    let reload = s.find("#tools-reload").await.expect("Reload tools");
    s.click(&reload).await.expect("click Reload tools");
    s.wait_script(
        "const names = [...document.querySelectorAll('#tools li.mcp-server')].map(li => li.dataset.mcpServer);
         return names.join(',') === 'good,late'
           && document.querySelector(\"#tools li.mcp-server[data-mcp-server='late']\").dataset.state === 'ready'",
        T,
    )
    .await
    .expect("after Reload: good and late, late ready");
    assert!(s
        .exec(
            "return !!document.querySelector(\"#tools li.tool[data-tool-name='mcp__late__echo']\")",
            json!([])
        )
        .await
        .unwrap()
        .as_bool()
        .unwrap());
    let _ = s.delete().await;
}
