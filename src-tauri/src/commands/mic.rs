//! The microphone (docs/voice.md, "Listening in the app"): each command is one call into the
//! core's stage (`yui_core::stage`, `mic.rs`), which opens the device, listens, transcribes and
//! starts the user's turn. Character windows hold push-to-talk (`mic_press` / `mic_release`) and
//! start hands-free listening (`mic_listen`); the badge, the quick controls and the tray stop it
//! (`mic_stop`); Settings → Voice reads and saves the listening settings (`voice_listen_get` /
//! `voice_listen_set`). Every change reaches every window as `yui://mic` (the core's
//! `MicStatus`, forwarded by stage.rs), and the tray's item follows it.

use crate::error::CmdResult;
use crate::settings_window::ListenView;
use crate::state::AppState;
use crate::windows;
use serde_json::Value;
use tauri::{AppHandle, Manager, Runtime, State, WebviewWindow};
use yui_core::stage::MicStatus;

const NOT_CHARACTER: &str = "the microphone listens for character windows only";

/// Push-to-talk held in this character's window (a key or the mouse on the character).
#[tauri::command]
pub async fn mic_press<R: Runtime>(window: WebviewWindow<R>) -> CmdResult<MicStatus> {
    crate::stage::shell(window.app_handle())
        .stage
        .mic_press(windows::turn_window(&window, NOT_CHARACTER)?)
}

/// Push-to-talk let go: what was said becomes this window's message. Whether a hold was open.
#[tauri::command]
pub async fn mic_release<R: Runtime>(app: AppHandle<R>) -> CmdResult<bool> {
    Ok(crate::stage::shell(&app).stage.mic_release())
}

/// Hands-free listening for this character's window.
#[tauri::command]
pub async fn mic_listen<R: Runtime>(window: WebviewWindow<R>) -> CmdResult<MicStatus> {
    crate::stage::shell(window.app_handle())
        .stage
        .mic_listen(windows::turn_window(&window, NOT_CHARACTER)?)
}

/// Stop the microphone (one click). Whether it was live.
#[tauri::command]
pub async fn mic_stop<R: Runtime>(app: AppHandle<R>) -> CmdResult<bool> {
    Ok(crate::stage::shell(&app).stage.mic_stop())
}

/// The microphone now.
#[tauri::command]
pub async fn mic_status<R: Runtime>(app: AppHandle<R>) -> CmdResult<MicStatus> {
    Ok(crate::stage::shell(&app).stage.mic_status())
}

#[tauri::command]
pub async fn voice_listen_get<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    devices: Option<bool>,
) -> CmdResult<ListenView> {
    crate::settings_window::listen_view(&app, &state.store, devices == Some(true)).await
}

/// Save `yui.voice.listen` and `yui.voice.stt` (each checked by the core), take the global
/// shortcut, and follow the mode (hands-free starts listening for the main character).
#[tauri::command]
pub async fn voice_listen_set<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    listen: Value,
    stt: Value,
) -> CmdResult<ListenView> {
    crate::settings_window::save_listen(&app, &state.store, &listen, &stt).await
}
