//! Recall cost on a real SQLite file (WAL) with 100,000 transcript lines and 10,000 memories of
//! one character (plus another character's rows the queries must skip): p50 / p99 / max of
//! `longterm::recall::build` (history window by token budget + recall within 400 tokens) and of
//! `turn::prepare` with and without memory, then criterion's estimate of the recall.
//!
//! Run: `cargo bench -p yui-core --bench memory_recall` (sizes from `YUI_BENCH_LINES`,
//! `YUI_BENCH_MEMORIES`; samples from `YUI_BENCH_CALLS`, default 2000). Figures in
//! docs/PERFORMANCE.md, "Memory".

use chrono::{Duration as CDuration, TimeZone, Utc};
use criterion::Criterion;
use rusqlite::params;
use std::sync::Arc;
use std::time::{Duration, Instant};
use yui_core::clock::{ManualClock, SharedClock};
use yui_core::longterm::{self, recall};
use yui_core::turn::{self, Backend};
use yui_core::{Store, WindowKind};

const WORDS: &[&str] = &[
    "coffee",
    "rain",
    "train",
    "office",
    "garden",
    "movie",
    "dinner",
    "lunch",
    "meeting",
    "book",
    "music",
    "guitar",
    "piano",
    "cat",
    "dog",
    "park",
    "river",
    "mountain",
    "beach",
    "city",
    "weekend",
    "holiday",
    "project",
    "deadline",
    "code",
    "bug",
    "release",
    "friend",
    "sister",
    "brother",
    "mother",
    "father",
    "cousin",
    "neighbour",
    "bakery",
    "bread",
    "tea",
    "cake",
    "football",
    "tennis",
    "running",
    "yoga",
    "swimming",
    "winter",
    "summer",
    "autumn",
    "spring",
    "snow",
    "sun",
    "cloud",
    "wind",
    "bus",
    "bicycle",
    "car",
    "phone",
    "laptop",
    "game",
    "story",
    "song",
    "concert",
    "museum",
    "library",
    "school",
    "exam",
    "homework",
    "doctor",
    "dentist",
    "birthday",
    "party",
    "gift",
    "flower",
    "tree",
    "lake",
    "forest",
    "kitchen",
    "recipe",
    "soup",
    "noodles",
    "sushi",
    "curry",
    "pizza",
    "salad",
    "apple",
    "orange",
    "banana",
    "chocolate",
];

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{what:<44} n={:<6} p50={:>9.1?} p99={:>9.1?} max={:>9.1?}",
        samples.len(),
        pct(&samples, 0.50),
        pct(&samples, 0.99),
        samples[samples.len() - 1]
    );
}

/// A deterministic sentence of `n` words from the vocabulary.
fn sentence(seed: &mut u64, n: usize) -> String {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.push(WORDS[(*seed >> 33) as usize % WORDS.len()]);
    }
    format!("I think the {} was nice today.", out.join(" "))
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let lines = env("YUI_BENCH_LINES", if bench { 100_000 } else { 2_000 });
    let memories = env("YUI_BENCH_MEMORIES", if bench { 10_000 } else { 200 });
    let calls = env("YUI_BENCH_CALLS", if bench { 2000 } else { 20 });
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path().join("yui.sqlite3")).expect("store");
    let t0 = Utc.with_ymd_and_hms(2026, 1, 1, 9, 0, 0).unwrap();
    let started = Instant::now();
    let mut seed = 7u64;
    store
        .write(|tx| {
            let mut ins = tx.prepare(
                "INSERT INTO transcript (preset_id, role, text, at) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for i in 0..lines {
                // One line in ten is the other character's: the queries must skip them.
                let preset = if i % 10 == 9 { "kai" } else { "yui" };
                let role = if i % 2 == 0 { "user" } else { "assistant" };
                let at = (t0 + CDuration::seconds(i as i64 * 30)).to_rfc3339();
                ins.execute(params![preset, role, sentence(&mut seed, 6), at])?;
            }
            let mut mem = tx.prepare(
                "INSERT INTO memories (preset_id, kind, text, created_at, updated_at, pinned)
                 VALUES (?1, 'fact', ?2, ?3, ?3, ?4)",
            )?;
            for i in 0..memories {
                let text = format!("The user mentioned the {}", sentence(&mut seed, 4));
                mem.execute(params!["yui", text, t0.to_rfc3339(), i < 5])?;
            }
            Ok(())
        })
        .expect("fill");
    println!(
        "filled {lines} transcript lines and {memories} memories in {:.1?} (db {} MiB)",
        started.elapsed(),
        std::fs::metadata(store.path()).map_or(0, |m| m.len() >> 20)
    );
    let cfg = longterm::config::load(&store);
    let mut qseed = 99u64;
    let queries: Vec<String> = (0..64)
        .map(|_| format!("do you remember the {}?", sentence(&mut qseed, 3)))
        .collect();
    let mut recalled = 0usize;
    report(
        "recall::build (window + recall 400 tok)",
        (0..calls)
            .map(|i| {
                let t = Instant::now();
                let (_, r) = recall::build(&store, &cfg, "yui", &queries[i % queries.len()], None)
                    .expect("recall");
                let d = t.elapsed();
                recalled += r.lines.len();
                d
            })
            .collect(),
    );
    println!(
        "  lines recalled per turn (mean): {:.1}",
        recalled as f64 / calls as f64
    );

    // Its first step alone: the newest 400 lines the history window is cut from.
    report(
        "  of which transcript::recent (400 lines)",
        (0..calls)
            .map(|_| {
                let t = Instant::now();
                let r = yui_core::transcript::recent(&store, "yui", recall::MAX_HISTORY_LINES);
                std::hint::black_box(r.expect("recent"));
                t.elapsed()
            })
            .collect(),
    );

    let clock: SharedClock = Arc::new(ManualClock::new(t0, 0));
    let backend = Backend {
        transport: yui_core::backend::Transport::ChatCompletions,
        base_url: "http://127.0.0.1:9/v1".into(),
        model: "m".into(),
        api_key: None,
        max_output_tokens: None,
        temperature: None,
        push_url: None,
        realtime_url: None,
    };
    let prep = |q: &str| {
        let t = Instant::now();
        let out = turn::prepare(&store, &clock, "yui", WindowKind::Main, q, backend.clone());
        std::hint::black_box(out.expect("prepare"));
        t.elapsed()
    };
    let with: Vec<Duration> = (0..calls.min(500))
        .map(|i| prep(&queries[i % queries.len()]))
        .collect();
    report("turn::prepare with memory (recall + record)", with);
    // The same turn for a character with no memory and no transcript: the baseline.
    let bare = yui_core::presets::add(&store, "Bare").expect("preset");
    let empty: Vec<Duration> = (0..calls.min(500))
        .map(|i| {
            let q = &queries[i % queries.len()];
            let t = Instant::now();
            let out = turn::prepare(
                &store,
                &clock,
                &bare.id,
                WindowKind::Main,
                q,
                backend.clone(),
            );
            std::hint::black_box(out.expect("prepare"));
            t.elapsed()
        })
        .collect();
    report("turn::prepare, character without memory", empty);

    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(if bench { 100 } else { 10 });
    let mut i = 0usize;
    c.bench_function("memory/recall_100k_lines_10k_memories", |b| {
        b.iter(|| {
            i += 1;
            recall::build(&store, &cfg, "yui", &queries[i % queries.len()], None).expect("recall")
        })
    });
    c.final_summary();
}
