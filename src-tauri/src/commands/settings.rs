//! Settings commands. `switches_get`/`switch_set` serve every window that shows a switch;
//! `settings_*` and `backend_*` are granted to the settings window alone (see `capabilities/`).
//! The API key only ever travels *to* the core: no command returns it.

use crate::error::CmdResult;
use crate::state::AppState;
use crate::windows::{self, BridgeEvent};
use serde::Serialize;
use serde_json::{json, Value};
use tauri::{AppHandle, Runtime, State};
use yui_core::backend::{self, BackendChange, BackendView, KeyStorage, Secrets};
use yui_core::settings;
use yui_core::CoreError;

/// The device-wide switches, as the UI shows them.
#[derive(Debug, Clone, Serialize)]
pub struct Switches {
    pub browser: bool,
    pub relations: bool,
    pub screen: bool,
}

fn read_switches(state: &AppState) -> CmdResult<Switches> {
    Ok(Switches {
        browser: settings::switch_on(&state.store, settings::BROWSER)?,
        relations: settings::switch_on(&state.store, settings::RELATIONS)?,
        screen: settings::switch_on(&state.store, settings::SCREEN)?,
    })
}

#[tauri::command]
pub async fn switches_get(state: State<'_, AppState>) -> CmdResult<Switches> {
    read_switches(&state)
}

/// Flip one switch, by its settings key (`yui.browser`, `yui.relations`, `yui.screen`).
#[tauri::command]
pub async fn switch_set<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    key: String,
    enabled: bool,
) -> CmdResult<Switches> {
    if ![settings::BROWSER, settings::RELATIONS, settings::SCREEN].contains(&key.as_str()) {
        return Err(CoreError::invalid(format!("{key:?} is not a switch")));
    }
    settings::set(&state.store, &key, &json!({ "enabled": enabled }))?;
    let now = read_switches(&state)?;
    windows::emit(&app, BridgeEvent::SwitchesChanged, now.clone());
    Ok(now)
}

#[tauri::command]
pub async fn settings_get(state: State<'_, AppState>, key: String) -> CmdResult<Value> {
    settings::get(&state.store, &key)
}

#[tauri::command]
pub async fn settings_set(state: State<'_, AppState>, key: String, value: Value) -> CmdResult<()> {
    settings::set(&state.store, &key, &value)
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
    backend::update(&state.store, &change)?;
    backend::view(&state.store, &state.paths)
}

/// Store the API key (OS keyring, else the labelled file fallback). Returns where it went, never
/// the key: no command sends a key back to a webview.
#[tauri::command]
pub async fn backend_set_key(state: State<'_, AppState>, key: String) -> CmdResult<KeyStorage> {
    Secrets::new(&state.paths).set_api_key(&key)
}
