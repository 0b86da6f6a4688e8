//! Per-turn cost of declaring generate_express: the registry builds the tool (one vocabulary
//! load from a real SQLite file), then asks for its description and parameters (built from that
//! snapshot). p50 / p99 / max over N turns, for the default vocabulary and for a large
//! one (200 emotions, 200 motions, 50 voice tags).
//!
//! Run: `cargo bench -p yui-core --bench vocab_schema` (N from `YUI_BENCH_CALLS`, default 2000).

use std::time::{Duration, Instant};
use yui_core::tools::express::ExpressTool;
use yui_core::vocab::{self, Emotion, Motion, Vocab, VoiceMode, VoiceTag};
use yui_core::Store;

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn large() -> Vocab {
    let mut v = Vocab::default();
    v.emotions = (0..200)
        .map(|i| Emotion {
            id: format!("emotion_{i}"),
            label: format!("Emotion {i}"),
            description: "a face with a description of ordinary length".into(),
        })
        .collect();
    v.motions = (0..200)
        .map(|i| Motion {
            id: format!("motion_{i}"),
            label: format!("Motion {i}"),
            description: "a motion with a description of ordinary length".into(),
            reactive: i % 10 == 0,
            ambient: i % 10 == 1,
            broker_publish: i % 10 != 2,
            trigger: None,
        })
        .collect();
    v.motion_selection = v.motions.iter().map(|m| m.id.clone()).collect();
    v.voice.mode = VoiceMode::Enum;
    v.voice.tags = (0..50)
        .map(|i| VoiceTag {
            tag: format!("tag_{i}"),
            meaning: "what the tag does to the voice".into(),
        })
        .collect();
    v
}

fn run(label: &str, store: &Store, n: usize) {
    let mut times = Vec::with_capacity(n);
    let mut bytes = 0;
    for _ in 0..n {
        let t = Instant::now();
        let tool = ExpressTool::for_turn(store).expect("vocabulary is not empty");
        let description = tool.description();
        let parameters = tool.parameters();
        times.push(t.elapsed());
        bytes = description.len() + parameters.to_string().len();
    }
    times.sort();
    println!(
        "{label}: n={n} p50={:?} p99={:?} max={:?} schema={bytes} bytes",
        pct(&times, 0.5),
        pct(&times, 0.99),
        times[n - 1]
    );
}

fn main() {
    let n: usize = std::env::var("YUI_BENCH_CALLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if std::env::args().any(|a| a == "--bench") {
            2000
        } else {
            20
        });
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("yui.db")).expect("store");
    vocab::save(&store, &Vocab::default()).expect("save");
    run("default vocabulary", &store, n);
    vocab::save(&store, &large()).expect("save");
    run("large vocabulary", &store, n);
}
