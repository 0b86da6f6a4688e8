//! Command client tool commands for the settings window's "Tools" section (settings window only,
//! see `capabilities/settings.json`): the report of every definition with its diagnostics and
//! each character's selection, "Reload tools", and one checkbox per character. Each delegates to
//! `yui_core::tools::command`.

use crate::error::CmdResult;
use crate::state::AppState;
use serde_json::Value;
use tauri::State;
use yui_core::tools::command::{self, select};

/// The definitions read last, their diagnostics, and who declares what.
#[tauri::command]
pub async fn tools_list(state: State<'_, AppState>) -> CmdResult<Value> {
    command::report(&state.store, &command::current())
}

/// Read the config file again; the next turn declares what it gives. Returns the new report.
#[tauri::command]
pub async fn tools_reload(state: State<'_, AppState>) -> CmdResult<Value> {
    let loaded = command::reload();
    command::report(&state.store, &loaded)
}

/// Declare (or stop declaring) one configured tool for one character. Returns the new report.
#[tauri::command]
pub async fn tools_enable(
    state: State<'_, AppState>,
    preset: String,
    name: String,
    enabled: bool,
) -> CmdResult<Value> {
    let loaded = command::current();
    select::toggle(&state.store, &loaded, &preset, &name, enabled)?;
    command::report(&state.store, &loaded)
}
