//! What differs by transport outside its folder, as data: each transport folder gives its
//! [`Descriptor`] (`DESCRIPTOR` in its `mod.rs`) and `transport::descriptor` picks one. The engine, the
//! stage and the doctor ask it instead of branching on the transport themselves.

use crate::tools::registry::ToolRegistry;
use crate::turn::dispatch::Unregistered;
use crate::turn::model::Mapper;
use crate::turn::rounds::Conversation;
use crate::turn::sse::SseEvent;

/// What differs by transport, for the engine.
pub(crate) struct Descriptor {
    /// How a turn reaches the model.
    pub link: Link,
    /// What a call of a tool the window did not declare gets.
    pub unregistered: Unregistered,
    /// Where the conversation's history lives.
    pub history: History,
    /// The SSE mapper of a request transport (`None`: a WebSocket one, which maps its frames
    /// in its own folder).
    pub sse_mapper: Option<SseMapper>,
    /// What a 404 from its endpoint means, when it means more than a wrong URL.
    pub not_found: Option<&'static str>,
    /// A one-off conversation of a prompt (the doctor's probes) on a request transport.
    pub probe: Option<Probe>,
}

/// A one-off conversation: the backend, the tools declared (in the transport's schema), their
/// names, the user's words.
pub(crate) type Probe = fn(
    &crate::backend::Backend,
    Option<serde_json::Value>,
    Vec<String>,
    &str,
) -> Box<dyn Conversation>;

/// Makes a request transport's mapper for a turn's tools.
pub(crate) type SseMapper = fn(&ToolRegistry) -> Box<dyn Mapper<Frame = SseEvent>>;

/// How a transport reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Link {
    /// An HTTP request per round trip (the doctor checks these side by side).
    Requests,
    /// A connection the server drives (push: the doctor does not check it).
    Connection,
    /// A session over WebSocket (realtime: the doctor's session checks).
    Session,
}

/// Where a transport keeps the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum History {
    /// Each request carries the recent transcript.
    Sent,
    /// The server keeps it (push): nothing is sent.
    OnServer,
    /// A window's session keeps it (seeded at each connect); a turn's own session is seeded
    /// with the recent transcript (realtime).
    InTheWindowsSession,
}
