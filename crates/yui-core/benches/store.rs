//! Store figures on a real SQLite file (WAL, synchronous=NORMAL) in a temp dir: p50 / p99 / max
//! of `Store::open` (fresh file: all migrations; existing file: version check only), one
//! transcript append (its own IMMEDIATE transaction), `transcript::recent(20)` on a long
//! transcript, `presets::list`, and `settings::switch_on`.
//!
//! Run: `cargo bench -p yui-core --bench store` (N from `YUI_BENCH_CALLS`, default 5000).

use chrono::Utc;
use std::time::{Duration, Instant};
use yui_core::transcript::{self, Role};
use yui_core::{presets, settings, Store};

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{what:<34} n={:<6} p50={:>9.1?} p99={:>9.1?} max={:>9.1?}",
        samples.len(),
        pct(&samples, 0.50),
        pct(&samples, 0.99),
        samples[samples.len() - 1]
    );
}

fn time<T>(n: usize, mut f: impl FnMut(usize) -> T) -> Vec<Duration> {
    (0..n)
        .map(|i| {
            let t = Instant::now();
            std::hint::black_box(f(i));
            t.elapsed()
        })
        .collect()
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
    let dir = tempfile::tempdir().expect("tempdir");
    let opens = n.clamp(1, 200);
    report(
        "Store::open (fresh, migrate all)",
        time(opens, |i| {
            Store::open(dir.path().join(format!("fresh-{i}.sqlite3"))).expect("open")
        }),
    );
    let path = dir.path().join("yui.sqlite3");
    drop(Store::open(&path).expect("open"));
    report(
        "Store::open (existing)",
        time(opens, |_| Store::open(&path).expect("open")),
    );
    let store = Store::open(&path).expect("open");
    let text = "A line of speech about the weather, the cat, and what to cook tonight.";
    report(
        "transcript::append",
        time(n, |i| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            transcript::append(&store, "yui", role, text, Some("turn"), Utc::now()).expect("append")
        }),
    );
    report(
        &format!("transcript::recent(20) of {n}"),
        time(n, |_| {
            transcript::recent(&store, "yui", 20).expect("recent")
        }),
    );
    report(
        "presets::list",
        time(n, |_| presets::list(&store).expect("list")),
    );
    report(
        "settings::switch_on",
        time(n, |_| {
            settings::switch_on(&store, settings::BROWSER).expect("switch")
        }),
    );
}
