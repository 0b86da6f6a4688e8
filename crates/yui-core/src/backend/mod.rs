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

use crate::error::{CoreError, ErrorCode, Result};
use crate::paths::Paths;
use crate::store::{kv, Store};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

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
/// The keyring service name; the account names the data dir so each data dir has its own key.
const KEYRING_SERVICE: &str = "yui";
/// How long one keyring call may take before we give up on the keyring for this process.
const KEYRING_TIMEOUT: Duration = Duration::from_secs(3);
/// Prefix of an obfuscated key in the fallback file (format version 1).
const OBF_PREFIX: &str = "yui-obf1:";

/// How a turn reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    #[default]
    ChatCompletions,
    Responses,
    Push,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::ChatCompletions => "chat_completions",
            Transport::Responses => "responses",
            Transport::Push => "push",
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
            other => Err(CoreError::invalid(format!(
                "transport must be chat_completions, responses or push, not {other:?}"
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
    /// Reply cap: `max_tokens` on Chat Completions, `max_output_tokens` on Responses.
    #[serde(default = "default_max_output_tokens")]
    pub max_output_tokens: u32,
    /// Sampling temperature; `None` leaves it to the server.
    #[serde(default)]
    pub temperature: Option<f64>,
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
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            temperature: None,
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

/// The API key for the turn engine, if one is stored.
pub fn api_key(paths: &Paths) -> Option<String> {
    Secrets::new(paths).api_key().map(|k| k.0)
}

/// A secret string whose `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Set once a keyring call failed or timed out: later calls in this process go straight to the
/// file fallback instead of waiting again.
static KEYRING_DOWN: AtomicBool = AtomicBool::new(false);

/// Where the API key is read from and written to.
#[derive(Debug, Clone)]
pub struct Secrets {
    data_dir: PathBuf,
    use_os_keyring: bool,
}

enum Got {
    Key(String),
    NoEntry,
    Unavailable,
}

impl Secrets {
    /// OS keyring first, file fallback second; `YUI_KEYRING=off` skips the OS keyring.
    pub fn new(paths: &Paths) -> Self {
        let off = std::env::var(KEYRING_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("off"));
        Self {
            data_dir: paths.data_dir.clone(),
            use_os_keyring: !off,
        }
    }

    /// The file fallback only (tests).
    pub fn file_only(paths: &Paths) -> Self {
        Self {
            data_dir: paths.data_dir.clone(),
            use_os_keyring: false,
        }
    }

    fn account(&self) -> String {
        format!("api-key:{}", self.data_dir.display())
    }

    pub fn fallback_path(&self) -> PathBuf {
        self.data_dir.join(SECRETS_FILE)
    }

    fn keyring_on(&self) -> bool {
        self.use_os_keyring && !KEYRING_DOWN.load(Ordering::Relaxed)
    }

    /// Run one keyring call on a helper thread; `None` when it fails to answer in time.
    fn with_entry<T: Send + 'static>(
        &self,
        f: impl FnOnce(&keyring::Entry) -> keyring::Result<T> + Send + 'static,
    ) -> Option<keyring::Result<T>> {
        let account = self.account();
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("yui-keyring".into())
            .spawn(move || {
                let out = keyring::Entry::new(KEYRING_SERVICE, &account).and_then(|e| f(&e));
                let _ = tx.send(out);
            });
        if spawned.is_err() {
            return None;
        }
        match rx.recv_timeout(KEYRING_TIMEOUT) {
            Ok(out) => Some(out),
            Err(_) => {
                KEYRING_DOWN.store(true, Ordering::Relaxed);
                tracing::warn!("the OS keyring did not answer in time; using the file fallback");
                None
            }
        }
    }

    fn keyring_get(&self) -> Got {
        if !self.keyring_on() {
            return Got::Unavailable;
        }
        match self.with_entry(|e| e.get_password()) {
            Some(Ok(k)) => Got::Key(k),
            Some(Err(keyring::Error::NoEntry)) => Got::NoEntry,
            Some(Err(e)) => {
                KEYRING_DOWN.store(true, Ordering::Relaxed);
                tracing::info!(error = %e, "OS keyring not available; using the file fallback");
                Got::Unavailable
            }
            None => Got::Unavailable,
        }
    }

    /// The stored key, from the keyring or the fallback file.
    pub fn api_key(&self) -> Option<ApiKey> {
        self.lookup().map(|(k, _)| k)
    }

    fn lookup(&self) -> Option<(ApiKey, KeyStorage)> {
        if let Got::Key(k) = self.keyring_get() {
            crate::logging::redact_secret(&k);
            return Some((ApiKey(k), KeyStorage::OsKeyring));
        }
        match read_fallback(&self.fallback_path()) {
            Ok(Some(k)) => {
                crate::logging::redact_secret(&k);
                Some((ApiKey(k), KeyStorage::FileFallback))
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(error = %e.message, "cannot read the API key fallback file");
                None
            }
        }
    }

    /// Where the key is, or [`KeyStorage::None`].
    pub fn storage(&self) -> KeyStorage {
        self.lookup().map_or(KeyStorage::None, |(_, s)| s)
    }

    /// Store the key: OS keyring if it answers, else the fallback file. Returns where it went.
    pub fn set_api_key(&self, key: &str) -> Result<KeyStorage> {
        let key = key.trim();
        if key.is_empty() {
            return Err(CoreError::invalid("the API key is empty"));
        }
        if key.chars().any(char::is_control) {
            return Err(CoreError::invalid(
                "the API key must not contain control characters",
            ));
        }
        crate::logging::redact_secret(key);
        if self.keyring_on() {
            let owned = key.to_string();
            match self.with_entry(move |e| e.set_password(&owned)) {
                Some(Ok(())) => {
                    // A key left in the fallback file would shadow nothing but still sit on disk.
                    remove_fallback(&self.fallback_path())?;
                    tracing::info!("API key stored in the OS keyring");
                    return Ok(KeyStorage::OsKeyring);
                }
                Some(Err(e)) => {
                    KEYRING_DOWN.store(true, Ordering::Relaxed);
                    tracing::warn!(error = %e, "OS keyring not available; using the file fallback");
                }
                None => {}
            }
        }
        write_fallback(&self.data_dir, &self.fallback_path(), key)?;
        tracing::warn!(
            file = %self.fallback_path().display(),
            "API key stored in the file fallback (no OS keyring): obfuscated, owner-only"
        );
        Ok(KeyStorage::FileFallback)
    }

    /// Forget the key everywhere.
    pub fn clear(&self) -> Result<()> {
        if self.keyring_on() {
            match self.with_entry(|e| e.delete_credential()) {
                Some(Ok(())) | Some(Err(keyring::Error::NoEntry)) | None => {}
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "could not delete the key from the OS keyring")
                }
            }
        }
        remove_fallback(&self.fallback_path())
    }
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> CoreError {
    CoreError::new(
        ErrorCode::Keyring,
        format!("cannot {what} {}: {e}", path.display()),
    )
}

/// A keystream from the salt (splitmix64). Obfuscation only: it keeps the key out of plain
/// sight (grep, a glance, a backup index); it does not protect against someone who reads this
/// source.
fn keystream(salt: &[u8], len: usize) -> Vec<u8> {
    let mut state: u64 = 0x5955_495f_4b45_5953; // "YUI_KEYS"
    for b in salt {
        state = state.rotate_left(8) ^ u64::from(*b);
    }
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        out.extend_from_slice(&z.to_le_bytes());
    }
    out.truncate(len);
    out
}

fn fresh_salt() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    let mut salt = [0u8; 16];
    for (i, chunk) in salt.chunks_mut(8).enumerate() {
        // RandomState is seeded from the OS per process; mix in time and pid for good measure.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        h.write_u32(std::process::id());
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    salt
}

fn obfuscate(key: &str) -> String {
    let salt = fresh_salt();
    let stream = keystream(&salt, key.len());
    let mut blob = salt.to_vec();
    blob.extend(key.bytes().zip(stream).map(|(b, s)| b ^ s));
    format!(
        "{OBF_PREFIX}{}",
        base64::engine::general_purpose::STANDARD.encode(blob)
    )
}

fn deobfuscate(text: &str) -> Option<String> {
    let blob = base64::engine::general_purpose::STANDARD
        .decode(text.strip_prefix(OBF_PREFIX)?)
        .ok()?;
    if blob.len() < 16 {
        return None;
    }
    let (salt, body) = blob.split_at(16);
    let stream = keystream(salt, body.len());
    String::from_utf8(body.iter().zip(stream).map(|(b, s)| b ^ s).collect()).ok()
}

#[derive(Serialize, Deserialize)]
struct FallbackFile {
    #[serde(default)]
    note: String,
    #[serde(default)]
    storage: String,
    api_key: String,
}

fn read_fallback(path: &Path) -> Result<Option<String>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("read", path, e)),
    };
    let file: FallbackFile = serde_json::from_str(&text).map_err(|e| {
        CoreError::new(
            ErrorCode::Keyring,
            format!("{} is not a YUI secrets file: {e}", path.display()),
        )
    })?;
    deobfuscate(&file.api_key).map(Some).ok_or_else(|| {
        CoreError::new(
            ErrorCode::Keyring,
            format!("{} holds an unreadable key", path.display()),
        )
    })
}

fn write_fallback(dir: &Path, path: &Path, key: &str) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| io_err("create", dir, e))?;
    let file = FallbackFile {
        note: "YUI API key, file fallback: no OS keyring was available. The key is obfuscated, not encrypted; this file is readable only by its owner.".into(),
        storage: KeyStorage::FileFallback.label().into(),
        api_key: obfuscate(key),
    };
    let text = serde_json::to_string_pretty(&file)?;
    let tmp = dir.join(format!(".{SECRETS_FILE}.tmp"));
    let _ = std::fs::remove_file(&tmp);
    {
        use std::io::Write;
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            // Created owner-only: the key is never readable by others, not even for an instant.
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts.open(&tmp).map_err(|e| io_err("create", &tmp, e))?;
        f.write_all(text.as_bytes())
            .and_then(|_| f.sync_all())
            .map_err(|e| io_err("write", &tmp, e))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| io_err("write", path, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| io_err("set permissions on", path, e))?;
    }
    Ok(())
}

fn remove_fallback(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err("remove", path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn obfuscation_round_trips_and_hides_the_key() {
        let key = "sk-test-0123456789abcdef";
        let text = obfuscate(key);
        assert!(!text.contains(key));
        assert!(!text.contains("0123456789"));
        assert_eq!(deobfuscate(&text).as_deref(), Some(key));
        assert_eq!(deobfuscate("yui-obf1:AAAA"), None);
        assert_eq!(deobfuscate("plain"), None);
    }

    #[test]
    fn debug_redacts_the_key() {
        let k = ApiKey("sk-secret".into());
        assert_eq!(format!("{k:?}"), "ApiKey(<redacted>)");
    }

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
            ErrorCode::InvalidInput
        );
    }
}
