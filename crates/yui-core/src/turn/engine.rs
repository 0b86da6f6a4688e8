//! A turn from start to end: what it is (`TurnRequest`, `Backend`), how it is built from current
//! state ([`prepare`]) and started ([`start`]), and [`run`]: the user's message stored before the
//! first request (so it stays even when the backend is dead), the transport's turn, the reply
//! stored at the end (marked cut when it never finished), and the closing `turn_end`.
//!
//! The rules live elsewhere, once for every transport: each transport's folder under
//! `transport/` maps its wire into model events, `read` is the one read loop, `dispatch` runs
//! the events, `rounds` holds the round-trip rules of the request transports.

use super::dispatch::{Dispatch, End};
use super::error::BackendError;
use super::read::{read, SseSource};
use super::request::{tool_context, SeatLink};
pub use super::request::{Backend, TurnDeps, TurnRequest};
use super::sse::{SseStream, Timeouts};
use super::transport::{descriptor, History};
use crate::clock::SharedClock;
use crate::context::ClientContext;
use crate::error::Result;
use crate::events::{Addressed, TurnEvent, TurnStatus};
use crate::store::Store;
use crate::tools::registry::{RegistryEnv, ToolRegistry};
use crate::transcript::{self, Role};
use crate::window::WindowKind;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Transcript lines a turn carries as history when its token budget cannot be read (the
/// window is `yui.memory.history_tokens`, sized by `longterm::for_turn`).
pub const HISTORY_LIMIT: usize = 40;
/// Capacity of a turn's event channel (the engine waits when the reader is this far behind).
pub const EVENT_BUFFER: usize = 1024;

/// How a turn ended (the same fields as `turn_end`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnOutcome {
    pub status: TurnStatus,
    pub text: String,
    pub response_id: Option<String>,
    pub error: Option<String>,
    pub addressed: Option<Addressed>,
}

/// A running turn: its events, a way to stop it, and its outcome.
pub struct TurnHandle {
    pub turn_id: String,
    pub events: mpsc::Receiver<TurnEvent>,
    pub join: JoinHandle<TurnOutcome>,
    cancel: CancellationToken,
}

impl TurnHandle {
    /// Stop the turn: the upstream request is dropped at once and the turn ends `stopped`.
    pub fn stop(&self) {
        self.cancel.cancel();
    }
    /// A token that stops this turn (for a shell that keeps it apart from the handle).
    pub fn stopper(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

static TURN_SEQ: AtomicU64 = AtomicU64::new(0);

/// Build a turn from current state: the preset's persona, the window's tools (rebuilt now), the
/// client context (read now, from the clock passed in).
pub fn prepare(
    store: &Store,
    clock: &SharedClock,
    preset_id: &str,
    window: WindowKind,
    message: &str,
    backend: Backend,
) -> Result<(TurnRequest, ToolRegistry)> {
    let preset = crate::presets::get(store, preset_id)?;
    let env = RegistryEnv::load(store, preset_id, window)?;
    let registry = ToolRegistry::for_window(&env)?;
    let mut context = ClientContext::build(clock.as_ref(), store, preset_id, &registry);
    let turn_id = format!(
        "turn-{}-{}",
        clock.now().timestamp_millis(),
        TURN_SEQ.fetch_add(1, Ordering::Relaxed)
    );
    // Long-term memory: the history window's size and what this turn recalls (docs/memory.md).
    let (history_limit, recalled) =
        crate::longterm::for_turn(store, clock.now(), preset_id, &turn_id, message, None);
    context.memory = recalled.lines;
    Ok((
        TurnRequest {
            turn_id,
            preset_id: preset_id.to_string(),
            window,
            message: message.to_string(),
            instructions: Some(preset.persona).filter(|p| !p.trim().is_empty()),
            context: Some(context),
            backend,
            timeouts: Timeouts::configured(store),
            history_limit,
            addressed_by: None,
        },
        registry,
    ))
}

/// Prepare and start a turn of `preset_id` in a `window` against the configured backend (and the
/// stored API key, through `backend::resolve`), with the configured timeouts: one turn in one
/// call. The app and `yui converse` go through the stage (`stage::Stage::user_turn`), `yui turn`
/// through [`prepare`] and [`start`] with its overrides.
pub fn start_configured(
    store: &Store,
    clock: &SharedClock,
    paths: &crate::paths::Paths,
    preset_id: &str,
    window: WindowKind,
    message: &str,
) -> Result<TurnHandle> {
    let backend = Backend::configured(store, paths)?;
    let (req, registry) = prepare(store, clock, preset_id, window, message, backend)?;
    let deps = TurnDeps::new(store.clone(), clock.clone(), &req.timeouts)?;
    Ok(start(deps, req, registry))
}

/// Start a turn on the current tokio runtime.
pub fn start(deps: TurnDeps, req: TurnRequest, registry: ToolRegistry) -> TurnHandle {
    let (tx, rx) = mpsc::channel(EVENT_BUFFER);
    let cancel = CancellationToken::new();
    let turn_id = req.turn_id.clone();
    let c = cancel.clone();
    let join = tokio::spawn(async move { run(&deps, &req, &registry, &tx, &c).await });
    TurnHandle {
        turn_id,
        events: rx,
        join,
        cancel,
    }
}

/// Run one turn to its end, sending events to `tx`; the last event sent is `turn_end`.
pub async fn run(
    deps: &TurnDeps,
    req: &TurnRequest,
    registry: &ToolRegistry,
    tx: &mpsc::Sender<TurnEvent>,
    cancel: &CancellationToken,
) -> TurnOutcome {
    // The built-in engine first: its endpoint is the turn's backend.
    let (on_engine, early) = super::builtin::prepare(deps, req, cancel).await;
    let req = on_engine.as_ref().unwrap_or(req);
    // With an embeddings model, recall again with the message's vector, waiting briefly.
    let now = deps.clock.now();
    let embedded = match &req.context {
        Some(_) if early.is_none() => {
            let ask = crate::longterm::embed::TurnAsk {
                preset_id: &req.preset_id,
                turn_id: &req.turn_id,
                message: &req.message,
                base_url: &req.backend.base_url,
                api_key: req.backend.api_key.as_deref(),
            };
            crate::longterm::embed::recall_turn(&deps.store, &deps.http, now, ask, cancel).await
        }
        _ => None,
    };
    let embedded = embedded.map(|lines| {
        let mut out = req.clone();
        if let Some(c) = out.context.as_mut() {
            c.memory = lines;
        }
        out
    });
    let req = embedded.as_ref().unwrap_or(req);
    let mut d = Dispatch::new(
        tx,
        registry,
        cancel,
        tool_context(deps, req),
        descriptor(req.backend.transport).unregistered,
    );
    let res = match early {
        Some(end) => Err(end),
        None => run_turn(&mut d, deps, req, registry).await,
    };
    // A start held back as a possible [SILENT] that the stream never finished is still speech.
    d.end_of_response(&mut String::new()).await;
    let (status, error) = match res {
        // A reply of exactly [SILENT] is silent too: nothing shown, spoken or stored.
        Ok(()) if d.text.trim().is_empty() => (TurnStatus::Silent, None),
        Ok(()) => (TurnStatus::Ok, None),
        Err(End::Stopped) => (TurnStatus::Stopped, None),
        Err(End::Backend(e)) => {
            // The bubble gets one plain sentence and a next step; the evidence goes to the log.
            tracing::warn!(preset = %req.preset_id, error = %e, "turn failed");
            (
                TurnStatus::Error,
                Some(super::wording::plain(&e, &req.backend)),
            )
        }
        Err(End::Failed(m)) => (TurnStatus::Error, Some(m)),
    };
    // An engine that died under the turn says so instead of the transport's error.
    let error = match status {
        TurnStatus::Error => super::builtin::crashed(deps).await.or(error),
        _ => error,
    };
    super::builtin::touch(deps);
    if !d.text.trim().is_empty() {
        // A reply that never finished is kept, marked cut, and never sent back as history.
        let cut = status == TurnStatus::Error;
        if let Err(e) = transcript::append_marked(
            &deps.store,
            &req.preset_id,
            Role::Assistant,
            &d.text,
            Some(&req.turn_id),
            deps.clock.now(),
            cut,
        ) {
            tracing::warn!(error = %e, "the reply could not be stored in the transcript");
        }
        // The user spoke over it: stored as what they heard, with the marker.
        if let Some(heard) = &d.heard {
            if let Err(e) =
                transcript::interrupt_reply(&deps.store, &req.preset_id, &req.turn_id, heard)
            {
                tracing::warn!(error = %e, "the interrupted reply could not be cut");
            }
        }
    }
    let addressed = registry
        .state()
        .addressed
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let outcome = TurnOutcome {
        status,
        text: std::mem::take(&mut d.text),
        response_id: d.response_id.take(),
        error,
        addressed,
    };
    let _ = tx
        .send(TurnEvent::TurnEnd {
            status: outcome.status,
            text: outcome.text.clone(),
            response_id: outcome.response_id.clone(),
            error: outcome.error.clone(),
            addressed: outcome.addressed.clone(),
        })
        .await;
    outcome
}

/// The transcript write before the first request, then the transport's turn.
async fn run_turn(
    d: &mut Dispatch<'_>,
    deps: &TurnDeps,
    req: &TurnRequest,
    registry: &ToolRegistry,
) -> std::result::Result<(), End> {
    let store = &deps.store;
    // History first, so it does not include the message of this turn.
    let on_server = match descriptor(req.backend.transport).history {
        History::Sent => false,
        History::OnServer => true,
        History::InTheWindowsSession => matches!(deps.link, SeatLink::Realtime(_)),
    };
    let history = match on_server {
        true => Vec::new(),
        false => transcript::recent(store, &req.preset_id, req.history_limit)
            .map_err(|e| End::Failed(format!("the transcript could not be read: {e}")))?,
    };
    match &req.addressed_by {
        Some(speaker) => transcript::append_from(
            store,
            &req.preset_id,
            speaker,
            &req.message,
            Some(&req.turn_id),
            deps.clock.now(),
        ),
        None => transcript::append(
            store,
            &req.preset_id,
            Role::User,
            &req.message,
            Some(&req.turn_id),
            deps.clock.now(),
        ),
    }
    .map_err(|e| End::Failed(format!("the message could not be stored: {e}")))?;
    if d.cancel.is_cancelled() {
        return Err(End::Stopped);
    }
    let user_text = match (&req.context, &req.addressed_by) {
        (Some(c), Some(_)) => c.render(),
        (Some(c), None) => c.wrap(&req.message),
        (None, Some(speaker)) => format!("{speaker}: {}", req.message),
        (None, None) => req.message.clone(),
    };
    super::transport::run(d, deps, req, registry, &history, user_text).await
}

/// Run one response's already-open stream exactly as a turn reads it (speech, held calls, cues,
/// tool results), without requests, transcript or round trips. For the benchmark
/// (`benches/turn_stream.rs`) and stream-level tests. Returns the response's text.
#[doc(hidden)]
pub async fn replay_response(
    deps: &TurnDeps,
    req: &TurnRequest,
    registry: &ToolRegistry,
    stream: SseStream,
    tx: &mpsc::Sender<TurnEvent>,
) -> std::result::Result<String, ReplayError> {
    let cancel = CancellationToken::new();
    let mut d = Dispatch::new(
        tx,
        registry,
        &cancel,
        tool_context(deps, req),
        descriptor(req.backend.transport).unregistered,
    );
    let Some(mapper) = descriptor(req.backend.transport).sse_mapper else {
        return Err(ReplayError::NotSse);
    };
    let mut mapper = mapper(registry);
    read(
        &mut d,
        &cancel,
        &mut SseSource::new(stream),
        mapper.as_mut(),
    )
    .await
    .map(|r| r.text)
    .map_err(|e| match e {
        End::Stopped => ReplayError::Stopped,
        End::Backend(b) => ReplayError::Backend(b),
        End::Failed(m) => ReplayError::Failed(m),
    })
}

/// Why [`replay_response`] ended without the response's text.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("this transport does not stream over SSE")]
    NotSse,
    #[error("stopped")]
    Stopped,
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The turn's own failure, in plain words.
    #[error("{0}")]
    Failed(String),
}
