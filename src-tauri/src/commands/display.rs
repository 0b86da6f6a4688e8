//! How YUI shows its windows (settings window only): the backend chosen at start and why, and
//! `yui.display.backend`, read at the next start (`crate::display`, `yui_core::display`).

use crate::display::{self, DisplayView};
use crate::error::CmdResult;
use crate::state::AppState;
use tauri::State;

#[tauri::command]
pub async fn display_get(state: State<'_, AppState>) -> CmdResult<DisplayView> {
    display::view(&state.store)
}

#[tauri::command]
pub async fn display_set(state: State<'_, AppState>, backend: String) -> CmdResult<DisplayView> {
    display::set_preference(&state.store, &backend)
}
