//! Settings commands. `switches_get`/`switch_set` serve every window that shows a switch;
//! `backend_*` are granted to the settings window alone (see `capabilities/`). There is no
//! generic read/write of any settings key: no UI needs one (the smallest IPC surface). The API
//! key only ever travels *to* the core: no command returns it.

use crate::error::CmdResult;
use crate::state::AppState;
use tauri::State;
use yui_core::backend::{self, BackendChange, BackendView, KeyStorage, Secrets};
use yui_core::settings::{self, Switches};

#[tauri::command]
pub async fn switches_get(state: State<'_, AppState>) -> CmdResult<Switches> {
    settings::switches(&state.store)
}

/// Flip one switch, by its settings key (`yui.browser`, `yui.relations`, `yui.screen`); every
/// window hears the new states (the stage's `SwitchesChanged`).
#[tauri::command]
pub async fn switch_set(
    state: State<'_, AppState>,
    key: String,
    enabled: bool,
) -> CmdResult<Switches> {
    settings::set_switch(&state.store, &key, enabled)
}

/// The backend settings and whether an API key is stored (never the key itself).
#[tauri::command]
pub async fn backend_get(state: State<'_, AppState>) -> CmdResult<BackendView> {
    backend::view(&state.store, &state.paths)
}

/// Change base URL, model, transport or push URL; returns what is now in effect.
#[tauri::command]
pub async fn backend_set(
    state: State<'_, AppState>,
    change: BackendChange,
) -> CmdResult<BackendView> {
    backend::update_and_view(&state.store, &state.paths, &change)
}

/// Store the API key (OS keyring, else the labelled file fallback). Returns where it went, never
/// the key: no command sends a key back to a webview.
#[tauri::command]
pub async fn backend_set_key(state: State<'_, AppState>, key: String) -> CmdResult<KeyStorage> {
    Secrets::new(&state.paths).set_api_key(&key)
}
