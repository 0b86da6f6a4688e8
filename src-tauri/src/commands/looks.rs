//! Look commands (settings → Characters, the look picker): the looks a character can take, a
//! look's images for the previews, and copying a sprite folder into the data dir. Each delegates
//! to the core (`yui_core::looks`, `sprites`); the picker saves a look with `preset_update`.

use crate::error::CmdResult;
use crate::state::AppState;
use serde_json::Value;
use tauri::State;
use yui_core::looks::{self, LookOption, PackImport};
use yui_core::presets::{self, Preset};
use yui_core::sprites::{self, SpriteSet};
use yui_core::vocab;

/// The looks preset `id` can take (built-in palettes, its card's picture and pack, its folder);
/// without an id, the looks a new character can take (the palettes).
#[tauri::command]
pub async fn look_options(
    state: State<'_, AppState>,
    id: Option<String>,
) -> CmdResult<Vec<LookOption>> {
    match id {
        Some(id) => {
            let preset = presets::get(&state.store, &id)?;
            Ok(looks::offer(&state.paths.data_dir, &preset))
        }
        None => Ok(looks::offer_new()),
    }
}

/// The images of a look, as a character window would get them (`null` for a built-in palette).
#[tauri::command]
pub async fn look_preview(
    state: State<'_, AppState>,
    avatar: Value,
) -> CmdResult<Option<SpriteSet>> {
    presets::check_avatar(&avatar)?;
    sprites::for_avatar(&avatar, &vocab::load(&state.store)?)
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
