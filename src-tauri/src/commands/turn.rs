//! Turn commands: `turn_start` runs one turn of the calling character (or phone) window's preset
//! on the core's stage and streams its events (`speech`, `cue`, …, `turn_end`) unchanged over the
//! window's IPC channel; `turn_stop` stops it. The stage runs everything else (playback, voice,
//! the addressed turns that follow); `stage.rs` forwards its events.

use crate::error::CmdResult;
use crate::windows;
use tauri::ipc::Channel;
use tauri::{Manager, Runtime, WebviewWindow};
use yui_core::stage::UserTurn;
use yui_core::turn::TurnEvent;

const NOT_CHARACTER: &str = "turns run in character and phone windows only";

/// Start a turn with the user's `text`; returns the turn id. Events arrive on `on_event`.
#[tauri::command]
pub async fn turn_start<R: Runtime>(
    window: WebviewWindow<R>,
    text: String,
    on_event: Channel<TurnEvent>,
) -> CmdResult<String> {
    crate::stage::shell(window.app_handle()).stage.user_turn(
        UserTurn::in_window(windows::turn_window(&window, NOT_CHARACTER)?, &text).streamed(
            Box::new(move |ev: &TurnEvent| on_event.send(ev.clone()).is_ok()),
        ),
    )
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
    crate::stage::shell(window.app_handle())
        .stage
        .stop_in(&windows::turn_window(&window, NOT_CHARACTER)?)
}
