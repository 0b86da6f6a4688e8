//! Preset commands: list, open and close characters. Opening or closing a preset also opens or
//! closes its window, and every window hears `yui://presets-changed`.

use crate::error::CmdResult;
use crate::state::AppState;
use crate::windows::{self, BridgeEvent};
use tauri::{AppHandle, Runtime, State};
use yui_core::presets::{self, Preset};

#[tauri::command]
pub async fn preset_list(state: State<'_, AppState>) -> CmdResult<Vec<Preset>> {
    presets::list(&state.store)
}

#[tauri::command]
pub async fn preset_open<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    id: String,
) -> CmdResult<Preset> {
    let (preset, slot) = presets::open_with_slot(&state.store, &id)?;
    windows::open_character(&app, &preset, slot)?;
    changed(&app, &state);
    Ok(preset)
}

#[tauri::command]
pub async fn preset_close<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    id: String,
) -> CmdResult<Preset> {
    let preset = presets::close(&state.store, &id)?;
    windows::close_character(&app, &preset)?;
    changed(&app, &state);
    Ok(preset)
}

fn changed<R: Runtime>(app: &AppHandle<R>, state: &AppState) {
    match presets::list(&state.store) {
        Ok(list) => windows::emit(app, BridgeEvent::PresetsChanged, list),
        Err(e) => tracing::warn!(error = %e.message, "reading presets after a change failed"),
    }
}
