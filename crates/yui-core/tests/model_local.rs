//! What `yui model list` sees on disk: each catalog model's state (available, downloading while
//! a live pull holds its lock, installed, in use) with the bytes of an unfinished download, and
//! the GGUF files of LM Studio and llama.cpp offered as found (projector files left out).

use std::path::Path;
use yui_core::model::catalog::Entry;
use yui_core::model::local::{self, State};
use yui_core::paths::Paths;

fn entry(name: &str, file: &str, size: u64) -> Entry {
    Entry {
        name: name.into(),
        url: format!("http://127.0.0.1:9/{file}"),
        file: file.into(),
        size,
        sha256: "0".repeat(64),
        ram: 1,
        licence: "Apache-2.0".into(),
        note: String::new(),
    }
}

fn paths(dir: &Path) -> Paths {
    Paths {
        data_dir: dir.join("data"),
        log_dir: dir.join("logs"),
    }
}

fn states(l: &[local::Listed]) -> Vec<(String, State, Option<u64>)> {
    l.iter()
        .map(|m| (m.name.clone(), m.state.clone(), m.partial))
        .collect()
}

#[test]
fn each_model_has_its_state_and_an_unfinished_download_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let p = paths(dir.path());
    let models = local::dir(&p);
    std::fs::create_dir_all(&models).unwrap();
    let catalog = vec![
        entry("a", "a.gguf", 10),
        entry("b", "b.gguf", 10),
        entry("c", "c.gguf", 10),
        entry("d", "d.gguf", 10),
    ];
    // b: half downloaded from its URL, no pull running (a dead pid's lock).
    std::fs::write(models.join("b.gguf.part"), [0u8; 5]).unwrap();
    std::fs::write(models.join("b.gguf.part.url"), &catalog[1].url).unwrap();
    std::fs::write(models.join("b.gguf.part.lock"), "999999999").unwrap();
    // c: a pull under way (this process holds the lock).
    std::fs::write(models.join("c.gguf.part"), [0u8; 3]).unwrap();
    std::fs::write(models.join("c.gguf.part.url"), &catalog[2].url).unwrap();
    std::fs::write(
        models.join("c.gguf.part.lock"),
        std::process::id().to_string(),
    )
    .unwrap();
    // d: whole, and the backend's built-in model.
    std::fs::write(models.join("d.gguf"), [0u8; 10]).unwrap();
    let listed = local::list(
        &p,
        &catalog,
        local::Looking {
            in_use: Some("d"),
            ..Default::default()
        },
    );
    assert_eq!(
        states(&listed),
        [
            ("a".into(), State::Available, None),
            ("b".into(), State::Available, Some(5)),
            ("c".into(), State::Downloading, Some(3)),
            ("d".into(), State::InUse, None),
        ]
    );
    let listed = local::list(&p, &catalog, local::Looking::default());
    assert_eq!(listed[3].state, State::Installed);
    // A partial file kept for another URL is no download of this model.
    std::fs::write(models.join("b.gguf.part.url"), "http://elsewhere/b.gguf").unwrap();
    assert_eq!(
        local::list(&p, &catalog, local::Looking::default())[1].partial,
        None
    );
}

#[test]
fn gguf_files_of_lm_studio_and_llama_cpp_are_offered() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    for (sub, file) in [
        (".lmstudio/models/pub/Repo-GGUF", "Repo-Q4_K_M.gguf"),
        (".lmstudio/models/pub/Repo-GGUF", "mmproj-Repo-f16.gguf"),
        (".cache/lm-studio/models/old/X-GGUF", "X.Q8_0.gguf"),
        (
            ".cache/llama.cpp",
            "ggml-org_Qwen3-1.7B-GGUF_Qwen3-1.7B-Q4_K_M.gguf",
        ),
        (".cache/llama.cpp", "notes.txt"),
    ] {
        std::fs::create_dir_all(home.join(sub)).unwrap();
        std::fs::write(home.join(sub).join(file), b"GGUF").unwrap();
    }
    let listed = local::list(
        &paths(dir.path()),
        &[],
        local::Looking {
            home: Some(&home),
            ..Default::default()
        },
    );
    let seen: Vec<(String, String, State)> = listed
        .into_iter()
        .map(|m| (m.name, m.source, m.state))
        .collect();
    assert_eq!(
        seen,
        [
            ("repo-q4_k_m".into(), "LM Studio".into(), State::Found),
            ("x.q8_0".into(), "LM Studio".into(), State::Found),
            (
                "ggml-org_qwen3-1.7b-gguf_qwen3-1.7b-q4_k_m".into(),
                "llama.cpp".into(),
                State::Found
            ),
        ]
    );
    assert!(local::list(&paths(dir.path()), &[], local::Looking::default()).is_empty());
}
