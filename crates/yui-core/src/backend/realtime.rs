//! The realtime transport's own settings, `yui.realtime` (declared in `settings.rs` KNOWN): the
//! voice the server speaks with, how the user's turn ends (server voice activity, semantic voice
//! activity, or push-to-talk with an explicit commit) and the model that transcribes the user's
//! speech. The URL and model are `yui.backend`'s (`realtime_url`, `model`); the key is the
//! backend's. See docs/realtime-transport.md.

use crate::error::{CoreError, Result};
use crate::store::{kv, Store};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const KEY: &str = "yui.realtime";

/// How the server knows the user finished speaking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TurnDetection {
    #[default]
    ServerVad,
    SemanticVad,
    /// No server voice activity: the client commits the buffer when the key is released.
    PushToTalk,
}

impl TurnDetection {
    /// `audio.input.turn_detection` of `session.update`.
    pub fn wire(self) -> Value {
        match self {
            Self::ServerVad => json!({"type": "server_vad"}),
            Self::SemanticVad => json!({"type": "semantic_vad"}),
            Self::PushToTalk => Value::Null,
        }
    }
}

/// `yui.realtime`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RealtimeSettings {
    #[serde(default = "default_voice")]
    pub voice: String,
    #[serde(default)]
    pub turn_detection: TurnDetection,
    /// `None`: the user's speech is not transcribed (their words are not stored).
    #[serde(default = "default_transcription")]
    pub transcription_model: Option<String>,
}

fn default_voice() -> String {
    "alloy".into()
}
fn default_transcription() -> Option<String> {
    Some("whisper-1".into())
}

impl Default for RealtimeSettings {
    fn default() -> Self {
        Self {
            voice: default_voice(),
            turn_detection: TurnDetection::default(),
            transcription_model: default_transcription(),
        }
    }
}

impl RealtimeSettings {
    pub fn from_value(v: &Value) -> Result<Self> {
        let s: Self = serde_json::from_value(v.clone())
            .map_err(|e| CoreError::invalid(format!("{KEY}: {e}")))?;
        if s.voice.trim().is_empty() {
            return Err(CoreError::invalid(format!(
                "{KEY}: voice must not be empty"
            )));
        }
        Ok(s)
    }
}

pub fn default_value() -> Value {
    serde_json::to_value(RealtimeSettings::default()).unwrap_or(Value::Null)
}

/// The stored settings, or the defaults (a damaged value reads as the defaults, logged).
pub fn load(store: &Store) -> RealtimeSettings {
    match kv::get(store, KEY) {
        Ok(Some(v)) => RealtimeSettings::from_value(&v).unwrap_or_else(|e| {
            tracing::warn!(error = %e.message, "yui.realtime unreadable: the defaults are used");
            RealtimeSettings::default()
        }),
        _ => RealtimeSettings::default(),
    }
}

/// The realtime URL a backend uses: its `realtime_url`, else its base URL as a WebSocket URL
/// with `/realtime` added (`http://h:8080/v1` → `ws://h:8080/v1/realtime`).
pub fn url_of(realtime_url: Option<&str>, base_url: &str) -> String {
    if let Some(u) = realtime_url.map(str::trim).filter(|u| !u.is_empty()) {
        return u.to_string();
    }
    let base = base_url.trim().trim_end_matches('/');
    let ws = if let Some(r) = base.strip_prefix("https://") {
        format!("wss://{r}")
    } else if let Some(r) = base.strip_prefix("http://") {
        format!("ws://{r}")
    } else {
        base.to_string()
    };
    format!("{ws}/realtime")
}

/// `url` with `model=M` in its query, unless it names a model already.
pub fn url_with_model(url: &str, model: &str) -> String {
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
    if query.split('&').any(|p| p.starts_with("model=")) || model.trim().is_empty() {
        return url.to_string();
    }
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}model={}", model.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_joins_the_query_once() {
        assert_eq!(
            url_with_model("ws://h/v1/realtime", "gpt-realtime"),
            "ws://h/v1/realtime?model=gpt-realtime"
        );
        assert_eq!(
            url_with_model("ws://h/v1/realtime?x=1", "m"),
            "ws://h/v1/realtime?x=1&model=m"
        );
        assert_eq!(
            url_with_model("ws://h/v1/realtime?model=a", "b"),
            "ws://h/v1/realtime?model=a"
        );
    }

    #[test]
    fn defaults_and_validation() {
        let d = RealtimeSettings::from_value(&json!({})).unwrap();
        assert_eq!(d, RealtimeSettings::default());
        assert_eq!(d.turn_detection.wire(), json!({"type":"server_vad"}));
        let p = RealtimeSettings::from_value(
            &json!({"turn_detection":"push_to_talk","transcription_model":null}),
        )
        .unwrap();
        assert_eq!(p.turn_detection.wire(), Value::Null);
        assert_eq!(p.transcription_model, None);
        assert!(RealtimeSettings::from_value(&json!({"voice":" "})).is_err());
        assert!(RealtimeSettings::from_value(&json!({"turn_detection":"loud"})).is_err());
        assert!(RealtimeSettings::from_value(&json!({"extra":1})).is_err());
    }

    #[test]
    fn the_url_comes_from_the_base_url_when_unset() {
        assert_eq!(
            url_of(None, "http://127.0.0.1:8080/v1/"),
            "ws://127.0.0.1:8080/v1/realtime"
        );
        assert_eq!(
            url_of(Some(" "), "https://api.openai.com/v1"),
            "wss://api.openai.com/v1/realtime"
        );
        assert_eq!(url_of(Some("ws://h/rt"), "http://x"), "ws://h/rt");
    }
}
