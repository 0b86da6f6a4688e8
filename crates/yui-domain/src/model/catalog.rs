//! The model catalog: the models YUI offers to download (name, URL, size, sha256, RAM needed,
//! licence). The built-in list is [`BUILT_IN`]; the setting `yui.model.catalog_file` points the
//! catalog at a JSON file of entries instead (tests serve a real GGUF that way), and
//! `yui.model.mirror` replaces the download host of every entry ([`with_mirror`]).

use serde::{Deserialize, Serialize};
use std::path::Path;

/// One downloadable model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// What the user types (`yui model pull qwen3-1.7b`).
    pub name: String,
    /// Where it is downloaded from (the host is replaced by `yui.model.mirror`).
    pub url: String,
    /// The file name under the data dir's `models/`.
    pub file: String,
    /// Exact size in bytes.
    pub size: u64,
    /// Lower-case hex SHA-256 of the whole file.
    pub sha256: String,
    /// Memory the engine needs to run it (the file, its context and the engine), in bytes.
    pub ram: u64,
    /// The model's licence (SPDX id where it has one).
    pub licence: String,
    /// One line for the user: what it is good for.
    #[serde(default)]
    pub note: String,
}

/// The default: Qwen3-1.7B in Q4_K_M (the best published tool-calling score at this size).
pub const DEFAULT: &str = "qwen3-1.7b";

/// The built-in catalog. Sizes and SHA-256 are the files as published in unsloth's repositories
/// on Hugging Face (the Git LFS object id of each file; docs/built-in-model.md says where they
/// were read).
pub fn built_in() -> Vec<Entry> {
    vec![
        Entry {
            name: DEFAULT.into(),
            url:
                "https://huggingface.co/unsloth/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf"
                    .into(),
            file: "Qwen3-1.7B-Q4_K_M.gguf".into(),
            size: 1_107_409_472,
            sha256: "b139949c5bd74937ad8ed8c8cf3d9ffb1e99c866c823204dc42c0d91fa181897".into(),
            ram: 3 * GIB,
            licence: "Apache-2.0".into(),
            note: "The default: answers and calls tools well for its size; needs 8 GB of memory."
                .into(),
        },
        Entry {
            name: "qwen3-0.6b".into(),
            url:
                "https://huggingface.co/unsloth/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q4_K_M.gguf"
                    .into(),
            file: "Qwen3-0.6B-Q4_K_M.gguf".into(),
            size: 396_705_472,
            sha256: "ac2d97712095a558e31573f62f466a3f9d93990898b0ec79d7c974c1780d524a".into(),
            ram: 3 * GIB / 2,
            licence: "Apache-2.0".into(),
            note: "Lighter, for machines with less than 8 GB of memory; weaker with tools.".into(),
        },
    ]
}

const GIB: u64 = 1024 * 1024 * 1024;

/// Below this much memory a machine counts as "under 8 GB" (one sold as 8 GB shows about
/// 7.7 GiB in `MemTotal`: the kernel keeps some).
pub const SMALL_MACHINE: u64 = 15 * GIB / 2;

/// The model to offer a machine with `memory` bytes (`None`: unknown): the default (or the
/// first entry) on 8 GB and more, else the entry that needs the least memory.
pub fn for_memory(entries: &[Entry], memory: Option<u64>) -> Option<&Entry> {
    let default = entries
        .iter()
        .find(|e| e.name == DEFAULT)
        .or(entries.first());
    match memory {
        Some(m) if m < SMALL_MACHINE => entries.iter().min_by_key(|e| e.ram),
        _ => default,
    }
}

/// Why a catalog file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("cannot read the model catalog {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the model catalog {path} is not a JSON list of models: {source}")]
    Parse {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("the model catalog {path} has a bad entry: {reason}")]
    Entry { path: String, reason: String },
}

/// The entries of a catalog file (a JSON array of [`Entry`]), each checked.
pub fn from_file(path: &Path) -> Result<Vec<Entry>, CatalogError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| CatalogError::Read {
        path: shown.clone(),
        source,
    })?;
    let entries: Vec<Entry> =
        serde_json::from_str(&text).map_err(|source| CatalogError::Parse {
            path: shown.clone(),
            source,
        })?;
    for e in &entries {
        check(e).map_err(|reason| CatalogError::Entry {
            path: shown.clone(),
            reason,
        })?;
    }
    Ok(entries)
}

/// An entry YUI can download and store safely.
pub(crate) fn check(e: &Entry) -> Result<(), String> {
    if e.name.trim().is_empty() || e.name.contains(char::is_whitespace) {
        return Err(format!("the name {:?} must be one word", e.name));
    }
    if !is_plain_file_name(&e.file) {
        return Err(format!(
            "{}: the file {:?} must be a plain .gguf file name",
            e.name, e.file
        ));
    }
    if !(e.url.starts_with("http://") || e.url.starts_with("https://")) {
        return Err(format!("{}: the URL must be http(s)://", e.name));
    }
    if e.sha256.len() != 64 || !e.sha256.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("{}: sha256 must be 64 hex digits", e.name));
    }
    if e.size == 0 {
        return Err(format!("{}: size must be more than 0", e.name));
    }
    Ok(())
}

/// A file name with no directory part that ends in `.gguf`.
pub fn is_plain_file_name(f: &str) -> bool {
    !f.is_empty()
        && !f.contains(['/', '\\'])
        && f != "."
        && f != ".."
        && !f.starts_with('.')
        && f.to_ascii_lowercase().ends_with(".gguf")
}

/// `url` with its scheme and host (and port) replaced by `mirror`'s; the path is kept, after
/// any path the mirror has (`https://hf-mirror.example/hf` + `/unsloth/…`).
pub fn with_mirror(url: &str, mirror: Option<&str>) -> String {
    let Some(m) = mirror.map(str::trim).filter(|m| !m.is_empty()) else {
        return url.to_string();
    };
    let path = url
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]))
        .unwrap_or("/");
    format!("{}{path}", m.trim_end_matches('/'))
}

/// Bytes as people read them: `1.1 GB`, `379 MB`.
pub fn human(bytes: u64) -> String {
    const MB: f64 = 1_000_000.0;
    let b = bytes as f64;
    if b >= 1000.0 * MB {
        format!("{:.1} GB", b / (1000.0 * MB))
    } else if b >= MB {
        format!("{:.0} MB", b / MB)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_entries_pass_their_own_check() {
        for e in built_in() {
            assert_eq!(check(&e), Ok(()), "{}", e.name);
            assert!(e.url.ends_with(&e.file), "{}", e.name);
        }
        assert_eq!(built_in()[0].name, DEFAULT);
    }

    #[test]
    fn a_mirror_replaces_the_host_and_keeps_the_path() {
        let u =
            "https://huggingface.co/unsloth/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf";
        assert_eq!(with_mirror(u, None), u);
        assert_eq!(with_mirror(u, Some("  ")), u);
        assert_eq!(
            with_mirror(u, Some("http://127.0.0.1:9/")),
            "http://127.0.0.1:9/unsloth/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf"
        );
        assert_eq!(
            with_mirror("http://h:1/a.gguf", Some("https://m.example/hf")),
            "https://m.example/hf/a.gguf"
        );
    }

    #[test]
    fn file_names_that_leave_the_models_dir_are_refused() {
        for bad in ["../x.gguf", "a/b.gguf", ".hidden.gguf", "x.bin", ""] {
            assert!(!is_plain_file_name(bad), "{bad}");
        }
        assert!(is_plain_file_name("SmolLM2-135M-Instruct.Q4_1.gguf"));
    }

    #[test]
    fn a_machine_under_8_gb_is_offered_the_lighter_model() {
        let c = built_in();
        assert_eq!(for_memory(&c, Some(16 * GIB)).unwrap().name, DEFAULT);
        assert_eq!(for_memory(&c, None).unwrap().name, DEFAULT);
        // An "8 GB" machine's MemTotal.
        assert_eq!(
            for_memory(&c, Some(8_048_576 * 1024)).unwrap().name,
            DEFAULT
        );
        assert_eq!(for_memory(&c, Some(4 * GIB)).unwrap().name, "qwen3-0.6b");
        assert_eq!(for_memory(&[], Some(4 * GIB)), None);
    }

    #[test]
    fn sizes_in_words() {
        assert_eq!(human(1_107_409_472), "1.1 GB");
        assert_eq!(human(98_362_432), "98 MB");
        assert_eq!(human(12), "12 bytes");
    }
}
