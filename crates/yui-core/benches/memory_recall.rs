//! Recall cost on a real SQLite file (WAL) with 100,000 transcript lines and 10,000 memories of
//! one character (plus another character's rows the queries must skip): p50 / p99 / max of
//! `longterm::recall::build` (history window by token budget + recall within 400 tokens) and of
//! `turn::prepare` with and without memory, each in wall time and in the thread's CPU time (on a
//! loaded machine wall time mostly measures the wait for a core), the steps of a recall alone
//! (where the time goes), then criterion's estimate of the recall.
//!
//! Run: `cargo bench -p yui-core --bench memory_recall` (sizes from `YUI_BENCH_LINES`,
//! `YUI_BENCH_MEMORIES`; samples from `YUI_BENCH_CALLS`, default 2000). Figures in
//! docs/PERFORMANCE.md, "Memory".

#[path = "../tests/turn_support/backends.rs"]
mod backends;
use chrono::{Duration as CDuration, TimeZone, Utc};
use criterion::Criterion;
use rusqlite::params;
use std::sync::Arc;
use std::time::{Duration, Instant};
use yui_core::clock::{ManualClock, SharedClock};
use yui_core::longterm::{self, recall, search};
use yui_core::turn;
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

/// This thread's CPU time: on a machine shared with other work, wall time mostly measures the
/// wait for a core; CPU time is what the code costs.
fn cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Wall and CPU time of `f`.
fn timed(f: impl FnOnce()) -> (Duration, Duration) {
    let (w, c) = (Instant::now(), cpu());
    f();
    (w.elapsed(), cpu().saturating_sub(c))
}

/// p50 / p99 of wall and CPU time.
fn report2(what: &str, samples: Vec<(Duration, Duration)>) {
    let (mut wall, mut cp): (Vec<_>, Vec<_>) = samples.into_iter().unzip();
    wall.sort();
    cp.sort();
    println!(
        "{what:<44} n={:<6} p50={:>9.1?} p99={:>9.1?} | cpu p50={:>9.1?} p99={:>9.1?}",
        wall.len(),
        pct(&wall, 0.50),
        pct(&wall, 0.99),
        pct(&cp, 0.50),
        pct(&cp, 0.99)
    );
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
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

/// Words in 1,000 lines each (see the fill).
const RARE: &[&str] = &["harmonica", "lighthouse", "origami", "telescope"];

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
                let mut text = sentence(&mut seed, 6);
                // One line in 25 also names one of four rarer things (each in 1,000 lines,
                // under search::COMMON): the transcript's index at its most-read.
                if i % 25 == 0 {
                    text.push_str(&format!(" Also the {}.", RARE[(i / 25) % RARE.len()]));
                }
                ins.execute(params![preset, role, text, at])?;
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
    report2(
        "recall::build (window + recall 400 tok)",
        (0..calls)
            .map(|i| {
                timed(|| {
                    let (_, r) =
                        recall::build(&store, &cfg, "yui", &queries[i % queries.len()], None)
                            .expect("recall");
                    recalled += r.lines.len();
                })
            })
            .collect(),
    );
    println!(
        "  lines recalled per turn (mean): {:.1}",
        recalled as f64 / calls as f64
    );
    // Where the time goes: each step of a recall alone, on the query `build` makes.
    let recent =
        yui_core::transcript::recent(&store, "yui", recall::MAX_HISTORY_LINES).expect("recent");
    let n = recall::window_len(&recent, cfg.history_tokens);
    let window = &recent[recent.len() - n..];
    let below = window.first().map_or(i64::MAX, |e| e.id);
    let full: Vec<String> = queries
        .iter()
        .map(|q| {
            let mut q = q.clone();
            for e in window.iter().rev().take(2) {
                q.push('\n');
                q.push_str(&e.text);
            }
            q
        })
        .collect();
    let step = |what: &str, f: &dyn Fn(&rusqlite::Connection, &str)| {
        let samples = (0..calls)
            .map(|i| {
                store
                    .read(|c| Ok(timed(|| f(c, &full[i % full.len()]))))
                    .expect("read")
            })
            .collect();
        report2(what, samples);
    };
    step("  transcript::recent (400 lines)", &|_, _| {
        let r = yui_core::transcript::recent(&store, "yui", recall::MAX_HISTORY_LINES);
        std::hint::black_box(r.expect("recent"));
    });
    step("  search::lists over memories", &|c, q| {
        let t = search::Terms::of(q);
        std::hint::black_box(search::lists(c, "memories", "yui", &t, i64::MAX).expect("lists"));
    });
    step("  search::lists over transcript lines", &|c, q| {
        let t = search::Terms::of(q);
        std::hint::black_box(search::lists(c, "transcript", "yui", &t, below).expect("lists"));
    });
    step(
        "  search::lists over lines, 4 words in 1,000 each",
        &|c, _| {
            let t = search::Terms::of(&RARE.join(" "));
            std::hint::black_box(search::lists(c, "transcript", "yui", &t, below).expect("lists"));
        },
    );
    step("  recall::recall (searches + rows + budget)", &|c, q| {
        let r = recall::recall(c, "yui", q, below, cfg.recall_tokens, None);
        std::hint::black_box(r.expect("recall"));
    });

    let clock: SharedClock = Arc::new(ManualClock::new(t0, 0));
    let backend = backends::backend(
        yui_core::backend::Transport::ChatCompletions,
        "http://127.0.0.1:9/v1",
    );
    let prep = |preset: &str, q: &str| {
        timed(|| {
            let out = turn::prepare(&store, &clock, preset, WindowKind::Main, q, backend.clone());
            std::hint::black_box(out.expect("prepare"));
        })
    };
    let with: Vec<_> = (0..calls.min(500))
        .map(|i| prep("yui", &queries[i % queries.len()]))
        .collect();
    report2("turn::prepare with memory (recall + record)", with);
    // The same turn for a character with no memory and no transcript: the baseline.
    let bare = yui_core::presets::add(&store, "Bare").expect("preset");
    let empty: Vec<_> = (0..calls.min(500))
        .map(|i| prep(&bare.id, &queries[i % queries.len()]))
        .collect();
    report2("turn::prepare, character without memory", empty);

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
