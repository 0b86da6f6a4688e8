//! The realtime wire (docs/realtime-transport.md): the server events the client reads, typed,
//! and the client events it sends. The GA names are read along with the older beta aliases some
//! local servers still send (`response.audio.delta`, `response.audio_transcript.delta`,
//! `response.text.delta`, `conversation.item.created`). An event of a type this client does not
//! know parses as [`ServerEvent::Unknown`]; one that is not JSON is an error the connection logs
//! and skips. Nothing here panics on input.

use crate::turn::transport::de::{de_arguments, de_id, de_string_or_nothing};
use serde::Deserialize;
use serde_json::{json, Value};

/// The sample rate of every audio buffer on this wire: pcm16, mono, 24 kHz.
pub const SAMPLE_RATE: u32 = 24_000;
/// Bytes of pcm16 mono audio per millisecond at [`SAMPLE_RATE`].
pub const BYTES_PER_MS: u64 = (SAMPLE_RATE as u64 * 2) / 1000;

/// An output item (`response.output_item.added` / `.done`, `response.done`'s output).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub struct Item {
    #[serde(deserialize_with = "de_id")]
    pub id: Option<String>,
    #[serde(rename = "type", deserialize_with = "de_string_or_nothing")]
    pub kind: Option<String>,
    #[serde(deserialize_with = "de_id")]
    pub call_id: Option<String>,
    #[serde(deserialize_with = "de_string_or_nothing")]
    pub name: Option<String>,
    #[serde(deserialize_with = "de_arguments")]
    pub arguments: Option<String>,
    #[serde(deserialize_with = "de_string_or_nothing")]
    pub status: Option<String>,
}

impl Item {
    pub fn is_call(&self) -> bool {
        self.kind.as_deref() == Some("function_call")
    }
}

/// One server event, as the client reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerEvent {
    SessionCreated,
    SessionUpdated,
    ResponseCreated {
        response_id: Option<String>,
    },
    /// `response.done`: `status` is `completed`, `cancelled`, `failed` or `incomplete`;
    /// `error` the server's words when it failed; `output` its items (calls a server reported
    /// only here still run).
    ResponseDone {
        response_id: Option<String>,
        status: String,
        error: Option<String>,
        output: Vec<Item>,
    },
    OutputItemAdded(Item),
    OutputItemDone(Item),
    ArgumentsDelta {
        item_id: Option<String>,
        call_id: Option<String>,
        delta: String,
    },
    ArgumentsDone {
        item_id: Option<String>,
        call_id: Option<String>,
        name: Option<String>,
        arguments: Option<String>,
    },
    /// `response.output_text.delta` (beta `response.text.delta`): text mode.
    TextDelta {
        item_id: Option<String>,
        delta: String,
    },
    /// `response.output_audio_transcript.delta` (beta `response.audio_transcript.delta`).
    TranscriptDelta {
        item_id: Option<String>,
        delta: String,
    },
    /// `response.output_audio.delta` (beta `response.audio.delta`): base64 pcm16 24 kHz.
    AudioDelta {
        item_id: Option<String>,
        delta: String,
    },
    /// `input_audio_buffer.speech_started`: the user started speaking.
    SpeechStarted {
        item_id: Option<String>,
    },
    /// `input_audio_buffer.committed`: the user's audio became item `item_id` (push-to-talk's
    /// commit, or the server's voice activity at the end of speech).
    Committed {
        item_id: Option<String>,
    },
    /// The user's words as the server transcribed them
    /// (`conversation.item.input_audio_transcription.completed`).
    InputTranscript {
        item_id: Option<String>,
        transcript: String,
    },
    /// `error`: the server's words.
    Error {
        message: String,
        code: Option<String>,
    },
    /// Not on the wire: the client's own barge-in (the user spoke over a reply that was
    /// playing). `played_ms` of `total_ms` of the item's audio was heard.
    Interrupted {
        item_id: String,
        played_ms: u64,
        total_ms: u64,
    },
    /// A known event this client reads nothing from (`conversation.item.added`,
    /// `response.output_audio.done`, `rate_limits.updated`, …).
    Other(String),
    /// An event type this client does not know.
    Unknown(String),
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Raw {
    #[serde(rename = "type", deserialize_with = "de_string_or_nothing")]
    kind: Option<String>,
    #[serde(deserialize_with = "de_id")]
    item_id: Option<String>,
    #[serde(deserialize_with = "de_id")]
    call_id: Option<String>,
    #[serde(deserialize_with = "de_string_or_nothing")]
    name: Option<String>,
    #[serde(deserialize_with = "de_string_or_nothing")]
    delta: Option<String>,
    #[serde(deserialize_with = "de_arguments")]
    arguments: Option<String>,
    #[serde(deserialize_with = "de_string_or_nothing")]
    transcript: Option<String>,
    item: Option<Item>,
    response: Option<RawResponse>,
    error: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawResponse {
    #[serde(deserialize_with = "de_id")]
    id: Option<String>,
    #[serde(deserialize_with = "de_string_or_nothing")]
    status: Option<String>,
    status_details: Option<Value>,
    output: Option<Vec<Item>>,
}

impl ServerEvent {
    /// Parse one text frame. `Err` (in plain words) when it is not a JSON object with a type.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let raw: Raw = serde_json::from_str(text)
            .map_err(|e| format!("a realtime event that is not valid JSON: {e}"))?;
        let kind = raw.kind.ok_or("a realtime event without a type")?;
        let delta = || raw.delta.clone().unwrap_or_default();
        Ok(match kind.as_str() {
            "session.created" => Self::SessionCreated,
            "session.updated" => Self::SessionUpdated,
            "response.created" => Self::ResponseCreated {
                response_id: raw.response.and_then(|r| r.id),
            },
            "response.done" => {
                let r = raw.response.unwrap_or_default();
                let status = r.status.unwrap_or_else(|| "completed".into());
                let error = r.status_details.as_ref().and_then(details_error);
                Self::ResponseDone {
                    response_id: r.id,
                    status,
                    error,
                    output: r.output.unwrap_or_default(),
                }
            }
            "response.output_item.added" => Self::OutputItemAdded(raw.item.unwrap_or_default()),
            "response.output_item.done" => Self::OutputItemDone(raw.item.unwrap_or_default()),
            "response.function_call_arguments.delta" => Self::ArgumentsDelta {
                item_id: raw.item_id,
                call_id: raw.call_id,
                delta: delta(),
            },
            "response.function_call_arguments.done" => Self::ArgumentsDone {
                item_id: raw.item_id,
                call_id: raw.call_id,
                name: raw.name,
                arguments: raw.arguments,
            },
            "response.output_text.delta" | "response.text.delta" => Self::TextDelta {
                delta: delta(),
                item_id: raw.item_id,
            },
            "response.output_audio_transcript.delta" | "response.audio_transcript.delta" => {
                Self::TranscriptDelta {
                    delta: delta(),
                    item_id: raw.item_id,
                }
            }
            "response.output_audio.delta" | "response.audio.delta" => Self::AudioDelta {
                delta: delta(),
                item_id: raw.item_id,
            },
            "input_audio_buffer.speech_started" => Self::SpeechStarted {
                item_id: raw.item_id,
            },
            "input_audio_buffer.committed" => Self::Committed {
                item_id: raw.item_id,
            },
            "conversation.item.input_audio_transcription.completed" => Self::InputTranscript {
                item_id: raw.item_id,
                transcript: raw.transcript.unwrap_or_default(),
            },
            "error" => {
                let (message, code) = error_words(raw.error.as_ref());
                Self::Error { message, code }
            }
            k if KNOWN_IGNORED.contains(&k) => Self::Other(kind),
            _ => Self::Unknown(kind),
        })
    }
}

/// Known events that carry nothing the client needs.
const KNOWN_IGNORED: &[&str] = &[
    "conversation.created",
    "conversation.item.added",
    "conversation.item.created",
    "conversation.item.done",
    "conversation.item.retrieved",
    "conversation.item.truncated",
    "conversation.item.deleted",
    "conversation.item.input_audio_transcription.delta",
    "conversation.item.input_audio_transcription.segment",
    "conversation.item.input_audio_transcription.failed",
    "input_audio_buffer.speech_stopped",
    "input_audio_buffer.cleared",
    "input_audio_buffer.timeout_triggered",
    "response.content_part.added",
    "response.content_part.done",
    "response.output_text.done",
    "response.text.done",
    "response.output_audio.done",
    "response.audio.done",
    "response.output_audio_transcript.done",
    "response.audio_transcript.done",
    "response.mcp_call_arguments.delta",
    "response.mcp_call_arguments.done",
    "rate_limits.updated",
    "output_audio_buffer.started",
    "output_audio_buffer.stopped",
    "output_audio_buffer.cleared",
];

fn error_words(e: Option<&Value>) -> (String, Option<String>) {
    let message = match e {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string()),
        None => String::new(),
    };
    let code = e
        .and_then(|v| v.get("code"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let message = if message.trim().is_empty() {
        "the realtime server reported an error without words".to_string()
    } else {
        message
    };
    (message, code)
}

/// A failed response's words: `status_details.error.message`, else its reason.
fn details_error(d: &Value) -> Option<String> {
    d.pointer("/error/message")
        .and_then(Value::as_str)
        .or_else(|| d.get("reason").and_then(Value::as_str))
        .map(str::to_string)
}

// ------------------------------------------------------------------ client events

/// `session.update` with `session`.
pub fn session_update(session: Value) -> Value {
    json!({"type": "session.update", "session": session})
}

/// The user's typed words: a `message` item with one `input_text` part.
pub fn user_text(text: &str) -> Value {
    json!({"type": "conversation.item.create", "item": {
        "type": "message", "role": "user",
        "content": [{"type": "input_text", "text": text}]}})
}

/// One line of the conversation so far, seeding a new session: the user's (or another
/// character's) words as a user `message` with an `input_text` part, the character's own as an
/// assistant `message` with an `output_text` part (the GA name; the beta called it `text`).
pub fn history_message(assistant: bool, text: &str) -> Value {
    let (role, part) = if assistant {
        ("assistant", "output_text")
    } else {
        ("user", "input_text")
    };
    json!({"type": "conversation.item.create", "item": {
        "type": "message", "role": role,
        "content": [{"type": part, "text": text}]}})
}

/// Images of tool results for the model: one user message with `input_image` parts (a
/// `function_call_output` carries text only).
pub fn user_images(images: &[String]) -> Value {
    let parts: Vec<Value> = images
        .iter()
        .map(|u| json!({"type": "input_image", "image_url": u}))
        .collect();
    json!({"type": "conversation.item.create", "item": {
        "type": "message", "role": "user", "content": parts}})
}

/// One call's answer.
pub fn call_output(call_id: &str, output: &str) -> Value {
    json!({"type": "conversation.item.create", "item": {
        "type": "function_call_output", "call_id": call_id, "output": output}})
}

pub fn response_create() -> Value {
    json!({"type": "response.create"})
}

pub fn response_cancel() -> Value {
    json!({"type": "response.cancel"})
}

/// Cut the assistant's audio item to what the user heard.
pub fn truncate(item_id: &str, audio_end_ms: u64) -> Value {
    json!({"type": "conversation.item.truncate", "item_id": item_id,
           "content_index": 0, "audio_end_ms": audio_end_ms})
}

/// Microphone audio: base64 of pcm16 mono 24 kHz.
pub fn append(audio_b64: &str) -> Value {
    json!({"type": "input_audio_buffer.append", "audio": audio_b64})
}

pub fn commit() -> Value {
    json!({"type": "input_audio_buffer.commit"})
}

pub fn clear() -> Value {
    json!({"type": "input_audio_buffer.clear"})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beta_names_parse_as_their_ga_events() {
        let pairs = [
            ("response.audio.delta", "response.output_audio.delta"),
            (
                "response.audio_transcript.delta",
                "response.output_audio_transcript.delta",
            ),
            ("response.text.delta", "response.output_text.delta"),
        ];
        for (beta, ga) in pairs {
            let f = |t: &str| {
                ServerEvent::parse(&json!({"type": t, "item_id": "i", "delta": "x"}).to_string())
                    .unwrap()
            };
            assert_eq!(f(beta), f(ga), "{beta}");
        }
        assert_eq!(
            ServerEvent::parse(r#"{"type":"conversation.item.created","item":{}}"#).unwrap(),
            ServerEvent::Other("conversation.item.created".into())
        );
    }

    #[test]
    fn malformed_and_unknown_events_never_panic() {
        for t in [
            "",
            "{",
            "[]",
            "null",
            "{}",
            r#"{"type":5}"#,
            r#"{"type":"response.done","response":7}"#,
            r#"{"type":"response.output_item.added","item":"x"}"#,
        ] {
            let _ = ServerEvent::parse(t);
        }
        assert_eq!(
            ServerEvent::parse(r#"{"type":"telemetry.ping","x":1}"#).unwrap(),
            ServerEvent::Unknown("telemetry.ping".into())
        );
        assert!(ServerEvent::parse("{}").is_err());
    }

    #[test]
    fn errors_keep_the_servers_words() {
        let e = ServerEvent::parse(
            r#"{"type":"error","error":{"type":"invalid_request_error","code":"x","message":"bad voice"}}"#,
        )
        .unwrap();
        assert_eq!(
            e,
            ServerEvent::Error {
                message: "bad voice".into(),
                code: Some("x".into())
            }
        );
        let done = ServerEvent::parse(
            r#"{"type":"response.done","response":{"id":"r","status":"failed","status_details":{"type":"failed","error":{"message":"overloaded"}}}}"#,
        )
        .unwrap();
        assert!(
            matches!(done, ServerEvent::ResponseDone { ref error, .. } if error.as_deref() == Some("overloaded"))
        );
    }
}
