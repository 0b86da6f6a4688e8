//! Configured tool commands for the settings window's "Tools" section (settings window only,
//! see `capabilities/settings.json`): the report of every command tool and MCP server with its
//! state and diagnostics and each character's selection, "Reload tools", and one checkbox per
//! character. Each delegates to `yui_core::tools::configured`.

use crate::error::CmdResult;
use crate::state::AppState;
use serde_json::Value;
use tauri::State;
use yui_core::tools::configured;

/// The definitions read last, their diagnostics, and who declares what.
#[tauri::command]
pub async fn tools_list(state: State<'_, AppState>) -> CmdResult<Value> {
    configured::report(&state.store)
}

/// Read the config files again (the MCP servers restart); the next turn declares what they give.
/// Returns the new report.
#[tauri::command]
pub async fn tools_reload(state: State<'_, AppState>) -> CmdResult<Value> {
    configured::reload(&state.store).await
}

/// Declare (or stop declaring) one configured tool for one character. Returns the new report.
#[tauri::command]
pub async fn tools_enable(
    state: State<'_, AppState>,
    preset: String,
    name: String,
    enabled: bool,
) -> CmdResult<Value> {
    configured::toggle_and_report(&state.store, &preset, &name, enabled)
}
