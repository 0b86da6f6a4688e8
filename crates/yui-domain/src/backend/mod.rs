//! Model backend settings and the API key.
//!
//! The backend (base URL, model, transport, push URL) is the settings key `yui.backend`. The API
//! key is a secret and never goes there: it is kept in the OS keyring (`keyring` crate: Secret
//! Service on Linux, Keychain on macOS, Credential Manager on Windows). Where no keyring answers —
//! a headless machine without a Secret Service, say — it falls back to `<data_dir>/secrets.json`,
//! readable only by the user (0600), the key obfuscated (not plain text, but not encrypted
//! either), and every status report says so (`api_key_storage: "file-fallback (no OS keyring)"`).
//!
//! The key never appears in logs, in the database, in `Debug` output, or in anything sent to the
//! webview: views expose only `has_api_key`. Keyring calls run on a helper thread with a deadline
//! so a Secret Service that never answers cannot hang the app or the CLI.

use crate::error::{CoreError, Result};
use crate::paths::Paths;
use crate::store::{kv, Store};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:11434/v1";
pub const DEFAULT_MODEL: &str = "llama3.2";
/// Reply cap sent with every request (`max_tokens` / `max_output_tokens`): without one a small
/// local model was seen running to its whole context, a minute per reply.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 512;
/// Largest temperature accepted (OpenAI's range is 0–2).
pub const MAX_TEMPERATURE: f64 = 2.0;
/// Set to `off` to never touch the OS keyring (tests, CI): the file fallback is used.
pub const KEYRING_ENV: &str = "YUI_KEYRING";
/// The fallback file, in the data dir.
pub const SECRETS_FILE: &str = "secrets.json";

/// How a turn reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    #[default]
    ChatCompletions,
    Responses,
    Push,
    /// The realtime session over WebSocket (docs/realtime-transport.md).
    Realtime,
}

/// How a tool is declared to a model: (name, description, JSON Schema of the arguments) → the
/// wire's declaration (yui-base `schema`).
pub type ToolSchema = fn(&str, &str, &Value) -> Value;

/// The request a one-shot question (memory extraction) is sent as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OneShot {
    /// `POST chat/completions`, not streamed.
    ChatCompletions,
    /// `POST responses`, not streamed, not stored.
    Responses,
}

/// What the floors below the engine need to know of a transport, said once here (the engine's
/// own descriptor is in yui-core's `turn/transport/`, one per transport folder).
impl Transport {
    /// How tools are declared on it; `None` on push, which declares none itself: its cues
    /// arrive in render and speech segments.
    pub fn tool_schema(self) -> Option<ToolSchema> {
        match self {
            Transport::ChatCompletions => Some(crate::schema::chat),
            Transport::Responses => Some(crate::schema::responses),
            Transport::Realtime => Some(crate::schema::realtime),
            Transport::Push => None,
        }
    }

    /// The request a one-shot question takes; `None` where there is none (push and realtime
    /// keep a conversation, not requests).
    pub fn one_shot(self) -> Option<OneShot> {
        match self {
            Transport::ChatCompletions => Some(OneShot::ChatCompletions),
            Transport::Responses => Some(OneShot::Responses),
            Transport::Push | Transport::Realtime => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Transport::ChatCompletions => "chat_completions",
            Transport::Responses => "responses",
            Transport::Push => "push",
            Transport::Realtime => "realtime",
        }
    }
}

impl std::str::FromStr for Transport {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "chat_completions" => Ok(Transport::ChatCompletions),
            "responses" => Ok(Transport::Responses),
            "push" => Ok(Transport::Push),
            "realtime" => Ok(Transport::Realtime),
            other => Err(CoreError::invalid(format!(
                "transport must be chat_completions, responses, push or realtime, not {other:?}"
            ))),
        }
    }
}

/// The settings key `yui.backend`. Holds no secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackendConfig {
    pub base_url: String,
    pub model: String,
    #[serde(default)]
    pub transport: Transport,
    #[serde(default)]
    pub push_url: Option<String>,
    /// The realtime transport's WebSocket URL; `None`: the base URL's (`realtime::url_of`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realtime_url: Option<String>,
    /// Reply cap: `max_tokens` on Chat Completions, `max_output_tokens` on Responses.
    #[serde(default = "default_max_output_tokens")]
    pub max_output_tokens: u32,
    /// Sampling temperature; `None` leaves it to the server.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// The built-in engine's model (`yui model use NAME`): turns go to YUI's own llama.cpp
    /// engine, started on demand, instead of `base_url` (docs/built-in-model.md). Setting a
    /// base URL clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin: Option<String>,
}

fn default_max_output_tokens() -> u32 {
    DEFAULT_MAX_OUTPUT_TOKENS
}

impl Default for BackendConfig {
    fn default() -> Self {
        Self {
            base_url: DEFAULT_BASE_URL.to_string(),
            model: DEFAULT_MODEL.to_string(),
            transport: Transport::ChatCompletions,
            push_url: None,
            realtime_url: None,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            temperature: None,
            builtin: None,
        }
    }
}

/// What a request carries besides the model: the reply cap and the temperature. The configured
/// backend always has a cap ([`Sampling::of`]); the default (nothing added) is for callers that
/// build exact bodies.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sampling {
    pub max_output_tokens: Option<u32>,
    pub temperature: Option<f64>,
}

impl Sampling {
    pub fn of(cfg: &BackendConfig) -> Self {
        Self {
            max_output_tokens: Some(cfg.max_output_tokens),
            temperature: cfg.temperature,
        }
    }

    /// Add the fields to a request body of `transport`: `max_tokens` on Chat Completions,
    /// `max_output_tokens` on Responses, `temperature` when set.
    pub fn apply(&self, transport: Transport, body: &mut Value) {
        let cap = match transport {
            Transport::Responses => "max_output_tokens",
            _ => "max_tokens",
        };
        if let Some(n) = self.max_output_tokens {
            body[cap] = Value::from(n);
        }
        if let Some(t) = self.temperature {
            body["temperature"] = Value::from(t);
        }
    }
}

/// The usual local servers and their default ports. LocalAI shares 8080 with llama.cpp's
/// `llama-server` (told apart by the answer, see `discover::name_for`) and also uses 8081.
pub const LOCAL_SERVERS: &[(&str, u16)] = &[
    ("Ollama", 11434),
    ("LM Studio", 1234),
    ("llama.cpp", 8080),
    ("vLLM", 8000),
    ("LocalAI", 8081),
    ("Jan", 1337),
];

/// The server usually found on `port`, if it is one of [`LOCAL_SERVERS`].
pub fn server_on_port(port: u16) -> Option<&'static str> {
    LOCAL_SERVERS
        .iter()
        .find(|(_, p)| *p == port)
        .map(|(n, _)| *n)
}

fn check_url(what: &str, url: &str) -> Result<()> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .or_else(|| url.strip_prefix("ws://"))
        .or_else(|| url.strip_prefix("wss://"));
    match rest {
        Some(r) if !r.is_empty() && !url.chars().any(char::is_whitespace) => Ok(()),
        _ => Err(CoreError::invalid(format!(
            "{what} must be an http(s):// or ws(s):// URL, not {url:?}"
        ))),
    }
}

/// The default `yui.backend` value: [`BackendConfig::default`] as JSON.
pub fn default_value() -> Value {
    serde_json::to_value(BackendConfig::default()).expect("a BackendConfig always serializes")
}

impl BackendConfig {
    /// Parse and validate a `yui.backend` value.
    pub fn from_value(value: &Value) -> Result<Self> {
        let cfg: BackendConfig = serde_json::from_value(value.clone())
            .map_err(|e| CoreError::invalid(format!("yui.backend: {e}")))?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn validate(&self) -> Result<()> {
        check_url("base_url", &self.base_url)?;
        if self.model.trim().is_empty() {
            return Err(CoreError::invalid("model must not be empty"));
        }
        if self.max_output_tokens == 0 {
            return Err(CoreError::invalid("max_output_tokens must be at least 1"));
        }
        if let Some(t) = self.temperature {
            if !(0.0..=MAX_TEMPERATURE).contains(&t) {
                return Err(CoreError::invalid(format!(
                    "temperature must be between 0 and {MAX_TEMPERATURE}, not {t}"
                )));
            }
        }
        match &self.push_url {
            Some(u) => check_url("push_url", u)?,
            None if self.transport == Transport::Push => {
                return Err(CoreError::invalid("the push transport needs a push_url"))
            }
            None => {}
        }
        if let Some(u) = &self.realtime_url {
            check_url("realtime_url", u)?;
        }
        Ok(())
    }
}

/// A change to the backend; `None` leaves a field as it is. `push_url: Some(None)` clears it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct BackendChange {
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub transport: Option<Transport>,
    #[serde(default, deserialize_with = "present")]
    pub push_url: Option<Option<String>>,
    /// `Some(None)` clears it (back to the base URL's).
    #[serde(default, deserialize_with = "present")]
    pub realtime_url: Option<Option<String>>,
    #[serde(default)]
    pub max_output_tokens: Option<u32>,
    /// `Some(None)` clears it (back to the server's default).
    #[serde(default, deserialize_with = "present")]
    pub temperature: Option<Option<f64>>,
}

/// A field that is present deserializes to `Some(..)` even when it is `null`, so
/// `{"push_url": null}` clears the URL while a missing field leaves it alone.
fn present<'de, D, T>(d: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// The settings key of the backend (declared in `crate::settings`).
pub const KEY: &str = "yui.backend";

/// The backend as stored (or the default).
pub fn load(store: &Store) -> Result<BackendConfig> {
    match kv::get(store, KEY)? {
        Some(v) => BackendConfig::from_value(&v),
        None => BackendConfig::from_value(&default_value()),
    }
}

/// Validate and store the backend.
pub fn save(store: &Store, cfg: &BackendConfig) -> Result<()> {
    cfg.validate()?;
    kv::put(store, KEY, &serde_json::to_value(cfg)?)
}

/// Apply a change and store the result.
pub fn update(store: &Store, change: &BackendChange) -> Result<BackendConfig> {
    let mut cfg = load(store)?;
    if let Some(v) = &change.base_url {
        cfg.base_url = v.trim().to_string();
        cfg.builtin = None;
    }
    if let Some(v) = &change.model {
        cfg.model = v.trim().to_string();
    }
    if let Some(v) = change.transport {
        cfg.transport = v;
    }
    if let Some(v) = &change.push_url {
        cfg.push_url = v.as_ref().map(|s| s.trim().to_string());
    }
    if let Some(v) = &change.realtime_url {
        cfg.realtime_url = v
            .as_ref()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
    }
    if let Some(v) = change.max_output_tokens {
        cfg.max_output_tokens = v;
    }
    if let Some(v) = change.temperature {
        cfg.temperature = v;
    }
    save(store, &cfg)?;
    Ok(cfg)
}

/// Where the API key is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyStorage {
    OsKeyring,
    FileFallback,
    /// No key is stored.
    None,
}

impl KeyStorage {
    pub fn label(self) -> &'static str {
        match self {
            KeyStorage::OsKeyring => "os-keyring",
            KeyStorage::FileFallback => "file-fallback (no OS keyring)",
            KeyStorage::None => "none",
        }
    }
}

impl Serialize for KeyStorage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.label())
    }
}

/// What the UI and the CLI may see of the backend: the settings and whether a key exists.
#[derive(Debug, Clone, Serialize)]
pub struct BackendView {
    #[serde(flatten)]
    pub config: BackendConfig,
    pub has_api_key: bool,
    pub api_key_storage: KeyStorage,
}

/// The backend settings plus the key's presence (never the key).
pub fn view(store: &Store, paths: &Paths) -> Result<BackendView> {
    let config = load(store)?;
    let storage = Secrets::new(paths).storage();
    Ok(BackendView {
        config,
        has_api_key: storage != KeyStorage::None,
        api_key_storage: storage,
    })
}

/// Apply `change` and return what is now in effect (the settings window and `yui backend set`).
pub fn update_and_view(
    store: &Store,
    paths: &Paths,
    change: &BackendChange,
) -> Result<BackendView> {
    update(store, change)?;
    view(store, paths)
}

pub mod realtime;
mod resolve;
mod secrets;

pub use resolve::{resolve, Backend, Overrides, API_KEY_ENV};
pub use secrets::{api_key, ApiKey, Secrets};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_tells_null_from_missing() {
        let clear: BackendChange =
            serde_json::from_value(serde_json::json!({"push_url": null})).unwrap();
        assert_eq!(clear.push_url, Some(None));
        let keep: BackendChange =
            serde_json::from_value(serde_json::json!({"model": "m"})).unwrap();
        assert_eq!(keep.push_url, None);
        let set: BackendChange =
            serde_json::from_value(serde_json::json!({"push_url": "ws://h/p"})).unwrap();
        assert_eq!(set.push_url, Some(Some("ws://h/p".to_string())));
    }

    #[test]
    fn sampling_goes_into_both_bodies() {
        let s = Sampling {
            max_output_tokens: Some(256),
            temperature: Some(0.7),
        };
        let mut chat = serde_json::json!({"model": "m"});
        s.apply(Transport::ChatCompletions, &mut chat);
        assert_eq!(
            chat,
            serde_json::json!({"model": "m", "max_tokens": 256, "temperature": 0.7})
        );
        let mut resp = serde_json::json!({"model": "m"});
        Sampling::of(&BackendConfig::default()).apply(Transport::Responses, &mut resp);
        assert_eq!(
            resp,
            serde_json::json!({"model": "m", "max_output_tokens": 512})
        );
        let mut exact = serde_json::json!({"model": "m"});
        Sampling::default().apply(Transport::ChatCompletions, &mut exact);
        assert_eq!(exact, serde_json::json!({"model": "m"}));
        // An old stored value (no new fields) reads with the defaults.
        let old = serde_json::json!({"base_url": "http://x/v1", "model": "m"});
        let cfg = BackendConfig::from_value(&old).unwrap();
        assert_eq!(cfg.max_output_tokens, 512);
        assert_eq!(cfg.temperature, None);
        let bad = serde_json::json!({"base_url": "http://x/v1", "model": "m", "temperature": 3.0});
        assert_eq!(
            BackendConfig::from_value(&bad).unwrap_err().message,
            "temperature must be between 0 and 2, not 3"
        );
    }

    #[test]
    fn validation() {
        let ok = serde_json::json!({"base_url": "http://x/v1", "model": "m", "transport": "responses", "push_url": null});
        assert_eq!(
            BackendConfig::from_value(&ok).unwrap().transport,
            Transport::Responses
        );
        let push =
            serde_json::json!({"base_url": "http://x/v1", "model": "m", "transport": "push"});
        assert_eq!(
            BackendConfig::from_value(&push).unwrap_err().message,
            "the push transport needs a push_url"
        );
        let bad = serde_json::json!({"base_url": "ftp://x", "model": "m"});
        assert_eq!(
            BackendConfig::from_value(&bad).unwrap_err().code,
            crate::error::ErrorCode::InvalidInput
        );
    }
}
