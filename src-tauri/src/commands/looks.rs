//! Look commands (settings → Characters, the look picker): the looks a character can take, a
//! look's images for the previews, and copying a sprite folder into the data dir. Each delegates
//! to the core (`yui_core::looks`, `sprites`); the picker saves a look with `preset_update`.

use crate::error::CmdResult;
use crate::state::AppState;
use serde_json::Value;
use tauri::State;
use yui_core::looks::{self, LookOption, PackImport};
use yui_core::presets::Preset;
use yui_core::sprites::SpriteSet;

/// The looks preset `id` can take (built-in palettes, its card's picture and pack, its folder);
/// without an id, the looks a new character can take (the palettes).
#[tauri::command]
pub async fn look_options(
    state: State<'_, AppState>,
    id: Option<String>,
) -> CmdResult<Vec<LookOption>> {
    looks::offer_for(&state.store, &state.paths.data_dir, id.as_deref())
}

/// The images of a look, as a character window would get them (`null` for a built-in palette).
#[tauri::command]
pub async fn look_preview(
    state: State<'_, AppState>,
    avatar: Value,
) -> CmdResult<Option<SpriteSet>> {
    looks::preview(&state.store, &avatar)
}

/// Copy a sprite folder (an expression pack) into preset `id`'s look, scaled, and make it the
/// character's look (over its card's picture, if it has one).
#[tauri::command]
pub async fn look_import_folder(
    state: State<'_, AppState>,
    id: String,
    dir: String,
) -> CmdResult<(Preset, PackImport)> {
    looks::use_folder(state.store.clone(), state.paths.data_dir.clone(), id, dir).await
}
