//! The speech servers' settings as the core reads them: yui-voice's typed keys (re-exported), plus
//! what needs the chat backend: a missing base URL means the backend's, and the key is the speech
//! key of its own (Settings → Voice, kept like the chat key), else the chat backend's unless
//! `use_backend_key` is false (`YUI_SPEECH_API_KEY` overrides both for one run). See
//! docs/voice.md.

pub use yui_voice::config::*;

use crate::error::Result;
use crate::paths::Paths;
use crate::store::Store;

/// The transcription request `yui.voice.stt` describes (base URL, model, language, prompt, key).
pub fn stt_request(store: &Store, paths: &Paths) -> Result<yui_voice::stt::SttRequest> {
    let s = load_stt(store)?;
    Ok(yui_voice::stt::SttRequest {
        base_url: base_url_or_backend(store, &s.base_url)?,
        model: s.model,
        language: s.language,
        prompt: s.prompt,
        api_key: speech_key(paths, s.use_backend_key),
        timeout: std::time::Duration::from_secs(s.timeout_secs),
    })
}

/// The base URL to use: the given one, else the chat backend's.
pub fn base_url_or_backend(store: &Store, base: &Option<String>) -> Result<String> {
    Ok(match base {
        Some(b) => b.trim_end_matches('/').to_string(),
        None => crate::backend::load(store)?
            .base_url
            .trim_end_matches('/')
            .to_string(),
    })
}

/// The key for a speech server: `YUI_SPEECH_API_KEY`, else the speech key stored in Settings →
/// Voice, else the chat backend's when allowed.
pub fn speech_key(paths: &Paths, use_backend_key: bool) -> Option<String> {
    if let Ok(k) = std::env::var(SPEECH_KEY_ENV) {
        if !k.trim().is_empty() {
            crate::logging::redact_secret(k.trim());
            return Some(k.trim().to_string());
        }
    }
    if let Some(k) = crate::backend::Secrets::speech(paths).api_key() {
        return Some(k.expose().to_string());
    }
    if use_backend_key {
        crate::backend::api_key(paths)
    } else {
        None
    }
}
