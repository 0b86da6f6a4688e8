//! The `yui.memory` setting (docs/settings.md): whether characters remember, when extraction
//! runs, the token budgets of recall and of the history window, which characters are paused, and
//! the optional embeddings model.

use crate::error::{CoreError, Result};
use crate::store::{kv, Store};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Settings key.
pub const KEY: &str = "yui.memory";

/// What `yui.memory` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Extraction on (new memories are written). Off: recall still uses what is stored.
    pub enabled: bool,
    /// Minutes without a turn after which a character's conversation is read for memories.
    pub pause_minutes: u64,
    /// Tokens the recalled lines of one turn may take (pinned memories always go).
    pub recall_tokens: usize,
    /// Tokens the history window of one turn may take (newest lines first).
    pub history_tokens: usize,
    /// Preset ids whose remembering is paused (no extraction; recall goes on).
    pub paused: Vec<String>,
    /// An OpenAI-compatible embeddings model; `None`: BM25 alone.
    pub embeddings: Option<Embeddings>,
}

/// `POST {base_url}/embeddings` with `model`; `base_url` `None`: the backend's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Embeddings {
    pub model: String,
    #[serde(default)]
    pub base_url: Option<String>,
    /// How long a turn waits for its message's embedding (50–5000 ms); past it the turn recalls
    /// by words alone.
    #[serde(default = "default_embed_timeout")]
    pub timeout_ms: u64,
}

pub const DEFAULT_EMBED_TIMEOUT_MS: u64 = 400;

fn default_embed_timeout() -> u64 {
    DEFAULT_EMBED_TIMEOUT_MS
}

pub const DEFAULT_PAUSE_MINUTES: u64 = 2;
pub const DEFAULT_RECALL_TOKENS: usize = 400;
pub const DEFAULT_HISTORY_TOKENS: usize = 3000;

impl Default for Config {
    fn default() -> Self {
        Self {
            enabled: true,
            pause_minutes: DEFAULT_PAUSE_MINUTES,
            recall_tokens: DEFAULT_RECALL_TOKENS,
            history_tokens: DEFAULT_HISTORY_TOKENS,
            paused: Vec::new(),
            embeddings: None,
        }
    }
}

impl Config {
    /// Parse and check a value; the error says what is expected.
    pub fn from_value(v: &Value) -> Result<Self> {
        let c: Config = serde_json::from_value(v.clone()).map_err(|e| {
            CoreError::invalid(format!(
                "{KEY} must be {{enabled, pause_minutes, recall_tokens, history_tokens, paused, embeddings}}: {e}"
            ))
        })?;
        if !(1..=1440).contains(&c.pause_minutes) {
            return Err(CoreError::invalid(format!(
                "{KEY}.pause_minutes must be a whole number from 1 to 1440"
            )));
        }
        if c.recall_tokens > 8000 {
            return Err(CoreError::invalid(format!(
                "{KEY}.recall_tokens must be from 0 to 8000"
            )));
        }
        if !(200..=200_000).contains(&c.history_tokens) {
            return Err(CoreError::invalid(format!(
                "{KEY}.history_tokens must be from 200 to 200000"
            )));
        }
        if let Some(e) = &c.embeddings {
            if e.model.trim().is_empty() {
                return Err(CoreError::invalid(format!(
                    "{KEY}.embeddings.model is empty (use null for no embeddings)"
                )));
            }
            if !(50..=5000).contains(&e.timeout_ms) {
                return Err(CoreError::invalid(format!(
                    "{KEY}.embeddings.timeout_ms must be from 50 to 5000 (milliseconds)"
                )));
            }
        }
        Ok(c)
    }

    /// Whether extraction may write memories for `preset_id`.
    pub fn remembers(&self, preset_id: &str) -> bool {
        self.enabled && !self.paused.iter().any(|p| p == preset_id)
    }
}

pub fn default_value() -> Value {
    serde_json::to_value(Config::default()).unwrap_or(Value::Null)
}

/// The setting in effect (an unreadable value reads as the default).
pub fn load(store: &Store) -> Config {
    kv::get(store, KEY)
        .ok()
        .flatten()
        .and_then(|v| Config::from_value(&v).ok())
        .unwrap_or_default()
}

/// Pause or resume remembering for one character (Settings → Memory's switch).
pub fn set_paused(store: &Store, preset_id: &str, paused: bool) -> Result<Config> {
    let mut c = load(store);
    c.paused.retain(|p| p != preset_id);
    if paused {
        c.paused.push(preset_id.to_string());
    }
    kv::put(store, KEY, &serde_json::to_value(&c)?)?;
    Ok(c)
}
