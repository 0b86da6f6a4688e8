//! What a turn is and borrows: [`TurnRequest`] (resolved once, before the turn starts) and
//! [`TurnDeps`], with what every transport derives from them (the tools' context, what a call
//! to an undeclared tool gets). The engine, the transports and the round-trip rules all read
//! these; none of them imports the engine.

use super::sse::{self, Timeouts};
use crate::clock::SharedClock;
use crate::context::ClientContext;
use crate::error::{CoreError, Result};
use crate::store::Store;
use crate::tools::ToolContext;
use crate::window::WindowKind;
use std::sync::Arc;

/// The note a Chat Completions tool message carries when its images follow.
pub const IMAGE_NOTE_ONE: &str = "[the image follows in the next user message]";
pub const IMAGE_NOTE_MANY: &str = "[the images follow in the next user message]";

/// Where a turn goes: resolved once, in `backend::resolve`.
pub use crate::backend::Backend;

/// Everything one turn needs besides the tools.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    pub turn_id: String,
    pub preset_id: String,
    pub window: WindowKind,
    /// The user's message, as typed (stored as is; the request carries it after the context).
    pub message: String,
    /// System prompt (the preset's persona).
    pub instructions: Option<String>,
    pub context: Option<ClientContext>,
    pub backend: Backend,
    pub timeouts: Timeouts,
    pub history_limit: usize,
    /// An addressed turn: the name of the character whose reply `message` is. It is stored as
    /// said by that character, and the request carries the client context alone (its
    /// `addressed:` lines say who spoke and what was said).
    pub addressed_by: Option<String>,
}

/// A window's link to its backend, made and kept by its seat (`stage/`).
#[derive(Clone, Default)]
pub enum SeatLink {
    /// None: a push or realtime turn connects for itself (the CLI, the phone).
    #[default]
    None,
    /// The window's push connection.
    Push(Arc<super::transport::push::conn::PushClient>),
    /// The window's realtime session.
    Realtime(Arc<super::transport::realtime::conn::RealtimeClient>),
}

/// What a turn sends as the user's part.
#[derive(Clone, Default)]
pub enum TurnInput {
    /// The message's text.
    #[default]
    Text,
    /// Spoken, to a realtime session of the turn's own (the CLI): pcm16 24 kHz chunks,
    /// appended then committed; the message is what the server transcribes.
    Audio(Arc<Vec<Vec<u8>>>),
    /// A response the realtime server started by itself (the user spoke): the turn reads it from
    /// this link (and the events already read from it) instead of sending anything.
    Started(super::transport::realtime::started::ServerStarted),
}

/// Long-lived things a turn borrows.
#[derive(Clone)]
pub struct TurnDeps {
    pub store: Store,
    pub clock: SharedClock,
    pub http: reqwest::Client,
    /// The window's link to its backend (push and realtime keep one per seat); without one a
    /// turn on those transports connects for itself.
    pub link: SeatLink,
    /// What the turn sends as the user's part.
    pub input: TurnInput,
    /// Realtime without a window's session: where the reply's audio goes (the session is then
    /// an audio one).
    pub audio_out: Option<Arc<dyn crate::realtime_audio::RealtimeAudioOut>>,
    /// The built-in engine (docs/built-in-model.md): started before the turn is sent, its
    /// endpoint and key replace the backend's.
    pub builtin: Option<Arc<crate::model::engine::Engine>>,
}

impl TurnDeps {
    pub fn new(store: Store, clock: SharedClock, timeouts: &Timeouts) -> Result<Self> {
        let http = sse::http_client(timeouts)
            .map_err(|e| CoreError::new(crate::error::ErrorCode::Backend, e.to_string()))?;
        Ok(Self {
            store,
            clock,
            http,
            link: SeatLink::None,
            input: TurnInput::Text,
            audio_out: None,
            builtin: None,
        })
    }
}

pub(crate) fn tool_context(deps: &TurnDeps, req: &TurnRequest) -> ToolContext {
    ToolContext {
        store: deps.store.clone(),
        clock: deps.clock.clone(),
        preset_id: req.preset_id.clone(),
        window: req.window,
        turn_id: req.turn_id.clone(),
        call: Default::default(),
    }
}
