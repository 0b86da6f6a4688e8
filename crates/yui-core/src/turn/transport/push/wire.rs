//! The push transport's frames (docs/push-transport.md): JSON text frames over one WebSocket per
//! character window, each named by `"type"`. Unknown fields are ignored; an unknown type is
//! [`ServerFrame::Unknown`] (logged and ignored).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The protocol version this client speaks.
pub const PROTOCOL: u32 = 1;

/// A declared tool in `hello.tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDecl {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientInfo {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PresetRef {
    pub id: String,
    pub name: String,
}

/// What the client sends.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientFrame {
    Hello {
        protocol: u32,
        client: ClientInfo,
        /// `main`, `pet`, `phone` or `browser_build`.
        window: String,
        preset: PresetRef,
        /// The window's declared tools, generate_express excepted.
        tools: Vec<ToolDecl>,
        /// The parameters schema generate_express would have: the vocabulary segments' cues use.
        cues: Value,
    },
    UserMessage {
        turn_id: String,
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        context: Option<String>,
    },
    ToolResult {
        turn_id: String,
        call_id: String,
        result: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        images: Vec<String>,
    },
    Cancel {
        turn_id: String,
    },
    Pong,
}

/// A cue inside a segment: plays when the text reaches `at` (Unicode code points into `text`).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct SegmentCue {
    #[serde(default)]
    pub at: u64,
    #[serde(default)]
    pub emotion_id: Option<String>,
    #[serde(default)]
    pub motion_id: Option<String>,
    #[serde(default)]
    pub emotion_text: Option<String>,
    #[serde(default)]
    pub caption: Option<String>,
}

/// What the server sends.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerFrame {
    Welcome {
        #[serde(default)]
        protocol: u32,
    },
    Segment {
        turn_id: String,
        /// `speech` (shown and spoken) or `render` (shown only).
        #[serde(default)]
        kind: String,
        #[serde(default)]
        text: String,
        #[serde(default)]
        cues: Vec<SegmentCue>,
    },
    ToolCall {
        turn_id: String,
        call_id: String,
        name: String,
        /// An object, or a JSON string.
        #[serde(default)]
        arguments: Value,
    },
    ToolStatus {
        turn_id: String,
        name: String,
        #[serde(default)]
        status: String,
    },
    TurnEnd {
        turn_id: String,
        #[serde(default)]
        status: String,
        #[serde(default)]
        error: Option<String>,
    },
    Error {
        #[serde(default)]
        message: String,
    },
    Ping,
    #[serde(other)]
    Unknown,
}

/// A frame's `type` (borrowed: no allocation) and the fields of a `segment`, read in one pass
/// (nearly every frame of a turn is a segment). Fields of other types are skipped; a segment
/// field of the wrong type fails this pass, and the frame is then read by the strict path.
#[derive(Deserialize)]
struct Quick<'a> {
    #[serde(rename = "type", borrow, default)]
    frame: std::borrow::Cow<'a, str>,
    #[serde(
        default,
        deserialize_with = "crate::turn::transport::de::de_string_or_nothing"
    )]
    turn_id: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    cues: Option<Vec<SegmentCue>>,
}

impl ServerFrame {
    /// Parse one text frame. A segment is read in one pass as a plain struct ([`Quick`]): the
    /// internally tagged enum buffers every field of every frame before it picks a variant.
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        if let Ok(q) = serde_json::from_str::<Quick<'_>>(text) {
            if q.frame != "segment" {
                return serde_json::from_str(text);
            }
            if let Some(turn_id) = q.turn_id {
                return Ok(Self::Segment {
                    turn_id,
                    kind: q.kind.unwrap_or_default(),
                    text: q.text.unwrap_or_default(),
                    cues: q.cues.unwrap_or_default(),
                });
            }
        }
        // Not JSON, or a segment with a missing or mistyped field: the enum says what is wrong.
        serde_json::from_str(text)
    }

    /// The turn a frame belongs to, if any.
    pub fn turn_id(&self) -> Option<&str> {
        match self {
            Self::Segment { turn_id, .. }
            | Self::ToolCall { turn_id, .. }
            | Self::ToolStatus { turn_id, .. }
            | Self::TurnEnd { turn_id, .. } => Some(turn_id),
            _ => None,
        }
    }
}

/// Tool-call arguments as the text the dispatch parses: a string as is, anything else as JSON.
pub fn arguments_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
