//! Chat Completions: `chat.completion.chunk` as servers really send it, and the tool schema shape.
//!
//! Everything is optional: a first chunk with `role` and `content: null`, chunks with no
//! `choices` (usage, llama.cpp `timings`), `tool_calls` fragments with or without `index`/`id`,
//! and arguments as a string or an object all parse. A chunk carrying `error` is a server error.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Debug, Default, Deserialize)]
pub struct Chunk {
    #[serde(default)]
    pub choices: Vec<Choice>,
    /// Some servers report failures inside the stream.
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Choice {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub delta: Option<Delta>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Delta {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Default, Deserialize)]
pub struct ToolCallDelta {
    #[serde(default)]
    pub index: Option<usize>,
    #[serde(default, deserialize_with = "crate::turn::transport::de::de_id")]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Default, Deserialize)]
pub struct FunctionDelta {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "crate::turn::transport::de::de_arguments")]
    pub arguments: Option<String>,
}

/// `hermes.tool.progress` telemetry (Hermes api-server): a tool's name and status.
#[derive(Debug, Default, Deserialize)]
pub struct HermesProgress {
    #[serde(default, alias = "tool", alias = "tool_name")]
    pub name: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
}

pub use crate::schema::chat as tool_schema;

/// The `tool_choice` that asks for one named tool.
pub fn tool_choice(name: &str) -> Value {
    json!({"type": "function", "function": {"name": name}})
}

/// A request body (`stream: true` always).
#[derive(Debug, Serialize)]
pub struct Request<'a> {
    pub model: &'a str,
    pub stream: bool,
    pub messages: &'a [Message],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
}

/// One message of the array a turn sends.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: UserContent,
    },
    /// `content: null` when the response said nothing beside its calls.
    Assistant {
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCallOut>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A user message's content: text, or the image-only message that follows a round's tool
/// messages.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum UserContent {
    Text(String),
    Images(Vec<ImagePart>),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImagePart {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub image_url: ImageUrl,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImageUrl {
    pub url: String,
}

impl ImagePart {
    pub fn new(url: &str) -> Self {
        Self {
            kind: "image_url",
            image_url: ImageUrl {
                url: url.to_string(),
            },
        }
    }
}

/// A call echoed back in the assistant message of a round trip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallOut {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionOut,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionOut {
    pub name: String,
    pub arguments: String,
}
