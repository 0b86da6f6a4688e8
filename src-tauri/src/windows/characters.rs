//! What the preset commands do to windows once the core has made the change: a character opened,
//! closed, created, imported or deleted gets or loses its window; a new main character rebuilds
//! them. The core's stage hears of the windows from `crate::stage` and tells every window the new
//! presets list; nothing here tells the stage anything.

use super::build::{close_character, close_phone, open_character, rebuild_characters};
use crate::state::AppState;
use tauri::{AppHandle, Manager, Runtime};
use yui_core::looks::Imported;
use yui_core::presets::{self, Deleted, Preset};
use yui_core::CoreError;

fn store<R: Runtime>(app: &AppHandle<R>) -> yui_core::Store {
    app.state::<AppState>().store.clone()
}

/// Mark preset `id` open and open its window in the next free slot.
pub fn open_preset<R: Runtime>(app: &AppHandle<R>, id: &str) -> Result<Preset, CoreError> {
    let (preset, slot) = presets::open_with_slot(&store(app), id)?;
    open_character(app, &preset, slot)?;
    Ok(preset)
}

/// Mark preset `id` closed and close its window.
pub fn close_preset<R: Runtime>(app: &AppHandle<R>, id: &str) -> Result<Preset, CoreError> {
    let preset = presets::close(&store(app), id)?;
    close_character(app, &preset)?;
    Ok(preset)
}

/// Open a new (open) preset's window in the next free slot.
pub fn show_new<R: Runtime>(app: &AppHandle<R>, preset: Preset) -> Result<Preset, CoreError> {
    let slot = presets::list_open(&store(app))?.len().saturating_sub(1);
    open_character(app, &preset, slot)?;
    Ok(preset)
}

/// Open an imported card's window.
pub fn show_imported<R: Runtime>(
    app: &AppHandle<R>,
    mut imported: Imported,
) -> Result<Imported, CoreError> {
    imported.preset = show_new(app, imported.preset)?;
    Ok(imported)
}

/// Close a deleted preset's windows (its character window and its phone).
pub fn close_deleted<R: Runtime>(app: &AppHandle<R>, gone: Deleted) -> Result<Deleted, CoreError> {
    close_character(app, &gone.preset)?;
    close_phone(app, &gone.preset.id)?;
    Ok(gone)
}

/// Make `id` the main character and rebuild the character windows.
pub fn set_main<R: Runtime>(app: &AppHandle<R>, id: &str) -> Result<Preset, CoreError> {
    let store = store(app);
    let before = presets::list(&store)?;
    let preset = presets::set_main(&store, id)?;
    rebuild_characters(app, &before)?;
    Ok(preset)
}

/// The user's scale of the characters' size changed (`scale`, from the core): the character
/// windows are built again at their new size, their pages drawing the character at it.
pub fn rescale<R: Runtime>(
    app: &AppHandle<R>,
    scale: Result<f64, CoreError>,
) -> Result<f64, CoreError> {
    let scale = scale?;
    rebuild_characters(app, &presets::list(&store(app))?)?;
    Ok(scale)
}
