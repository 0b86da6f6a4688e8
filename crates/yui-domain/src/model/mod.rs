//! The built-in model: the catalog of downloadable GGUF models ([`catalog`]), their download
//! ([`download`]), what is installed under the data dir's `models/` and the user's own GGUF files
//! ([`local`]), and the engine that serves one of them to the turns ([`engine`]: llama.cpp's
//! `llama-server` as a child on 127.0.0.1). docs/built-in-model.md tells the whole story.
//!
//! Its settings are separate keys, each declared once in `settings::KNOWN` through
//! [`SETTINGS`]: `yui.model.mirror`, `yui.model.catalog_file`, `yui.model.engine_path`,
//! `yui.model.threads`, `yui.model.idle_stop_s`. Which model the turns use is the backend's
//! `builtin` field (`yui model use`).

pub mod builtin;
pub mod catalog;
pub mod download;
pub mod engine;
pub mod local;
pub mod sys;

use crate::error::{CoreError, Result};
use crate::store::{kv, Store};
use serde_json::{json, Value};
use std::path::PathBuf;

pub const MIRROR_KEY: &str = "yui.model.mirror";
pub const CATALOG_FILE_KEY: &str = "yui.model.catalog_file";
pub const ENGINE_PATH_KEY: &str = "yui.model.engine_path";
pub const THREADS_KEY: &str = "yui.model.threads";
pub const IDLE_STOP_KEY: &str = "yui.model.idle_stop_s";
/// [`IDLE_STOP_KEY`] when never set: ten minutes without a turn.
pub const IDLE_STOP_DEFAULT: u64 = 600;
/// The longest idle stop accepted (a day).
pub const IDLE_STOP_MAX: u64 = 86_400;
/// The most engine threads accepted.
pub const THREADS_MAX: u64 = 256;

/// One of this module's settings: key, shape in words, default, check, meaning.
pub struct Setting {
    pub key: &'static str,
    pub kind: &'static str,
    pub default: fn() -> Value,
    pub validate: fn(&Value) -> Result<()>,
    pub doc: &'static str,
}

fn text_or_null(key: &str, v: &Value, what: &str) -> Result<()> {
    match v {
        Value::Null => Ok(()),
        Value::String(s) if !s.trim().is_empty() => Ok(()),
        _ => Err(CoreError::invalid(format!("{key} must be {what} or null"))),
    }
}

fn whole_in(key: &str, v: &Value, lo: u64, hi: u64, null_ok: bool) -> Result<()> {
    match v.as_u64() {
        Some(n) if (lo..=hi).contains(&n) => Ok(()),
        None if null_ok && v.is_null() => Ok(()),
        _ => Err(CoreError::invalid(format!(
            "{key} must be a whole number from {lo} to {hi}{}",
            if null_ok { " or null" } else { "" }
        ))),
    }
}

/// The settings of the built-in model, declared here and listed in `settings::KNOWN`.
pub const SETTINGS: &[Setting] = &[
    Setting {
        key: MIRROR_KEY,
        kind: "string URL (http(s)://host[/path]) or null",
        default: || Value::Null,
        validate: |v| {
            text_or_null(MIRROR_KEY, v, "an http(s):// URL")?;
            match v.as_str() {
                Some(s) if !(s.starts_with("http://") || s.starts_with("https://")) => Err(
                    CoreError::invalid(format!("{MIRROR_KEY} must be an http(s):// URL or null")),
                ),
                _ => Ok(()),
            }
        },
        doc: "Replaces the host of every model download URL (a mirror behind a firewall; the tests' server on 127.0.0.1). null: the catalog's own hosts.",
    },
    Setting {
        key: CATALOG_FILE_KEY,
        kind: "string path or null",
        default: || Value::Null,
        validate: |v| text_or_null(CATALOG_FILE_KEY, v, "a file path"),
        doc: "A JSON file of catalog entries ({name, url, file, size, sha256, ram, licence, note}) used instead of the built-in catalog. null: the built-in one.",
    },
    Setting {
        key: ENGINE_PATH_KEY,
        kind: "string path or null",
        default: || Value::Null,
        validate: |v| text_or_null(ENGINE_PATH_KEY, v, "a file path"),
        doc: "The llama-server program the built-in engine runs. null: llama-server found on PATH.",
    },
    Setting {
        key: THREADS_KEY,
        kind: "integer 1-256 or null",
        default: || Value::Null,
        validate: |v| whole_in(THREADS_KEY, v, 1, THREADS_MAX, true),
        doc: "Threads of the built-in engine. null: the machine's physical cores.",
    },
    Setting {
        key: IDLE_STOP_KEY,
        kind: "integer 1-86400",
        default: || json!(IDLE_STOP_DEFAULT),
        validate: |v| whole_in(IDLE_STOP_KEY, v, 1, IDLE_STOP_MAX, false),
        doc: "Seconds without a turn after which the built-in engine stops and frees its memory (600). The next turn starts it again.",
    },
];

/// The settings of the built-in model, read once.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub mirror: Option<String>,
    pub catalog_file: Option<PathBuf>,
    pub engine_path: Option<PathBuf>,
    pub threads: Option<u32>,
    pub idle_stop_s: u64,
}

fn stored(store: &Store, key: &str) -> Result<Value> {
    let v = kv::get(store, key)?.unwrap_or(Value::Null);
    if !v.is_null() {
        if let Some(s) = SETTINGS.iter().find(|s| s.key == key) {
            (s.validate)(&v)?;
        }
    }
    Ok(v)
}

fn text(v: Value) -> Option<String> {
    v.as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl Config {
    /// The stored settings (defaults where unset).
    pub fn load(store: &Store) -> Result<Self> {
        Ok(Self {
            mirror: text(stored(store, MIRROR_KEY)?),
            catalog_file: text(stored(store, CATALOG_FILE_KEY)?).map(PathBuf::from),
            engine_path: text(stored(store, ENGINE_PATH_KEY)?).map(PathBuf::from),
            threads: stored(store, THREADS_KEY)?
                .as_u64()
                .and_then(|n| u32::try_from(n).ok()),
            idle_stop_s: stored(store, IDLE_STOP_KEY)?
                .as_u64()
                .unwrap_or(IDLE_STOP_DEFAULT),
        })
    }

    /// The catalog in effect: the file's entries when `yui.model.catalog_file` is set, else the
    /// built-in ones.
    pub fn catalog(&self) -> Result<Vec<catalog::Entry>> {
        match &self.catalog_file {
            Some(p) => catalog::from_file(p).map_err(|e| CoreError::invalid(e.to_string())),
            None => Ok(catalog::built_in()),
        }
    }

    /// Engine threads: the setting, else the physical cores.
    pub fn threads(&self) -> u32 {
        self.threads
            .unwrap_or_else(|| u32::try_from(sys::physical_cores()).unwrap_or(1))
    }
}

/// Make the built-in engine with the installed model `name` the backend of every turn (`yui model
/// use`, the first run's download, Settings → Backend → Built-in model); the sentence that says
/// so. Refused in plain words when `name` is not installed.
pub fn use_model(store: &Store, paths: &crate::paths::Paths, name: &str) -> Result<String> {
    let catalog = Config::load(store)?.catalog()?;
    if local::installed(paths, &catalog, name).is_none() {
        return Err(CoreError::not_found(format!(
            "{name} is not installed: `yui model pull {name}` or `yui model add FILE.gguf` first"
        )));
    }
    let mut b = crate::backend::load(store)?;
    b.builtin = Some(name.to_string());
    b.model = name.to_string();
    b.transport = crate::backend::Transport::ChatCompletions;
    crate::backend::save(store, &b)?;
    Ok(format!(
        "The built-in engine with {name} is now the backend; it starts by itself on the next turn."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(key: &str, v: Value) -> std::result::Result<(), String> {
        let s = SETTINGS.iter().find(|s| s.key == key).unwrap();
        (s.validate)(&v).map_err(|e| e.message)
    }

    #[test]
    fn each_setting_refuses_a_bad_value_in_plain_words() {
        assert_eq!(check(MIRROR_KEY, json!("http://127.0.0.1:9")), Ok(()));
        assert_eq!(check(MIRROR_KEY, Value::Null), Ok(()));
        assert_eq!(
            check(MIRROR_KEY, json!("ftp://m")),
            Err("yui.model.mirror must be an http(s):// URL or null".into())
        );
        assert_eq!(
            check(THREADS_KEY, json!(0)),
            Err("yui.model.threads must be a whole number from 1 to 256 or null".into())
        );
        assert_eq!(check(THREADS_KEY, Value::Null), Ok(()));
        assert_eq!(
            check(IDLE_STOP_KEY, Value::Null),
            Err("yui.model.idle_stop_s must be a whole number from 1 to 86400".into())
        );
        assert_eq!(check(IDLE_STOP_KEY, json!(600)), Ok(()));
        assert_eq!(
            check(CATALOG_FILE_KEY, json!("")),
            Err("yui.model.catalog_file must be a file path or null".into())
        );
        for s in SETTINGS {
            assert_eq!(check(s.key, (s.default)()), Ok(()), "{}", s.key);
        }
    }
}
