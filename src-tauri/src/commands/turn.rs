//! Turn commands: `turn_start` runs one turn of the calling character (or phone) window's preset
//! through the core's turn engine and streams its events (`speech`, `cue`, …, `turn_end`)
//! unchanged over the window's IPC channel; `turn_stop` stops it. A phone's turn is also
//! mirrored to the character's own window (commands/phone.rs).

use crate::error::CmdResult;
use crate::state::AppState;
use crate::windows;
use tauri::ipc::Channel;
use tauri::{Manager, Runtime, State, WebviewWindow};
use yui_core::turn::{self, TurnEvent};
use yui_core::CoreError;

const NOT_CHARACTER: &str = "turns run in character and phone windows only";

/// Start a turn with the user's `text`; returns the turn id. Events arrive on `on_event`.
#[tauri::command]
pub async fn turn_start<R: Runtime>(
    window: WebviewWindow<R>,
    state: State<'_, AppState>,
    text: String,
    on_event: Channel<TurnEvent>,
) -> CmdResult<String> {
    let label = windows::turn_label(&window, NOT_CHARACTER)?;
    let kind = label
        .kind()
        .ok_or_else(|| CoreError::invalid(NOT_CHARACTER))?;
    let preset = windows::preset_for(window.app_handle(), &label)?;
    let mut handle = turn::start_configured(
        &state.store,
        &state.clock,
        &state.paths,
        &preset.id,
        kind,
        &text,
    )?;
    let turn_id = handle.turn_id.clone();
    state.begin_turn(&label, turn_id.clone(), handle.stopper());

    let app = window.app_handle().clone();
    let id = turn_id.clone();
    // Speech and the "playback finished" report (commands/playback.rs).
    let mut voicing =
        crate::commands::playback::Voicing::begin(&app, &state.store, window.label(), &turn_id);
    let store = state.store.clone();
    let mirror = crate::commands::phone::Mirror::for_turn(&app, &label, &preset, &turn_id);
    tauri::async_runtime::spawn(async move {
        while let Some(event) = handle.events.recv().await {
            crate::commands::relations::after_turn_event(&app, &event);
            voicing.observe(&event);
            mirror.send(&app, &event);
            if let Err(e) = on_event.send(event) {
                // The window went away: stop the turn rather than talk to no one.
                tracing::info!(turn = %id, error = %e, "turn channel closed; stopping");
                handle.stop();
            }
        }
        voicing.finish(&app, store);
        app.state::<AppState>().end_turn(&label, &id);
    });
    Ok(turn_id)
}

/// Stop the calling window's turn (it ends `stopped`). Returns whether one was running.
#[tauri::command]
pub async fn turn_stop<R: Runtime>(
    window: WebviewWindow<R>,
    state: State<'_, AppState>,
) -> CmdResult<bool> {
    Ok(state.stop_turn(&windows::turn_label(&window, NOT_CHARACTER)?))
}
