//! What a turn tells the outside world, in stream order: speech deltas, cues, client tool calls
//! and their results, backend tool status, and one closing `turn_end`.
//!
//! Every event serializes as one JSON object with a `type` field; `yui turn` prints exactly these
//! objects, one per line, and the Tauri shell forwards them unchanged to the window that started
//! the turn.

use super::output::ToolOutput;
use serde::Serialize;

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    /// The model spoke.
    Ok,
    /// The turn ended without speech (a deliberate silence, or nothing said).
    Silent,
    /// The backend failed; `error` says how, in plain words with the evidence.
    Error,
    /// The turn was stopped by the user (cancellation).
    Stopped,
}

/// An expression cue: the fields of a `generate_express` call, each optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Cue {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emotion_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub motion_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emotion_text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
}

/// The character a reply was addressed to (`address_character`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Addressed {
    pub preset_id: String,
    pub name: String,
}

/// One event out of the core.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TurnEvent {
    /// A piece of spoken text. Concatenating every `delta` of a turn gives `turn_end.text`
    /// (the separator between responses is carried by the first delta of the later response).
    Speech { delta: String },
    /// Text to show but not speak or store (push `render` segments).
    Render { text: String },
    /// An expression cue to play now.
    Cue {
        call_id: String,
        name: String,
        #[serde(flatten)]
        cue: Cue,
    },
    /// A client tool call is about to run (arguments as the model wrote them).
    ToolCall {
        call_id: String,
        name: String,
        arguments: String,
    },
    /// The result a client tool call answers the model.
    ToolResult {
        call_id: String,
        name: String,
        result: ToolOutput,
        failed: bool,
    },
    /// A tool the backend runs (or Hermes telemetry): `running` or `done` (or the server's word).
    ToolStatus {
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        name: String,
        status: String,
    },
    /// The last event of every turn.
    TurnEnd {
        status: TurnStatus,
        /// The turn's whole speech, joined by the speech-join rule.
        text: String,
        /// Responses: the id of the turn's last response.
        #[serde(skip_serializing_if = "Option::is_none")]
        response_id: Option<String>,
        /// `error` turns: what failed, in plain words, with the evidence.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// The character this reply was addressed to, when `address_character` accepted a call.
        #[serde(skip_serializing_if = "Option::is_none")]
        addressed: Option<Addressed>,
    },
}

impl TurnEvent {
    /// The `type` field, for logging and filtering.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Speech { .. } => "speech",
            Self::Render { .. } => "render",
            Self::Cue { .. } => "cue",
            Self::ToolCall { .. } => "tool_call",
            Self::ToolResult { .. } => "tool_result",
            Self::ToolStatus { .. } => "tool_status",
            Self::TurnEnd { .. } => "turn_end",
        }
    }
}
