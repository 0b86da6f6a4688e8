//! Chat Completions: `chat.completion.chunk` as servers really send it, and the tool schema shape.
//!
//! Everything is optional: a first chunk with `role` and `content: null`, chunks with no
//! `choices` (usage, llama.cpp `timings`), `tool_calls` fragments with or without `index`/`id`,
//! and arguments as a string or an object all parse. A chunk carrying `error` is a server error.

use serde::Deserialize;
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
    #[serde(default, deserialize_with = "super::de_id")]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Default, Deserialize)]
pub struct FunctionDelta {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "super::de_arguments")]
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

/// A declared tool, nested: `{"type":"function","function":{name, description, parameters}}`.
pub fn tool_schema(name: &str, description: &str, parameters: &Value) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": parameters,
        }
    })
}
