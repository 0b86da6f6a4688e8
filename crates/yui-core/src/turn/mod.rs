//! The turn engine: one user message in, a streamed reply out, with the full client-tool round
//! trip of the contract (docs: ../shared/spec/client-tools.md, "Tool-call round trip").
//!
//! - [`engine`]: a turn from start to end (build, start, transcript writes, `turn_end`);
//! - [`request`]: what a turn is and borrows; [`call`]: how one client call runs;
//! - [`model`]: the one internal stream every transport maps into (`ModelEvent`);
//! - [`transport`]: one folder per transport (Chat Completions, Responses, push), each with its
//!   wire types, its pure mapper (table-tested) and its conversation;
//! - [`dispatch`]: the one dispatch (speech join, cues, client calls, backend tool status);
//! - `read`: the one read loop (cancel, stall, map, dispatch) every transport's response uses;
//! - [`rounds`]: the round-trip rules of the request transports (the `Conversation` each fills);
//! - [`sse`]: the streaming HTTP client (timeouts, evidence-keeping errors);
//! - [`chain`]: the stored Responses chain; [`endpoints`]: what an endpoint refuses;
//! - `events` (in yui-base, `crate::events`): what leaves the core, in stream order;
//! - [`wording`]: backend failures in plain words (the bubble's and `turn_end`'s error);
//! - `builtin`: a turn on the built-in engine (started first, its endpoint, its crash sentence).
//!
//! Start a turn with [`start`]; read [`TurnEvent`]s from the returned handle's receiver; stop it
//! with [`TurnHandle::stop`]. The last event is always `turn_end`.

mod builtin;
pub mod call;
pub mod chain;
pub(crate) mod dispatch;
pub mod endpoints;
pub mod engine;
pub mod error;
pub mod model;
pub(crate) mod read;
pub(crate) mod request;
pub(crate) mod rounds;
pub mod sse;
pub mod transport;
pub mod wording;

pub use crate::events::{Cue, TurnEvent, TurnStatus};
pub use call::{call_tool, parse_call_arguments};
pub use dispatch::{join_speech, SILENT};
pub use engine::{prepare, run, start, start_configured, TurnHandle, TurnOutcome};
pub use error::BackendError;
pub use request::{Backend, SeatLink, TurnDeps, TurnInput, TurnRequest};
pub use sse::Timeouts;
/// Re-exported so adapters can stop turns and tool calls without depending on tokio-util.
pub use tokio_util::sync::CancellationToken;

/// At most this many round trips (results sent back) per turn; past it the turn closes with the
/// text it has.
pub const MAX_TOOL_ROUND_TRIPS: usize = 3;
