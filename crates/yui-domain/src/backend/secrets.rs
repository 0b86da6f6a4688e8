//! The API key (and the speech servers' own key, [`Secrets::speech`], kept the same way under
//! its own name): the OS keyring (`keyring` crate: Secret Service on Linux, Keychain on macOS,
//! Credential Manager on Windows), else `<data_dir>/secrets.json` (0600, obfuscated), with calls
//! on a helper thread under a deadline so a keyring that never answers cannot hang anyone.

use super::{KeyStorage, KEYRING_ENV, SECRETS_FILE};
use crate::error::{CoreError, ErrorCode, Result};
use crate::paths::Paths;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// The keyring service name; the account names the data dir so each data dir has its own key.
const KEYRING_SERVICE: &str = "yui";
/// How long one keyring call may take before we give up on the keyring for this process.
const KEYRING_TIMEOUT: Duration = Duration::from_secs(3);
/// Prefix of an obfuscated key in the fallback file (format version 1).
const OBF_PREFIX: &str = "yui-obf1:";

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
    /// Which key: the chat backend's (`api-key`, `secrets.json`) or the speech servers'.
    account: &'static str,
    file: &'static str,
}

/// The speech servers' key: its keyring account prefix and fallback file.
const SPEECH_ACCOUNT: &str = "speech-key";
const SPEECH_FILE: &str = "speech-secrets.json";

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
            account: "api-key",
            file: SECRETS_FILE,
        }
    }

    /// The speech servers' own key (Settings → Voice), stored like the chat key under its own
    /// keyring account and fallback file (`speech-secrets.json`).
    pub fn speech(paths: &Paths) -> Self {
        Self {
            account: SPEECH_ACCOUNT,
            file: SPEECH_FILE,
            ..Self::new(paths)
        }
    }

    /// The file fallback only (tests).
    pub fn file_only(paths: &Paths) -> Self {
        Self {
            data_dir: paths.data_dir.clone(),
            use_os_keyring: false,
            account: "api-key",
            file: SECRETS_FILE,
        }
    }

    /// [`Secrets::speech`] in the file fallback only (tests).
    pub fn speech_file_only(paths: &Paths) -> Self {
        Self {
            account: SPEECH_ACCOUNT,
            file: SPEECH_FILE,
            ..Self::file_only(paths)
        }
    }

    fn account(&self) -> String {
        format!("{}:{}", self.account, self.data_dir.display())
    }

    pub fn fallback_path(&self) -> PathBuf {
        self.data_dir.join(self.file)
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
    .with_source(e)
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
}
