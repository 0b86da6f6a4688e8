//! The transports: one folder each, holding its wire types, its mapper (wire → model events,
//! over the one [`Mapper`](crate::turn::model::Mapper) trait) and how it carries a
//! conversation (a request transport's round trips, push's results sent at once).
//!
//! - [`chat`]: Chat Completions (SSE);
//! - [`responses`]: Responses (SSE, the stored chain, the stateless fallback);
//! - [`push`]: the push transport (one WebSocket per window, docs/push-transport.md);
//! - [`realtime`]: the realtime session (one WebSocket per window, docs/realtime-transport.md);
//! - `de`: how their wire types read loose JSON.
//!
//! Every transport's response is read by the one read loop (`turn::read`) into the one
//! dispatch. What differs by transport outside its folder is its [`Descriptor`] (one per
//! folder); what the floors below need (how tools are declared, one-shot requests) is said on
//! `backend::Transport` itself. A window's standing link (push's connection, realtime's
//! session) is made by [`LinkConfig`] alone. Adding a transport is one folder here, one
//! `backend::Transport` variant, and its arms in [`run`], [`descriptor`], [`LinkConfig::of`] and
//! the enum's own methods; no other file branches on the transport (`tests/floors.rs` checks).

pub(crate) mod chat;
pub(crate) mod de;
mod descriptor;
mod link;
pub mod push;
pub mod realtime;
pub(crate) mod responses;
pub(crate) mod socket;

use super::dispatch::{Dispatch, End};
use super::request::{TurnDeps, TurnRequest};
use super::rounds::request_turn;
use crate::backend::Transport;
use crate::tools::registry::ToolRegistry;
use crate::transcript::Entry;
pub(crate) use descriptor::{Descriptor, History, Link};
pub(crate) use link::{LinkConfig, LinkParts};

/// The descriptor of `t`.
pub(crate) fn descriptor(t: Transport) -> &'static Descriptor {
    match t {
        Transport::ChatCompletions => &chat::DESCRIPTOR,
        Transport::Responses => &responses::DESCRIPTOR,
        Transport::Push => &push::DESCRIPTOR,
        Transport::Realtime => &realtime::DESCRIPTOR,
    }
}

/// Run the turn's exchange with the backend over its transport (the user's message is stored).
pub(crate) async fn run(
    d: &mut Dispatch<'_>,
    deps: &TurnDeps,
    req: &TurnRequest,
    registry: &ToolRegistry,
    history: &[Entry],
    user_text: String,
) -> Result<(), End> {
    match req.backend.transport {
        Transport::ChatCompletions => {
            let tools = registry.chat_tools();
            let mut conv = chat::ChatConversation::new(req, tools, history, user_text);
            request_turn(d, deps, req, &mut conv).await
        }
        Transport::Responses => {
            let names = registry.names().into_iter().map(str::to_string).collect();
            let mut conv = responses::ResponsesConversation::new(
                deps,
                req,
                registry.responses_tools(),
                names,
                history,
                user_text,
            )?;
            request_turn(d, deps, req, &mut conv).await
        }
        Transport::Push => push::push_turn(d, deps, req).await,
        Transport::Realtime => realtime::realtime_turn(d, deps, req, registry, history).await,
    }
}
