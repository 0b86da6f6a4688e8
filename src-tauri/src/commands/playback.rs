//! Playback of replies: speaking them (voice switch) and the "playback finished" report.
//!
//! The window reports `playback_bubble_done(turn_id)` once the bubble shows the whole reply; the
//! speaker reports when speech has ended; the core's [`PlaybackTracker`] combines both, and every
//! window hears `yui://playback-finished` `{turn_id}`. The shell's turn loop drives the speech with
//! a [`Voicing`]: `begin` when the turn starts, `observe` every event, `finish` after the last.
//! `voice_stop` stops the calling window's speech (Escape).
//!
//! The state is managed lazily on first use, so nothing else in the shell has to set it up.

use crate::error::CmdResult;
use crate::windows::{self, BridgeEvent};
use std::collections::HashMap;
use std::sync::Mutex;
use tauri::{AppHandle, Manager, Runtime, State, WebviewWindow};
use yui_core::playback::PlaybackTracker;
use yui_core::turn::{CancellationToken, TurnEvent, TurnStatus};
use yui_core::voice::{self, Script};
use yui_core::Store;

/// The tracker, and the speech running in each window (by window label).
#[derive(Default)]
pub struct Playback {
    pub tracker: PlaybackTracker,
    /// Window label → (speech generation, its stop token).
    speaking: Mutex<HashMap<String, (u64, CancellationToken)>>,
    generation: std::sync::atomic::AtomicU64,
}

impl Playback {
    fn speaking(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, CancellationToken)>> {
        self.speaking.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stop the speech of `label`; whether some was running.
    pub fn stop(&self, label: &str) -> bool {
        match self.speaking().remove(label) {
            Some((_, t)) => {
                t.cancel();
                true
            }
            None => false,
        }
    }
}

/// The shell's playback state, created (with its event forwarder) on first use.
pub fn playback<R: Runtime>(app: &AppHandle<R>) -> State<'_, Playback> {
    if app.try_state::<Playback>().is_none() && app.manage(Playback::default()) {
        let mut finished = app.state::<Playback>().tracker.subscribe();
        let app = app.clone();
        tauri::async_runtime::spawn(async move {
            use tokio::sync::broadcast::error::RecvError;
            loop {
                match finished.recv().await {
                    Ok(turn_id) => windows::emit(
                        &app,
                        BridgeEvent::PlaybackFinished,
                        serde_json::json!({ "turn_id": turn_id }),
                    ),
                    Err(RecvError::Lagged(n)) => tracing::warn!(n, "playback events dropped"),
                    Err(RecvError::Closed) => break,
                }
            }
        });
    }
    app.state::<Playback>()
}

/// Speech for one turn of one window.
pub struct Voicing {
    label: String,
    turn_id: String,
    script: Script,
    speech: bool,
    status: Option<TurnStatus>,
}

impl Voicing {
    /// A turn starts in window `label`: stop that window's earlier speech, read the voice switch,
    /// and tell the tracker whether speech will follow.
    pub fn begin<R: Runtime>(
        app: &AppHandle<R>,
        store: &Store,
        label: &str,
        turn_id: &str,
    ) -> Self {
        let pb = playback(app);
        pb.stop(label);
        let speech = voice::load(store).map(|v| v.enabled).unwrap_or(false);
        pb.tracker.begin(turn_id, speech);
        Self {
            label: label.to_string(),
            turn_id: turn_id.to_string(),
            script: Script::new(),
            speech,
            status: None,
        }
    }

    /// One turn event, in stream order.
    pub fn observe(&mut self, event: &TurnEvent) {
        if let TurnEvent::TurnEnd { status, .. } = event {
            self.status = Some(*status);
        }
        self.script.observe(event);
    }

    /// The turn ended: speak the reply (only a turn that ended `ok`), then report speech done.
    pub fn finish<R: Runtime>(self, app: &AppHandle<R>, store: Store) {
        if !self.speech {
            return;
        }
        let pb = playback(app);
        if self.status != Some(TurnStatus::Ok) {
            pb.tracker.speech_done(&self.turn_id);
            return;
        }
        let cancel = CancellationToken::new();
        let generation = pb
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some((_, old)) = pb
            .speaking()
            .insert(self.label.clone(), (generation, cancel.clone()))
        {
            old.cancel();
        }
        let app = app.clone();
        tauri::async_runtime::spawn(async move {
            let outcome = voice::speak_reply(&store, &self.script, None, &cancel).await;
            tracing::debug!(turn = %self.turn_id, ?outcome, "speech ended");
            let pb = playback(&app);
            {
                let mut speaking = pb.speaking();
                if speaking
                    .get(&self.label)
                    .is_some_and(|(g, _)| *g == generation)
                {
                    speaking.remove(&self.label);
                }
            }
            pb.tracker.speech_done(&self.turn_id);
        });
    }
}

/// The window shows the whole reply of `turn_id` in its bubble.
#[tauri::command]
pub async fn playback_bubble_done<R: Runtime>(
    window: WebviewWindow<R>,
    turn_id: String,
) -> CmdResult<()> {
    playback(window.app_handle()).tracker.bubble_done(&turn_id);
    Ok(())
}

/// Stop the calling window's speech; whether some was running.
#[tauri::command]
pub async fn voice_stop<R: Runtime>(window: WebviewWindow<R>) -> CmdResult<bool> {
    Ok(playback(window.app_handle()).stop(window.label()))
}
