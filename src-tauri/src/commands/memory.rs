//! Long-term memory commands (Settings → Memory; docs/memory.md), granted to the settings window
//! alone. Each delegates to `yui_core::longterm` in one line.

use crate::error::CmdResult;
use crate::state::AppState;
use std::path::PathBuf;
use tauri::State;
use yui_core::longterm::{self, export::Saved, Edit, Memory, Overview};

/// Memories the search box shows at most.
const SEARCH_LIMIT: usize = 50;

/// A character's memories, the last turn's recall and its pause switch.
#[tauri::command]
pub async fn memory_overview(state: State<'_, AppState>, preset: String) -> CmdResult<Overview> {
    longterm::overview(&state.store, &preset)
}

/// Memories best matching `query`.
#[tauri::command]
pub async fn memory_search(
    state: State<'_, AppState>,
    preset: String,
    query: String,
) -> CmdResult<Vec<Memory>> {
    longterm::search_memories(&state.store, &preset, &query, SEARCH_LIMIT)
}

/// Change a memory's text, kind, importance or pin.
#[tauri::command]
pub async fn memory_edit(state: State<'_, AppState>, id: i64, edit: Edit) -> CmdResult<Memory> {
    longterm::edit(&state.store, state.clock.now(), id, &edit)
}

/// Forget one memory (row, index entries and vector).
#[tauri::command]
pub async fn memory_forget(state: State<'_, AppState>, id: i64) -> CmdResult<Memory> {
    longterm::forget(&state.store, id)
}

/// Forget every memory of a character; how many.
#[tauri::command]
pub async fn memory_forget_all(state: State<'_, AppState>, preset: String) -> CmdResult<usize> {
    longterm::forget_all(&state.store, &preset)
}

/// Save every memory of a character as one JSON file: to `path` (a file, or a folder for a dated
/// file in it), or to the Downloads folder; where it went.
#[tauri::command]
pub async fn memory_export(
    state: State<'_, AppState>,
    preset: String,
    path: Option<String>,
) -> CmdResult<Saved> {
    let to = path.filter(|p| !p.trim().is_empty()).map(PathBuf::from);
    longterm::export::save(&state.store, state.clock.now(), &preset, to.as_deref())
}

/// Pause or resume remembering for a character.
#[tauri::command]
pub async fn memory_pause(
    state: State<'_, AppState>,
    preset: String,
    paused: bool,
) -> CmdResult<Overview> {
    longterm::set_paused(&state.store, &preset, paused)
}
