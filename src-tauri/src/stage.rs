//! The shell's end of the core's [`Stage`]: it is created on first use with the app's store, and
//! one task forwards every [`StageEvent`] to the window of the preset it names. Nothing here
//! decides whose turn runs, when speech plays or who answers whom: the stage does.
//!
//! - A turn the user typed streams over the IPC channel its window passed to `turn_start`
//!   (registered before the turn's first event can leave the core).
//! - A phone's turn also plays on the character's own window, and an addressed turn (another
//!   character spoke to this one) plays there alone: both as `yui://character-turn`
//!   `{preset_id, turn_id, origin, event}`.
//! - `yui://character-addressed`, `yui://playback-finished` and `yui://relations-changed` go to
//!   every window; `yui://connection` `{preset_id, state}` (push) too, for the quick controls.
//! - When the stage goes idle the process trims its allocator after a quiet spell
//!   ([`yui_core::memory::Trimmer`]); a turn's event before then postpones it.

use crate::state::AppState;
use crate::windows::{self, BridgeEvent, WindowLabel};
use std::collections::HashMap;
use std::sync::Mutex;
use tauri::ipc::Channel;
use tauri::{AppHandle, Emitter, Manager, Runtime, State};
use yui_core::memory::Trimmer;
use yui_core::stage::{Origin, Stage, StageEvent, StageOptions};
use yui_core::turn::TurnEvent;
use yui_core::WindowKind;

/// The stage and where each running user turn's events go.
pub struct Shell {
    pub stage: Stage,
    /// Turn id → the channel of the window that started it.
    channels: Mutex<HashMap<String, Channel<TurnEvent>>>,
    /// Turn id → the character window label its events also go to (looked up once per turn).
    targets: Mutex<HashMap<String, Option<String>>>,
}

impl Shell {
    fn channels(&self) -> std::sync::MutexGuard<'_, HashMap<String, Channel<TurnEvent>>> {
        self.channels.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Send the turn's events to `channel` from its first event on.
    pub fn register(&self, turn_id: &str, channel: Channel<TurnEvent>) {
        self.channels().insert(turn_id.to_string(), channel);
    }
}

/// The app's stage, created (with its forwarder) on first use.
pub fn shell<R: Runtime>(app: &AppHandle<R>) -> State<'_, Shell> {
    if app.try_state::<Shell>().is_none() {
        let state = app.state::<AppState>();
        let (stage, mut rx) = Stage::new(
            state.store.clone(),
            state.clock.clone(),
            state.paths.clone(),
            StageOptions::default(),
        );
        let fresh = Shell {
            stage,
            channels: Mutex::new(HashMap::new()),
            targets: Mutex::new(HashMap::new()),
        };
        // Gives the allocator's free pages back once the turns have ended (`yui_core::memory`).
        let trimmer = Trimmer::new();
        if app.manage(fresh) {
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                while let Some(ev) = rx.recv().await {
                    trimmer.observe(&ev);
                    forward(&app, ev);
                }
            });
        }
    }
    app.state::<Shell>()
}

fn forward<R: Runtime>(app: &AppHandle<R>, ev: StageEvent) {
    match ev {
        StageEvent::Turn {
            preset_id,
            turn_id,
            window,
            origin,
            event,
        } => turn_event(app, preset_id, turn_id, window, origin, event),
        StageEvent::PlaybackFinished { preset_id, turn_id } => windows::emit(
            app,
            BridgeEvent::PlaybackFinished,
            serde_json::json!({ "preset_id": preset_id, "turn_id": turn_id }),
        ),
        StageEvent::RelationsChanged => crate::commands::relations::notify(app),
        ev @ StageEvent::CharacterAddressed { .. } => {
            windows::emit(app, BridgeEvent::CharacterAddressed, payload(&ev))
        }
        ev @ StageEvent::Connection { .. } => {
            windows::emit(app, BridgeEvent::Connection, payload(&ev))
        }
        StageEvent::Idle => {}
        StageEvent::Mic { status } => crate::commands::mic::notify(app, &status),
        ev @ StageEvent::Heard { .. } => windows::emit(app, BridgeEvent::Heard, payload(&ev)),
    }
}

/// The event's fields without its `type` tag.
fn payload(ev: &StageEvent) -> serde_json::Value {
    let mut v = serde_json::to_value(ev).unwrap_or_default();
    if let Some(m) = v.as_object_mut() {
        m.remove("type");
    }
    v
}

fn turn_event<R: Runtime>(
    app: &AppHandle<R>,
    preset_id: String,
    turn_id: String,
    window: WindowKind,
    origin: Origin,
    event: TurnEvent,
) {
    let shell = shell(app);
    let end = matches!(event, TurnEvent::TurnEnd { .. });
    let channel = {
        let mut channels = shell.channels();
        if end {
            channels.remove(&turn_id)
        } else {
            channels.get(&turn_id).cloned()
        }
    };
    // The character's own window plays phone and addressed turns (its own turns have a channel).
    let on_character = window == WindowKind::Phone || channel.is_none();
    if on_character {
        let label = {
            let mut targets = shell.targets.lock().unwrap_or_else(|p| p.into_inner());
            let label = targets
                .entry(turn_id.clone())
                .or_insert_with(|| match window {
                    WindowKind::Main => Some(WindowLabel::Main.as_label()),
                    _ => yui_core::presets::get(&app.state::<AppState>().store, &preset_id)
                        .ok()
                        .map(|p| windows::label_for(&p).as_label()),
                })
                .clone();
            if end {
                targets.remove(&turn_id);
            }
            label
        };
        if let Some(label) = label {
            let payload = serde_json::json!({
                "preset_id": preset_id,
                "turn_id": turn_id,
                "origin": origin,
                "event": event,
            });
            if let Err(e) = app.emit_to(label.as_str(), BridgeEvent::CharacterTurn.name(), payload)
            {
                tracing::debug!(label, error = %e, "a turn event for a closed window");
            }
        }
    }
    if let Some(channel) = channel {
        if let Err(e) = channel.send(event) {
            // The window went away: stop the turn rather than talk to no one.
            tracing::info!(turn = %turn_id, error = %e, "turn channel closed; stopping");
            shell.channels().remove(&turn_id);
            shell.stage.stop(&preset_id);
        }
    }
}
