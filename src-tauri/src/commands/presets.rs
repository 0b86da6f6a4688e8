//! Preset commands: list, open and close characters, and (settings) create, edit, delete, import
//! and choose the main one. Opening, creating or deleting a preset also opens or closes its
//! window ([`crate::windows`]); every window hears `yui://presets-changed` from the core's stage.
//! The user's scale of every character's size (`yui.character.scale`) is read and set here too.

use crate::error::CmdResult;
use crate::state::AppState;
use crate::windows;
use tauri::{AppHandle, Runtime, State};
use yui_core::layout;
use yui_core::looks::{self, Imported};
use yui_core::presets::{self, Choices, Deleted, NewPreset, Preset, PresetUpdate};

#[tauri::command]
pub async fn preset_list(state: State<'_, AppState>) -> CmdResult<Vec<Preset>> {
    presets::list(&state.store)
}

/// What the character form offers: voice types, palettes, a new character's palette.
#[tauri::command]
pub async fn preset_choices(state: State<'_, AppState>) -> CmdResult<Choices> {
    presets::choices(&state.store)
}

#[tauri::command]
pub async fn preset_open<R: Runtime>(app: AppHandle<R>, id: String) -> CmdResult<Preset> {
    windows::open_preset(&app, &id)
}

#[tauri::command]
pub async fn preset_close<R: Runtime>(app: AppHandle<R>, id: String) -> CmdResult<Preset> {
    windows::close_preset(&app, &id)
}

/// Create a character (settings → Characters); it opens on the desktop at once.
#[tauri::command]
pub async fn preset_create<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    preset: NewPreset,
) -> CmdResult<Preset> {
    windows::show_new(&app, presets::create_open(&state.store, preset)?)
}

/// Import a character card (the file's bytes as base64) with its picture; it opens on the
/// desktop at once.
#[tauri::command]
pub async fn preset_import<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    data: String,
) -> CmdResult<Imported> {
    windows::show_imported(
        &app,
        looks::import_card_base64(&state.store, &state.paths.data_dir, &data)?,
    )
}

/// Change a character's name, persona, look or voice.
#[tauri::command]
pub async fn preset_update(
    state: State<'_, AppState>,
    id: String,
    change: PresetUpdate,
) -> CmdResult<Preset> {
    presets::update(&state.store, &id, &change)
}

/// Delete a character with its history (the settings page asked first); its windows close.
#[tauri::command]
pub async fn preset_delete<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    id: String,
) -> CmdResult<Deleted> {
    windows::close_deleted(
        &app,
        looks::delete_character(&state.store, &state.paths.data_dir, &id)?,
    )
}

/// Make `id` the main character: the character windows are rebuilt, since the main window shows
/// whichever preset is main.
#[tauri::command]
pub async fn preset_set_main<R: Runtime>(app: AppHandle<R>, id: String) -> CmdResult<Preset> {
    windows::set_main(&app, &id)
}

/// Settings → Characters: the size of every character, as a factor of the usual size.
#[tauri::command]
pub async fn character_scale_get(state: State<'_, AppState>) -> CmdResult<f64> {
    Ok(layout::scale(&state.store))
}

/// Keep a new size for every character (0.5–2, refused in one sentence otherwise); the
/// character windows are built again at it.
#[tauri::command]
pub async fn character_scale_set<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    scale: f64,
) -> CmdResult<f64> {
    windows::rescale(&app, layout::set_scale(&state.store, scale))
}
