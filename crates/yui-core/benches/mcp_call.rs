//! What an MCP tool call costs YUI beyond the server's own time (stdio): the same `echo` call on
//! the same small server (`tests/fixtures/mcp/hostile.py ok`), once as raw JSON-RPC lines written
//! to and read from its pipes (the server's own time plus the pipes), once as a whole client tool
//! call (schema check, rmcp, result), N times each, alternating. Prints p50/p90/p99 of both and
//! their difference (docs/PERFORMANCE.md, "MCP calls").
//!
//! `cargo bench -p yui-core --bench mcp_call` (N from `MCP_BENCH_N`, default 2000).

use serde_json::json;
use std::collections::HashSet;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use yui_core::tools::mcp::{config, Hub};
use yui_core::turn::CancellationToken;

fn pct(v: &mut [Duration], p: f64) -> f64 {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i].as_secs_f64() * 1000.0
}

fn main() {
    let n: usize = std::env::var("MCP_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(n));
}

async fn run(n: usize) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/hostile.py");
    // The client tool.
    let text =
        json!({"mcpServers": {"fx": {"command": "python3", "args": [&script, "ok"]}}}).to_string();
    let (servers, _) = config::parse(&text, None);
    let hub = Hub::new(
        config::McpConfig {
            servers,
            ..Default::default()
        },
        false,
        &HashSet::new(),
    );
    hub.settle(Duration::from_secs(30)).await;
    let tool = hub
        .tools()
        .find(|t| t.def.name == "mcp__fx__echo")
        .expect("the fixture server started");
    // The raw pipes.
    let mut child = tokio::process::Command::new("python3")
        .arg(&script)
        .arg("ok")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}});
    stdin
        .write_all(format!("{init}\n").as_bytes())
        .await
        .unwrap();
    stdout.read_line(&mut line).await.unwrap();
    let cancel = CancellationToken::new();
    let args = json!({"text": "hello"});
    let (mut raw, mut ours) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n + 50 {
        let req = json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hello"}}});
        let t0 = Instant::now();
        stdin
            .write_all(format!("{req}\n").as_bytes())
            .await
            .unwrap();
        line.clear();
        stdout.read_line(&mut line).await.unwrap();
        let r = t0.elapsed();
        let t0 = Instant::now();
        let out = tool.execute(&args, &cancel).await;
        let o = t0.elapsed();
        assert_eq!(out.as_text(), "echo: hello");
        if i >= 50 {
            raw.push(r);
            ours.push(o);
        }
    }
    let (r50, r90, r99) = (pct(&mut raw, 0.5), pct(&mut raw, 0.9), pct(&mut raw, 0.99));
    let (o50, o90, o99) = (
        pct(&mut ours, 0.5),
        pct(&mut ours, 0.9),
        pct(&mut ours, 0.99),
    );
    println!("MCP stdio call, {n} calls each (ms)      p50     p90     p99");
    println!("raw JSON-RPC over the pipes (server) {r50:7.3} {r90:7.3} {r99:7.3}");
    println!("client tool call (YUI + rmcp)        {o50:7.3} {o90:7.3} {o99:7.3}");
    println!(
        "overhead                             {:7.3} {:7.3} {:7.3}",
        o50 - r50,
        o90 - r90,
        o99 - r99
    );
    hub.stop().await;
}
