//! The realtime transport's own settings, `yui.realtime` (declared in `settings.rs` KNOWN): the
//! voice the server speaks with, how the user's turn ends (server voice activity, semantic voice
//! activity, or push-to-talk with an explicit commit) and the model that transcribes the user's
//! speech. The URL and model are `yui.backend`'s (`realtime_url`, `model`); the key is the
//! backend's. Settings → Backend's realtime panel reads [`view`] and writes [`stored_value`]
//! (through the stage, `Stage::realtime_settings_set`).
//! See docs/realtime-transport.md.

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

/// The voices the panel offers (OpenAI's realtime voices); any other name a server knows is
/// accepted too.
pub const VOICES: &[&str] = &[
    "alloy", "ash", "ballad", "cedar", "coral", "echo", "marin", "sage", "shimmer", "verse",
];

/// The longest voice or transcription model name accepted.
const MAX_NAME: usize = 100;

impl RealtimeSettings {
    /// Read and check a `yui.realtime` value; every refusal is one plain sentence.
    pub fn from_value(v: &Value) -> Result<Self> {
        let bad = |m: String| CoreError::invalid(m);
        if let Some(t) = v.get("turn_detection") {
            if !matches!(
                t.as_str(),
                Some("server_vad" | "semantic_vad" | "push_to_talk")
            ) {
                return Err(bad(format!(
                    "Turn detection must be server_vad (the server hears when you stop), \
                     semantic_vad (it waits until you finished your thought) or push_to_talk \
                     (you hold the key while you speak), not {t}."
                )));
            }
        }
        let s: Self = serde_json::from_value(v.clone())
            .map_err(|e| bad(format!("The realtime settings could not be read: {e}.")))?;
        let voice = s.voice.trim();
        if voice.is_empty() {
            return Err(bad("The realtime voice needs a name, e.g. alloy.".into()));
        }
        if voice.len() > MAX_NAME
            || !voice
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
        {
            return Err(bad(format!(
                "{voice:?} is not a voice name: use letters, digits, - or _ (e.g. alloy)."
            )));
        }
        if let Some(m) = s.transcription_model.as_deref().map(str::trim) {
            if m.len() > MAX_NAME || m.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(bad(format!(
                    "{m:?} is not a model name: no spaces (e.g. whisper-1); leave it empty to \
                     not transcribe your speech."
                )));
            }
        }
        Ok(s)
    }

    /// The same settings written the one way they are stored: names trimmed, an empty
    /// transcription model as none.
    pub fn normalized(mut self) -> Self {
        self.voice = self.voice.trim().to_string();
        self.transcription_model = self
            .transcription_model
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty());
        self
    }
}

/// What Settings → Backend's realtime panel shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct View {
    pub settings: RealtimeSettings,
    /// Voice names to offer.
    pub voices: &'static [&'static str],
}

/// The panel's view of the stored settings.
pub fn view(store: &Store) -> View {
    View {
        settings: load(store),
        voices: VOICES,
    }
}

/// `value` checked ([`RealtimeSettings::from_value`]) and normalized, as it is stored: the
/// stage writes it through the one typed declaration (`settings::set`), which this module does
/// not import (settings reads the domains, not the other way round).
pub fn stored_value(value: &Value) -> Result<Value> {
    let s = RealtimeSettings::from_value(value)?.normalized();
    serde_json::to_value(&s).map_err(|e| CoreError::internal(e.to_string()))
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
    fn the_stored_value_is_normalized_and_a_bad_one_refused() {
        assert_eq!(
            stored_value(
                &json!({"voice": " ash ", "turn_detection": "push_to_talk", "transcription_model": ""})
            )
            .unwrap(),
            json!({"voice": "ash", "turn_detection": "push_to_talk", "transcription_model": null})
        );
        assert!(stored_value(&json!({"voice": "no good"})).is_err());
        assert!(stored_value(&json!({"turn_detection": "loud"})).is_err());
    }

    #[test]
    fn refusals_are_plain_sentences_and_names_are_normalized() {
        let msg = |v: Value| RealtimeSettings::from_value(&v).unwrap_err().message;
        assert_eq!(
            msg(json!({"voice": "two words"})),
            "\"two words\" is not a voice name: use letters, digits, - or _ (e.g. alloy)."
        );
        assert_eq!(
            msg(json!({"voice": ""})),
            "The realtime voice needs a name, e.g. alloy."
        );
        assert!(msg(json!({"turn_detection": "loud"}))
            .starts_with("Turn detection must be server_vad (the server hears when you stop)"));
        assert!(
            msg(json!({"transcription_model": "a b"})).starts_with("\"a b\" is not a model name")
        );
        let s = RealtimeSettings::from_value(
            &json!({"voice": " marin ", "turn_detection": "semantic_vad", "transcription_model": " "}),
        )
        .unwrap()
        .normalized();
        assert_eq!(s.voice, "marin");
        assert_eq!(s.transcription_model, None);
        assert_eq!(s.turn_detection.wire(), json!({"type": "semantic_vad"}));
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
