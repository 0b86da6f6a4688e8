//! The speech servers' and the microphone's settings, one typed key each (declared in
//! `settings.rs` KNOWN): `yui.voice.tts` (OpenAI-compatible `/audio/speech`), `yui.voice.stt`
//! (`/audio/transcriptions`) and `yui.voice.listen` (voice activity, devices). A missing base URL
//! means the chat backend's and the key falls back to the chat backend's: yui-core's
//! `voice::config` adds those (this crate does not know the backend). See docs/voice.md.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use yui_base::error::{CoreError, Result};
use yui_base::store::{kv, Store};

pub const TTS_KEY: &str = "yui.voice.tts";
pub const STT_KEY: &str = "yui.voice.stt";
pub const LISTEN_KEY: &str = "yui.voice.listen";
/// An API key for the speech servers for this run (overrides the stored one).
pub const SPEECH_KEY_ENV: &str = "YUI_SPEECH_API_KEY";

fn default_timeout() -> u64 {
    60
}
fn yes() -> bool {
    true
}

/// `yui.voice.tts`: the OpenAI-compatible speech server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TtsSettings {
    /// `None`: the chat backend's base URL.
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default = "default_tts_model")]
    pub model: String,
    /// The voice when the character names none.
    #[serde(default = "default_tts_voice")]
    pub voice: String,
    /// `wav` or `pcm` (raw 16-bit mono at `pcm_rate`).
    #[serde(default = "default_format")]
    pub response_format: String,
    #[serde(default = "default_pcm_rate")]
    pub pcm_rate: u32,
    /// 0.25–4.0.
    #[serde(default = "default_speed")]
    pub speed: f32,
    /// The server honours `instructions` (OpenAI's gpt-4o-mini-tts): the cue's caption and
    /// emotion text go there; otherwise the direction becomes speed only.
    #[serde(default)]
    pub instructions: bool,
    #[serde(default = "yes")]
    pub use_backend_key: bool,
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
}

fn default_tts_model() -> String {
    "tts-1".into()
}
fn default_tts_voice() -> String {
    "alloy".into()
}
fn default_format() -> String {
    "wav".into()
}
fn default_pcm_rate() -> u32 {
    24_000
}
fn default_speed() -> f32 {
    1.0
}

impl Default for TtsSettings {
    fn default() -> Self {
        serde_json::from_value(serde_json::json!({})).expect("defaults")
    }
}

/// `yui.voice.stt`: the OpenAI-compatible transcription server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SttSettings {
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default = "default_stt_model")]
    pub model: String,
    /// ISO-639-1, e.g. `en`; `None`: the server detects it.
    #[serde(default)]
    pub language: Option<String>,
    /// Words the recogniser should expect (names of the characters, say).
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default = "yes")]
    pub use_backend_key: bool,
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
}

fn default_stt_model() -> String {
    "whisper-1".into()
}

impl Default for SttSettings {
    fn default() -> Self {
        serde_json::from_value(serde_json::json!({})).expect("defaults")
    }
}

/// How the microphone is used (`yui.voice.listen`'s `mode`): off by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MicMode {
    /// No device is opened and no thread runs.
    #[default]
    Off,
    /// Listening while a key, the mouse on the character or the global shortcut is held.
    PushToTalk,
    /// Listening all the time; voice activity cuts utterances.
    HandsFree,
}

/// `yui.voice.listen`: the microphone's mode, voice activity and the devices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListenSettings {
    #[serde(default)]
    pub mode: MicMode,
    /// The global push-to-talk shortcut (e.g. `Ctrl+Alt+Space`); `None`: none.
    #[serde(default)]
    pub shortcut: Option<String>,
    #[serde(default = "default_sensitivity")]
    pub sensitivity: f32,
    #[serde(default = "default_hangover")]
    pub hangover_ms: u64,
    /// `None`: the system's default microphone / output.
    #[serde(default)]
    pub input_device: Option<String>,
    #[serde(default)]
    pub output_device: Option<String>,
}

fn default_sensitivity() -> f32 {
    0.5
}
fn default_hangover() -> u64 {
    600
}

impl Default for ListenSettings {
    fn default() -> Self {
        serde_json::from_value(serde_json::json!({})).expect("defaults")
    }
}

fn check_url(what: &str, u: &Option<String>) -> Result<()> {
    match u {
        Some(u) if !(u.starts_with("http://") || u.starts_with("https://")) => {
            Err(CoreError::invalid(format!(
                "{what} base_url must start with http:// or https://"
            )))
        }
        _ => Ok(()),
    }
}

fn check_timeout(what: &str, t: u64) -> Result<()> {
    if (1..=3600).contains(&t) {
        Ok(())
    } else {
        Err(CoreError::invalid(format!(
            "{what} timeout_secs must be 1-3600"
        )))
    }
}

impl TtsSettings {
    pub fn from_value(v: &Value) -> Result<Self> {
        let s: Self = serde_json::from_value(v.clone()).map_err(|e| {
            CoreError::invalid(format!(
                "{TTS_KEY} must be {{base_url?, model?, voice?, response_format?: wav|pcm, pcm_rate?, speed?, instructions?, use_backend_key?, timeout_secs?}}: {e}"
            ))
        })?;
        check_url(TTS_KEY, &s.base_url)?;
        check_timeout(TTS_KEY, s.timeout_secs)?;
        if !matches!(s.response_format.as_str(), "wav" | "pcm") {
            return Err(CoreError::invalid(format!(
                "{TTS_KEY} response_format must be wav or pcm"
            )));
        }
        if !(0.25..=4.0).contains(&s.speed) {
            return Err(CoreError::invalid(format!(
                "{TTS_KEY} speed must be 0.25-4.0"
            )));
        }
        if !(8_000..=96_000).contains(&s.pcm_rate) {
            return Err(CoreError::invalid(format!(
                "{TTS_KEY} pcm_rate must be 8000-96000"
            )));
        }
        if s.model.trim().is_empty() || s.voice.trim().is_empty() {
            return Err(CoreError::invalid(format!(
                "{TTS_KEY} model and voice must not be empty"
            )));
        }
        Ok(s)
    }
}

impl SttSettings {
    pub fn from_value(v: &Value) -> Result<Self> {
        let s: Self = serde_json::from_value(v.clone()).map_err(|e| {
            CoreError::invalid(format!(
                "{STT_KEY} must be {{base_url?, model?, language?, prompt?, use_backend_key?, timeout_secs?}}: {e}"
            ))
        })?;
        check_url(STT_KEY, &s.base_url)?;
        check_timeout(STT_KEY, s.timeout_secs)?;
        if s.model.trim().is_empty() {
            return Err(CoreError::invalid(format!(
                "{STT_KEY} model must not be empty"
            )));
        }
        Ok(s)
    }
}

impl ListenSettings {
    pub fn from_value(v: &Value) -> Result<Self> {
        let s: Self = serde_json::from_value(v.clone()).map_err(|e| {
            CoreError::invalid(format!(
                "{LISTEN_KEY} must be {{mode?: off|push_to_talk|hands_free, shortcut?, sensitivity?: 0-1, hangover_ms?, input_device?, output_device?}}: {e}"
            ))
        })?;
        if !(0.0..=1.0).contains(&s.sensitivity) {
            return Err(CoreError::invalid(format!(
                "{LISTEN_KEY} sensitivity must be 0-1"
            )));
        }
        if !(100..=5_000).contains(&s.hangover_ms) {
            return Err(CoreError::invalid(format!(
                "{LISTEN_KEY} hangover_ms must be 100-5000"
            )));
        }
        if let Some(k) = &s.shortcut {
            if k.trim().is_empty() || k.len() > 64 {
                return Err(CoreError::invalid(format!(
                    "{LISTEN_KEY} shortcut must be a key combination such as Ctrl+Alt+Space"
                )));
            }
        }
        Ok(s)
    }

    pub fn vad(&self) -> super::vad::VadConfig {
        super::vad::VadConfig {
            sensitivity: self.sensitivity,
            hangover_ms: self.hangover_ms,
        }
    }
}

pub fn tts_default() -> Value {
    serde_json::to_value(TtsSettings::default()).expect("serializes")
}
pub fn stt_default() -> Value {
    serde_json::to_value(SttSettings::default()).expect("serializes")
}
pub fn listen_default() -> Value {
    serde_json::to_value(ListenSettings::default()).expect("serializes")
}

pub fn load_tts(store: &Store) -> Result<TtsSettings> {
    TtsSettings::from_value(&kv::get(store, TTS_KEY)?.unwrap_or_else(tts_default))
}
pub fn load_stt(store: &Store) -> Result<SttSettings> {
    SttSettings::from_value(&kv::get(store, STT_KEY)?.unwrap_or_else(stt_default))
}
pub fn load_listen(store: &Store) -> Result<ListenSettings> {
    ListenSettings::from_value(&kv::get(store, LISTEN_KEY)?.unwrap_or_else(listen_default))
}

/// Whether the user has configured any speech server (a stored tts or stt key).
pub fn servers_configured(store: &Store) -> Result<bool> {
    Ok(kv::get(store, TTS_KEY)?.is_some() || kv::get(store, STT_KEY)?.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_refusals() {
        let t = TtsSettings::default();
        assert_eq!(
            (
                t.model.as_str(),
                t.voice.as_str(),
                t.response_format.as_str()
            ),
            ("tts-1", "alloy", "wav")
        );
        assert!(t.base_url.is_none() && !t.instructions && t.use_backend_key);
        assert_eq!(SttSettings::default().model, "whisper-1");
        assert_eq!(ListenSettings::default().hangover_ms, 600);
        for bad in [
            json!({"response_format": "mp3"}),
            json!({"speed": 9}),
            json!({"base_url": "ftp://x"}),
            json!({"voyce": "x"}),
        ] {
            assert!(TtsSettings::from_value(&bad).is_err(), "{bad}");
        }
        assert!(SttSettings::from_value(&json!({"timeout_secs": 0})).is_err());
        assert!(ListenSettings::from_value(&json!({"sensitivity": 2})).is_err());
        assert_eq!(
            ListenSettings::default().mode,
            MicMode::Off,
            "off by default"
        );
        assert!(ListenSettings::from_value(&json!({"mode": "loud"})).is_err());
        let l = ListenSettings::from_value(&json!({"mode": "hands_free"})).unwrap();
        assert_eq!(l.mode, MicMode::HandsFree);
    }
}
