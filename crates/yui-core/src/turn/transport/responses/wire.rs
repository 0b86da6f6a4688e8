//! Responses: the streamed events the client reads (by their `type` field; unknown types are
//! ignored) and the flattened tool schema shape.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The `type` of an event (borrowed: no allocation) and, when it is a string, its `delta`:
/// a text delta (nearly every event) is read in this one pass.
#[derive(Debug, Deserialize)]
pub struct Head<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: std::borrow::Cow<'a, str>,
    #[serde(
        default,
        deserialize_with = "crate::turn::transport::de::de_string_or_nothing"
    )]
    pub delta: Option<String>,
}

/// A streamed Responses event other than a text delta (those are read as [`Head`]).
/// Only the fields the client reads are typed; an output item is kept as raw JSON because
/// reasoning items go back to the server exactly as they came.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub enum Event {
    #[serde(rename = "response.created")]
    Created {
        #[serde(default)]
        response: Option<ResponseRef>,
    },
    #[serde(rename = "response.in_progress")]
    InProgress {
        #[serde(default)]
        response: Option<ResponseRef>,
    },
    #[serde(rename = "response.output_item.added")]
    ItemAdded {
        #[serde(default)]
        output_index: Option<u64>,
        item: Value,
    },
    #[serde(rename = "response.output_item.done")]
    ItemDone {
        #[serde(default)]
        output_index: Option<u64>,
        item: Value,
    },
    #[serde(rename = "response.function_call_arguments.delta")]
    ArgsDelta {
        #[serde(default)]
        item_id: Option<String>,
        #[serde(default)]
        output_index: Option<u64>,
        #[serde(default)]
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.done")]
    ArgsDone {
        #[serde(default)]
        item_id: Option<String>,
        #[serde(default)]
        output_index: Option<u64>,
        #[serde(default, deserialize_with = "crate::turn::transport::de::de_arguments")]
        arguments: Option<String>,
        #[serde(default)]
        name: Option<String>,
    },
    #[serde(rename = "response.completed")]
    Completed {
        #[serde(default)]
        response: Option<ResponseRef>,
    },
    #[serde(rename = "response.incomplete")]
    Incomplete {
        #[serde(default)]
        response: Option<ResponseRef>,
    },
    #[serde(rename = "response.failed")]
    Failed {
        #[serde(default)]
        response: Option<Value>,
    },
    /// A bare `function_call` item sent as an event (seen in simplified servers).
    #[serde(rename = "function_call")]
    BareCall {
        #[serde(flatten)]
        item: Value,
    },
    #[serde(rename = "error")]
    Error {
        #[serde(flatten)]
        body: Value,
    },
    /// Every other event type (content parts, refusal deltas, reasoning deltas…).
    #[serde(other)]
    Unknown,
}

/// The `response` object of lifecycle events; only its id and output are read.
#[derive(Debug, Default, Deserialize)]
pub struct ResponseRef {
    #[serde(default, deserialize_with = "crate::turn::transport::de::de_id")]
    pub id: Option<String>,
    #[serde(default)]
    pub output: Option<Vec<Value>>,
}

/// The function-call fields of an output item.
#[derive(Debug, Default, Deserialize)]
pub struct FunctionCallItem {
    #[serde(default, deserialize_with = "crate::turn::transport::de::de_id")]
    pub id: Option<String>,
    #[serde(default, deserialize_with = "crate::turn::transport::de::de_id")]
    pub call_id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "crate::turn::transport::de::de_arguments")]
    pub arguments: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
}

pub use crate::schema::responses as tool_schema;

/// The `function_call` input item sent back on a round trip.
pub fn function_call_item(call_id: &str, name: &str, arguments: &str) -> Value {
    json!({"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments})
}

/// The `tool_choice` that asks for one named tool.
pub fn tool_choice(name: &str) -> Value {
    json!({"type": "function", "name": name})
}

/// A request body (`stream: true` always). Input items stay JSON: reasoning items and stored
/// outputs go back exactly as they came.
#[derive(Debug, Serialize)]
pub struct Request<'a> {
    pub model: &'a str,
    pub stream: bool,
    pub input: &'a [Value],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_response_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
}

/// A message input item (`{"role","content"}`).
pub fn message_item(role: &str, content: &str) -> Value {
    json!({"role": role, "content": content})
}

/// A line of the conversation rebuilt from the transcript, as a typed message item: user text
/// as an `input_text` part, assistant text as an `output_text` part. Servers that translate
/// Responses to chat (llama.cpp) refuse an assistant item without `"type": "message"`.
pub fn history_item(role: crate::transcript::Role, text: &str) -> Value {
    let (role, part) = match role {
        crate::transcript::Role::User => ("user", "input_text"),
        crate::transcript::Role::Assistant => ("assistant", "output_text"),
    };
    json!({"type": "message", "role": role, "content": [{"type": part, "text": text}]})
}
