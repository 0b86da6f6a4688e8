//! Latency of one `rate_relation` call on a real SQLite file (WAL) in a temp dir: p50 / p99 / max
//! over N calls through the tool (argument checks, switch read, one IMMEDIATE transaction).
//!
//! Run: `cargo bench -p yui-core --bench relations` (N from `YUI_BENCH_CALLS`, default 5000).
//! Each call is its own turn and the manual clock moves one day per call, so every call takes
//! the full write path (mark, cap sum, value upsert, log insert) instead of the cheaper
//! "ignored" or "cut to nothing" paths.

use std::sync::Arc;
use std::time::{Duration, Instant};
use yui_core::clock::{ManualClock, SharedClock};
use yui_core::relations;
use yui_core::tools::relation::RateRelationTool;
use yui_core::tools::{ClientTool, ToolContext};
use yui_core::{Store, WindowKind};

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing useful: run small.
    let n: usize = std::env::var("YUI_BENCH_CALLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if std::env::args().any(|a| a == "--bench") {
            5000
        } else {
            50
        });
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("yui.db")).expect("open store");
    let start = chrono::DateTime::parse_from_rfc3339("2026-01-01T12:00:00Z")
        .expect("time")
        .with_timezone(&chrono::Utc);
    let clock = Arc::new(ManualClock::new(start, 0));
    let shared: SharedClock = clock.clone();
    let tool = RateRelationTool::new(store.clone(), "yui");
    let _ = tool.parameters();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let mut times = Vec::with_capacity(n);
    let targets = ["user", "Kai"];
    for i in 0..n {
        clock.advance(chrono::Duration::days(1));
        let ctx = ToolContext {
            store: store.clone(),
            clock: shared.clone(),
            preset_id: "yui".into(),
            window: WindowKind::Main,
            turn_id: format!("bench-{i}"),
            call: Default::default(),
        };
        let delta = if (i / 2) % 2 == 0 { 2 } else { -2 };
        let args = serde_json::json!({
            "toward": targets[i % 2],
            "delta": delta,
            "why": "a bench step, to measure one call"
        });
        let t = Instant::now();
        let out = rt
            .block_on(tool.call(args, &ctx, Default::default()))
            .expect("call");
        times.push(t.elapsed());
        assert!(!out.as_text().starts_with("error"), "{}", out.as_text());
    }
    times.sort();
    println!(
        "rate_relation ({n} calls, WAL, real file): p50 {:?}  p99 {:?}  max {:?}",
        pct(&times, 0.50),
        pct(&times, 0.99),
        times[times.len() - 1]
    );
    // The same write path without the tool around it (no argument checks, no switch read, no
    // hop to the blocking pool): separates SQLite's share of the tail from the runtime's.
    let mut core = Vec::with_capacity(n);
    for i in 0..n {
        clock.advance(chrono::Duration::days(1));
        let target = if i % 2 == 0 {
            relations::Target::User
        } else {
            relations::Target::Preset("kai".into())
        };
        let delta = if (i / 2) % 2 == 0 { 2 } else { -2 };
        let turn = format!("core-{i}");
        let t = Instant::now();
        relations::rate(
            &store,
            clock.as_ref(),
            "yui",
            &target,
            delta,
            "a bench step",
            &turn,
        )
        .expect("rate");
        core.push(t.elapsed());
    }
    core.sort();
    println!(
        "relations::rate alone ({n} calls): p50 {:?}  p99 {:?}  max {:?}",
        pct(&core, 0.50),
        pct(&core, 0.99),
        core[core.len() - 1]
    );
    println!(
        "integrity_check: {}",
        store.integrity_check().expect("check")
    );
}
