//! The one internal stream every transport maps its wire into.
//!
//! Each transport has a pure [`Mapper`] (`transport::{chat,responses,push}::map`) that turns the
//! frames its source delivers (SSE events, push frames) into [`ModelEvent`]s; one read loop
//! (`read`) feeds them and one dispatch (`dispatch`) runs them: speech, cues, client calls,
//! backend tool status. The mappers know the wire; the dispatch knows the contract's rules.

use super::error::BackendError;
use crate::events::Cue;
use serde_json::Value;

/// One thing the model did, in stream order.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// Text to show; `spoken` text is also spoken and stored as the turn's speech (push `render`
    /// segments are shown only).
    Text { text: String, spoken: bool },
    /// A cue that arrives as such (push segments), not as a generate_express call.
    Cue(Cue),
    /// A call whose arguments are complete: release it now.
    Call(CallItem),
    /// A tool the backend runs (Responses items, Hermes telemetry, push `tool_status`).
    BackendTool {
        call_id: Option<String>,
        name: String,
        status: String,
    },
    /// The id of the response being read (Responses).
    ResponseId(String),
    /// A reasoning item to send back on a round trip, at its place among the round's items.
    Reasoning { seq: usize, item: Value },
    /// Why the server ended the response (Chat Completions `finish_reason`, push `turn_end`).
    Stop(StopReason),
}

/// Why a response ended, as the server said it. Typed so the rules match on variants, not on
/// strings; [`StopReason::as_str`] gives the wire's word back for logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The model finished its reply (`stop`, push `ok`).
    Done,
    /// The model stopped to wait for its calls' results (`tool_calls`, `function_call`).
    ToolCalls,
    /// The output-token limit cut the reply (`length`).
    Length,
    /// The server's content filter ended the reply (`content_filter`).
    ContentFilter,
    /// The backend stopped the turn (push `stopped`).
    Stopped,
    /// The backend ended the turn with an error (push `turn_end` error, `error` frame): its words.
    Error(String),
    /// A word this client does not know, kept as the server wrote it.
    Other(String),
}

impl StopReason {
    /// A Chat Completions `finish_reason`.
    pub fn from_finish_reason(s: &str) -> Self {
        match s {
            "stop" => Self::Done,
            "tool_calls" | "function_call" => Self::ToolCalls,
            "length" => Self::Length,
            "content_filter" => Self::ContentFilter,
            other => Self::Other(other.to_string()),
        }
    }

    /// The wire's word, for logs.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Done => "stop",
            Self::ToolCalls => "tool_calls",
            Self::Length => "length",
            Self::ContentFilter => "content_filter",
            Self::Stopped => "stopped",
            Self::Error(_) => "error",
            Self::Other(s) => s,
        }
    }
}

/// A complete call as the stream delivered it.
#[derive(Debug, Clone)]
pub struct CallItem {
    pub call_id: String,
    pub name: String,
    /// The arguments as the model wrote them (JSON text; parsed by the dispatch).
    pub arguments: String,
    /// Position among the response's output items (the order a round trip sends them back in).
    pub seq: usize,
    /// Non-empty argument pieces the stream carried (0 or 1: in one piece). Only the doctor
    /// reports it, so it is no part of what makes two calls the same call.
    pub fragments: usize,
}

impl PartialEq for CallItem {
    fn eq(&self, o: &Self) -> bool {
        (&self.call_id, &self.name, &self.arguments, self.seq)
            == (&o.call_id, &o.name, &o.arguments, o.seq)
    }
}

impl Eq for CallItem {}

/// Whether the mapper wants more of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    More,
    /// The stream's own end (`[DONE]`, `response.completed`…): stop reading.
    End,
}

/// A transport's wire → [`ModelEvent`] mapping for one response. Pure: no I/O, no clock.
/// `Frame` is what the transport's source delivers (an SSE event, a push frame, a WebSocket
/// message).
pub trait Mapper: Send {
    type Frame;
    /// Map one frame, appending what it means to `out`.
    fn feed(&mut self, frame: Self::Frame, out: &mut Vec<ModelEvent>)
        -> Result<Flow, BackendError>;
    /// The body ended (after [`Flow::End`] or when the connection closed). A stream that ended
    /// without the transport's end marker is [`BackendError::CutOff`]: nothing still held is
    /// released, since its arguments may be incomplete.
    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), BackendError>;
}
