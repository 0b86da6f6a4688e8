//! The one internal stream every transport maps its wire into.
//!
//! Each transport has a pure mapper (`map_chat`, `map_responses`, `push::map`) that turns what the
//! server sent into [`ModelEvent`]s, and one dispatch (`dispatch`) runs them: speech, cues, client
//! calls, backend tool status. The mappers know the wire; the dispatch knows the contract's rules.

use super::events::Cue;
use super::sse::{BackendError, SseEvent};
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
    /// Chat Completions `finish_reason` (only a non-empty value).
    Finish(String),
}

/// A complete call as the stream delivered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallItem {
    pub call_id: String,
    pub name: String,
    /// The arguments as the model wrote them (JSON text; parsed by the dispatch).
    pub arguments: String,
    /// Position among the response's output items (the order a round trip sends them back in).
    pub seq: usize,
}

/// Whether the mapper wants more of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    More,
    /// The stream's own end (`[DONE]`, `response.completed`…): stop reading.
    End,
}

/// A transport's wire → [`ModelEvent`] mapping for one response. Pure: no I/O, no clock.
pub trait Mapper: Send {
    /// Map one SSE event, appending what it means to `out`.
    fn feed(&mut self, ev: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<Flow, BackendError>;
    /// The body ended (after [`Flow::End`] or when the connection closed). A stream that ended
    /// without the transport's end marker is [`BackendError::CutOff`]: nothing still held is
    /// released, since its arguments may be incomplete.
    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), BackendError>;
}
