//! Settings → Backend's realtime panel (settings window only): read and write `yui.realtime`
//! (voice, turn detection, transcription model) through the core's one typed declaration
//! (`yui_core::backend::realtime`); a change makes the characters' realtime sessions again so
//! the next `session.update` carries it.

use crate::error::CmdResult;
use crate::state::AppState;
use serde_json::Value;
use tauri::{AppHandle, Runtime, State};
use yui_core::backend::realtime::{self, View};

#[tauri::command]
pub async fn realtime_settings_get(state: State<'_, AppState>) -> CmdResult<View> {
    Ok(realtime::view(&state.store))
}

/// Store the panel's values (refused in plain words, storing nothing, when one is not valid).
/// The sessions are made again with them (`Stage::realtime_settings_set`).
#[tauri::command]
pub async fn realtime_settings_set<R: Runtime>(
    app: AppHandle<R>,
    settings: Value,
) -> CmdResult<View> {
    crate::stage::shell(&app)
        .stage
        .realtime_settings_set(&settings)
}
