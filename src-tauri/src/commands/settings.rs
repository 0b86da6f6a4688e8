//! Settings commands. `switches_get`/`switch_set` serve every window that shows a switch;
//! `settings_*` and `backend_*` are granted to the settings window alone (see `capabilities/`).
//! The API key only ever travels *to* the core: no command returns it.

use crate::error::CmdResult;
use crate::state::AppState;
use crate::windows::{self, BridgeEvent};
use serde_json::Value;
use tauri::{AppHandle, Runtime, State};
use yui_core::backend::{self, BackendChange, BackendView, KeyStorage, Secrets};
use yui_core::settings::{self, Switches};

#[tauri::command]
pub async fn switches_get(state: State<'_, AppState>) -> CmdResult<Switches> {
    settings::switches(&state.store)
}

/// Flip one switch, by its settings key (`yui.browser`, `yui.relations`, `yui.screen`); every
/// window hears the new states.
#[tauri::command]
pub async fn switch_set<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    key: String,
    enabled: bool,
) -> CmdResult<Switches> {
    let now = settings::set_switch(&state.store, &key, enabled)?;
    windows::emit(&app, BridgeEvent::SwitchesChanged, now);
    Ok(now)
}

#[tauri::command]
pub async fn settings_get(state: State<'_, AppState>, key: String) -> CmdResult<Value> {
    settings::get(&state.store, &key)
}

/// Write any known key (refused for an unknown one). A switch or the vocabulary written here
/// sends the same change events as `switch_set` and `vocab_set`.
#[tauri::command]
pub async fn settings_set<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    key: String,
    value: Value,
) -> CmdResult<()> {
    settings::set(&state.store, &key, &value)?;
    announce(&app, &state, &key)
}

/// The change event of `key`, as the dedicated command sends it.
fn announce<R: Runtime>(app: &AppHandle<R>, state: &AppState, key: &str) -> CmdResult<()> {
    if settings::SWITCHES.contains(&key) {
        windows::emit(
            app,
            BridgeEvent::SwitchesChanged,
            settings::switches(&state.store)?,
        );
    } else if key == settings::VOCAB {
        let vocab = yui_core::vocab::load(&state.store)?;
        windows::emit(
            app,
            BridgeEvent::VocabChanged,
            yui_core::vocab::CharacterVocab::from(&vocab),
        );
    }
    Ok(())
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
