//! A turn on the built-in engine (docs/built-in-model.md): when the turn's deps carry the
//! engine's supervisor, the engine is started (or found warm) before anything is sent and the
//! request goes to its endpoint with its per-run key, through the same Chat Completions
//! transport as any server. An engine that cannot start ends the turn with its one plain
//! sentence (the user's message is kept); an engine that died under the turn replaces the
//! transport's error with "The built-in engine stopped unexpectedly …", and the next turn's
//! start brings it back.

use super::dispatch::End;
use super::request::{TurnDeps, TurnRequest};
use crate::transcript::{self, Role};
use tokio_util::sync::CancellationToken;

/// The request with the engine's endpoint, or why the turn ends before it begins. `(None,
/// None)`: no built-in engine, the request as it is.
pub(super) async fn prepare(
    deps: &TurnDeps,
    req: &TurnRequest,
    cancel: &CancellationToken,
) -> (Option<TurnRequest>, Option<End>) {
    let Some(engine) = &deps.builtin else {
        return (None, None);
    };
    let started = tokio::select! {
        biased;
        () = cancel.cancelled() => Err(End::Stopped),
        r = engine.ensure() => r.map_err(|e| End::Failed(e.to_string())),
    };
    match started {
        Ok(ep) => {
            let mut out = req.clone();
            out.backend.base_url = ep.base_url;
            out.backend.api_key = Some(ep.api_key);
            (Some(out), None)
        }
        Err(end) => {
            keep_message(deps, req);
            (None, Some(end))
        }
    }
}

/// The user's message, stored though the turn never reached a model.
fn keep_message(deps: &TurnDeps, req: &TurnRequest) {
    let at = deps.clock.now();
    let id = Some(req.turn_id.as_str());
    let r = match &req.addressed_by {
        Some(speaker) => {
            transcript::append_from(&deps.store, &req.preset_id, speaker, &req.message, id, at)
        }
        None => transcript::append(
            &deps.store,
            &req.preset_id,
            Role::User,
            &req.message,
            id,
            at,
        ),
    };
    if let Err(e) = r {
        tracing::warn!(error = %e, "the message could not be stored");
    }
}

/// After a failed turn: the engine's sentence when it died under it.
pub(super) async fn crashed(deps: &TurnDeps) -> Option<String> {
    deps.builtin.as_ref()?.crashed().await
}

/// A turn ended: the idle stop counts from now.
pub(super) fn touch(deps: &TurnDeps) {
    if let Some(e) = &deps.builtin {
        e.touch();
    }
}
