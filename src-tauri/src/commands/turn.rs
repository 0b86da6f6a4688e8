//! Turn commands: `turn_start` runs one turn of the calling character (or phone) window's preset
//! on the core's stage and streams its events (`speech`, `cue`, …, `turn_end`) unchanged over the
//! window's IPC channel; `turn_stop` stops it. The stage runs everything else (playback, voice,
//! the addressed turns that follow); `stage.rs` forwards its events.

use crate::error::CmdResult;
use crate::windows;
use tauri::ipc::Channel;
use tauri::{Manager, Runtime, WebviewWindow};
use yui_core::turn::TurnEvent;
use yui_core::CoreError;

const NOT_CHARACTER: &str = "turns run in character and phone windows only";

/// Start a turn with the user's `text`; returns the turn id. Events arrive on `on_event`.
#[tauri::command]
pub async fn turn_start<R: Runtime>(
    window: WebviewWindow<R>,
    text: String,
    on_event: Channel<TurnEvent>,
) -> CmdResult<String> {
    let label = windows::turn_label(&window, NOT_CHARACTER)?;
    let kind = label
        .kind()
        .ok_or_else(|| CoreError::invalid(NOT_CHARACTER))?;
    let preset = windows::preset_for(window.app_handle(), &label)?;
    let shell = crate::stage::shell(window.app_handle());
    shell
        .stage
        .user_turn_with(&preset.id, kind, &text, |turn_id| {
            shell.register(turn_id, on_event.clone())
        })
}

/// Each open character's push connection state (quick controls; empty on other transports).
#[tauri::command]
pub async fn push_connections<R: Runtime>(
    app: tauri::AppHandle<R>,
) -> CmdResult<Vec<yui_core::stage::Connection>> {
    Ok(crate::stage::shell(&app).stage.connections())
}

/// Stop the calling window's character's turn (it ends `stopped`). Returns whether one was
/// running.
#[tauri::command]
pub async fn turn_stop<R: Runtime>(window: WebviewWindow<R>) -> CmdResult<bool> {
    let label = windows::turn_label(&window, NOT_CHARACTER)?;
    let preset = windows::preset_for(window.app_handle(), &label)?;
    Ok(crate::stage::shell(window.app_handle())
        .stage
        .stop(&preset.id))
}
