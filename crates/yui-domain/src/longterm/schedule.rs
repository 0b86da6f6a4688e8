//! When extraction runs: after a character's conversation pauses (`yui.memory.pause_minutes`
//! without a turn of it), or right after a turn when unread lines are about to leave its history
//! window. Never during a turn of that character and never delaying one: a turn starting stops a
//! running extraction (it changes nothing, and its lines are read again later), and extraction
//! runs in a task of its own. A failure is retried after the pause, doubled per failure (at most
//! an hour). After a successful extraction, memories without a vector of the configured
//! embeddings model are embedded (`embed::backfill`): a model change re-embeds them all.
//!
//! The stage drives it ([`Scheduler::turn_started`], [`Scheduler::turn_ended`]).

use super::extract;
use super::recall::{window_len, MAX_HISTORY_LINES};
use crate::backend::Backend;
use crate::clock::SharedClock;
use crate::error::Result;
use crate::store::Store;
use crate::transcript;
use rusqlite::OptionalExtension;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Where an extraction's backend comes from (the character's own: what its turns use).
pub type BackendFn = Arc<dyn Fn(&str) -> Result<Backend> + Send + Sync>;

/// Schedules extractions, per character.
#[derive(Clone)]
pub struct Scheduler(Arc<Shared>);

struct Shared {
    store: Store,
    clock: SharedClock,
    http: reqwest::Client,
    backend: BackendFn,
    /// Tests: a pause shorter than the setting's minutes.
    pause: Option<Duration>,
    slots: Mutex<HashMap<String, Slot>>,
}

#[derive(Default)]
struct Slot {
    busy: bool,
    /// The pending timer or the running extraction: cancelled when a turn starts.
    token: Option<CancellationToken>,
    failures: u32,
}

/// Whether unread lines of `preset_id` sit in the oldest quarter of its history window (or have
/// left it already): read them now, before the window slides past them.
pub fn window_due(store: &Store, preset_id: &str) -> Result<bool> {
    let cfg = super::config::load(store);
    let recent = transcript::recent(store, preset_id, MAX_HISTORY_LINES)?;
    let n = window_len(&recent, cfg.history_tokens);
    let window = &recent[recent.len() - n..];
    let cursor: i64 = store.read(|c| {
        Ok(c.query_row(
            "SELECT extracted_to FROM memory_state WHERE preset_id = ?1",
            [preset_id],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0))
    })?;
    // The window is full when older lines exist outside it: only then do lines leave it.
    if n >= recent.len() {
        return Ok(false);
    }
    Ok(window
        .iter()
        .position(|e| e.id > cursor)
        .is_some_and(|first_unread| first_unread < n.div_ceil(4)))
}

impl Scheduler {
    pub fn new(
        store: Store,
        clock: SharedClock,
        http: reqwest::Client,
        backend: BackendFn,
    ) -> Self {
        Self::build(store, clock, http, backend, None)
    }

    fn build(
        store: Store,
        clock: SharedClock,
        http: reqwest::Client,
        backend: BackendFn,
        pause: Option<Duration>,
    ) -> Self {
        Self(Arc::new(Shared {
            store,
            clock,
            http,
            backend,
            pause,
            slots: Mutex::new(HashMap::new()),
        }))
    }

    /// [`Scheduler::new`] with a fixed pause instead of the setting's (tests).
    pub fn with_pause(
        store: Store,
        clock: SharedClock,
        http: reqwest::Client,
        backend: BackendFn,
        pause: Duration,
    ) -> Self {
        Self::build(store, clock, http, backend, Some(pause))
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.0.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn pause(&self) -> Duration {
        self.0.pause.unwrap_or_else(|| {
            Duration::from_secs(super::config::load(&self.0.store).pause_minutes * 60)
        })
    }

    /// A turn of `preset_id` starts: stop its timer and any running extraction.
    pub fn turn_started(&self, preset_id: &str) {
        let mut slots = self.slots();
        let slot = slots.entry(preset_id.to_string()).or_default();
        slot.busy = true;
        if let Some(t) = slot.token.take() {
            t.cancel();
        }
    }

    /// A turn of `preset_id` ended: extract now if lines are about to leave the window, else
    /// after the pause. Needs a tokio runtime.
    pub fn turn_ended(&self, preset_id: &str) {
        self.slots().entry(preset_id.to_string()).or_default().busy = false;
        let due = window_due(&self.0.store, preset_id).unwrap_or(false);
        let delay = if due { Duration::ZERO } else { self.pause() };
        self.schedule(preset_id, delay);
    }

    /// Whether `preset_id` has a pending or running extraction.
    pub fn scheduled(&self, preset_id: &str) -> bool {
        self.slots()
            .get(preset_id)
            .is_some_and(|s| s.token.is_some())
    }

    fn schedule(&self, preset_id: &str, delay: Duration) {
        let token = CancellationToken::new();
        {
            let mut slots = self.slots();
            let slot = slots.entry(preset_id.to_string()).or_default();
            if slot.busy {
                return;
            }
            if let Some(old) = slot.token.replace(token.clone()) {
                old.cancel();
            }
        }
        let (me, id) = (self.clone(), preset_id.to_string());
        tokio::spawn(async move {
            tokio::select! {
                _ = token.cancelled() => return,
                _ = tokio::time::sleep(delay) => {}
            }
            let outcome = me.extract_once(&id, &token).await;
            let next = {
                let mut slots = me.slots();
                let slot = slots.entry(id.clone()).or_default();
                if slot.token.as_ref().is_some_and(|t| t.is_cancelled()) || token.is_cancelled() {
                    return; // a turn started: it schedules the next one when it ends
                }
                slot.token = None;
                match &outcome {
                    Ok(r) if r.lines >= extract::MAX_LINES => {
                        slot.failures = 0;
                        Some(Duration::ZERO)
                    }
                    Ok(_) => {
                        slot.failures = 0;
                        None
                    }
                    Err(_) => {
                        slot.failures = (slot.failures + 1).min(6);
                        Some(
                            (me.pause() * 2u32.pow(slot.failures - 1))
                                .min(Duration::from_secs(3600)),
                        )
                    }
                }
            };
            if let Some(d) = next {
                me.schedule(&id, d);
            }
        });
    }

    async fn extract_once(
        &self,
        preset_id: &str,
        token: &CancellationToken,
    ) -> Result<extract::Report> {
        let backend = (self.0.backend)(preset_id)?;
        let clock = self.0.clock.clone();
        let r = extract::run(
            &self.0.store,
            move || clock.now(),
            &self.0.http,
            &backend,
            preset_id,
            token,
        )
        .await;
        if r.is_ok() && !token.is_cancelled() {
            // Vectors for new and edited memories (all of them after a model change).
            if let Some(e) = super::config::load(&self.0.store).embeddings {
                let base = e.base_url.as_deref().unwrap_or(&backend.base_url);
                let key = backend.api_key.as_deref();
                match super::embed::backfill(&self.0.store, &self.0.http, base, key, &e.model).await
                {
                    Ok(n) if n > 0 => tracing::info!(preset = preset_id, n, "memories embedded"),
                    Ok(_) => {}
                    Err(err) => {
                        tracing::info!(error = %err.message, "embedding failed; retried after the next extraction")
                    }
                }
            }
        }
        match &r {
            Ok(rep) => tracing::info!(
                preset = preset_id,
                lines = rep.lines,
                added = rep.added.len(),
                updated = rep.updated.len(),
                deleted = rep.deleted.len(),
                "memories extracted"
            ),
            Err(e) => {
                tracing::info!(preset = preset_id, error = %e.message, "extraction failed; retried later")
            }
        }
        r
    }
}
