//! Every committed fuzz input, replayed in the ordinary test run: the seeds (`fuzz/seeds/<target>/`)
//! and every input a target ever crashed on (`fuzz/regressions/<target>/`), through the same
//! functions the cargo-fuzz targets call (`fuzz/src/lib.rs`, included here so the normal build
//! compiles it; no nightly, no libFuzzer). The fuzzing itself is `scripts/fuzz.sh`, a lane of
//! its own (docs/FUZZING.md).

#[allow(dead_code)]
#[path = "../../../fuzz/src/lib.rs"]
mod yui_fuzz;

use std::path::{Path, PathBuf};
use yui_core::backend::Transport;

/// A fuzz target's body: one input.
type Body = fn(&[u8]);

/// Each target's name (its folder under seeds/ and regressions/) and its body.
const TARGETS: &[(&str, Body)] = &[
    ("card_import", yui_fuzz::card_import),
    ("chat_replay", |d| {
        yui_fuzz::replay_sse(Transport::ChatCompletions, d)
    }),
    ("command_frames", yui_fuzz::command_frames),
    ("mcp_config", yui_fuzz::mcp_config),
    ("push_frames", yui_fuzz::replay_push),
    ("realtime_events", yui_fuzz::replay_realtime),
    ("responses_replay", |d| {
        yui_fuzz::replay_sse(Transport::Responses, d)
    }),
    ("settings_json", yui_fuzz::settings_json),
    ("tool_args", yui_fuzz::tool_args),
    ("vocab_json", yui_fuzz::vocab_json),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn inputs(target: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["seeds", "regressions"] {
        let Ok(rd) = std::fs::read_dir(fuzz_dir().join(dir).join(target)) else {
            continue;
        };
        out.extend(rd.flatten().map(|e| e.path()).filter(|p| p.is_file()));
    }
    out.sort();
    out
}

#[test]
fn every_committed_fuzz_input_runs_through_its_target_without_a_panic() {
    let mut panicked = Vec::new();
    for (target, run) in TARGETS {
        let files = inputs(target);
        assert!(
            !files.is_empty(),
            "{target}: no seeds found under fuzz/seeds/{target}/"
        );
        for f in files {
            let data = std::fs::read(&f).unwrap();
            if std::panic::catch_unwind(|| run(&data)).is_err() {
                panicked.push(f.display().to_string());
            }
        }
    }
    assert!(
        panicked.is_empty(),
        "these inputs panicked their target: {panicked:?}"
    );
}

#[test]
fn every_fuzz_target_is_replayed() {
    // A target added to fuzz/Cargo.toml without a row above would never be replayed.
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).unwrap();
    let declared: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .map(|n| n.trim_end_matches('"'))
        .filter(|n| *n != "yui-fuzz")
        .collect();
    let mut replayed: Vec<&str> = TARGETS.iter().map(|(t, _)| *t).collect();
    let mut declared_sorted = declared.clone();
    declared_sorted.sort();
    replayed.sort();
    assert_eq!(declared_sorted, replayed);
}
