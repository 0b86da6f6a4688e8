//! Preset commands: list, open and close characters, and (settings) create, edit, delete, import
//! and choose the main one. Opening, creating or deleting a preset also opens or closes its
//! window, and every window hears `yui://presets-changed`.

use crate::error::CmdResult;
use crate::state::AppState;
use crate::windows::{self, BridgeEvent};
use tauri::{AppHandle, Runtime, State};
use yui_core::cards;
use yui_core::looks::{self, CardImport, Imported};
use yui_core::presets::{self, Deleted, NewPreset, Preset, PresetUpdate};

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

/// Create a character (settings → Characters); it opens on the desktop at once.
#[tauri::command]
pub async fn preset_create<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    preset: NewPreset,
) -> CmdResult<Preset> {
    let created = presets::create(
        &state.store,
        &NewPreset {
            open: true,
            ..preset
        },
    )?;
    shown(&app, &state, created)
}

/// Import a character card (the file's bytes as base64) with its picture; it opens on the
/// desktop at once. The webview gives no file path, so a picture the card names by file (and a
/// pack beside it) is for `yui preset import`; the result's notes say so.
#[tauri::command]
pub async fn preset_import<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    data: String,
) -> CmdResult<Imported> {
    let bytes = cards::decode_base64(&data)?;
    let mut imported = looks::import_card(
        &state.store,
        &state.paths.data_dir,
        &CardImport {
            bytes: &bytes,
            open: true,
            card_dir: None,
            sprites: None,
        },
    )?;
    imported.preset = shown(&app, &state, imported.preset)?;
    Ok(imported)
}

/// Change a character's name, persona, look or voice.
#[tauri::command]
pub async fn preset_update<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    id: String,
    change: PresetUpdate,
) -> CmdResult<Preset> {
    let preset = presets::update(&state.store, &id, &change)?;
    changed(&app, &state);
    Ok(preset)
}

/// Delete a character with its history (the settings page asked first); its windows close.
#[tauri::command]
pub async fn preset_delete<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    id: String,
) -> CmdResult<Deleted> {
    let gone = presets::delete(&state.store, &id)?;
    looks::remove(&state.paths.data_dir, &id);
    windows::close_character(&app, &gone.preset)?;
    windows::close_phone(&app, &gone.preset.id)?;
    changed(&app, &state);
    Ok(gone)
}

/// Make `id` the main character: the character windows are rebuilt, since the main window shows
/// whichever preset is main.
#[tauri::command]
pub async fn preset_set_main<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    id: String,
) -> CmdResult<Preset> {
    let before = presets::list(&state.store)?;
    let preset = presets::set_main(&state.store, &id)?;
    windows::rebuild_characters(&app, &before)?;
    changed(&app, &state);
    Ok(preset)
}

/// Open the new preset's window in the next free slot and tell every window.
fn shown<R: Runtime>(app: &AppHandle<R>, state: &AppState, preset: Preset) -> CmdResult<Preset> {
    let slot = presets::list_open(&state.store)?.len().saturating_sub(1);
    windows::open_character(app, &preset, slot)?;
    changed(app, state);
    Ok(preset)
}

fn changed<R: Runtime>(app: &AppHandle<R>, state: &AppState) {
    match presets::list(&state.store) {
        Ok(list) => windows::emit(app, BridgeEvent::PresetsChanged, list),
        Err(e) => tracing::warn!(error = %e.message, "reading presets after a change failed"),
    }
}
