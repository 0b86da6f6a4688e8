//! The turn engine: one user message in, a streamed reply out, with the full client-tool round
//! trip of the contract (docs: ../shared/spec/client-tools.md, "Tool-call round trip").
//!
//! - [`sse`]: the streaming HTTP client (timeouts, evidence-keeping errors);
//! - [`wire`]: what each transport sends and tolerates back;
//! - [`engine`]: the round-trip loop for Chat Completions and Responses;
//! - [`chain`]: the stored Responses chain (last response id + unanswered outputs);
//! - [`events`]: what leaves the core, in stream order;
//! - [`plain`]: backend failures in plain words (the bubble's and `turn_end`'s error).
//!
//! Start a turn with [`start`]; read [`TurnEvent`]s from the returned handle's receiver; stop it
//! with [`TurnHandle::stop`]. The last event is always `turn_end`.

pub mod chain;
pub mod engine;
pub mod events;
pub mod plain;
pub mod sse;
pub mod wire;

pub use engine::{
    call_tool, join_speech, parse_call_arguments, prepare, run, start, start_configured, Backend,
    TurnDeps, TurnHandle, TurnOutcome, TurnRequest,
};
pub use events::{Cue, TurnEvent, TurnStatus};
pub use sse::{BackendError, Timeouts};
/// Re-exported so adapters can stop turns and tool calls without depending on tokio-util.
pub use tokio_util::sync::CancellationToken;

/// At most this many round trips (results sent back) per turn; past it the turn closes with the
/// text it has.
pub const MAX_TOOL_ROUND_TRIPS: usize = 3;
