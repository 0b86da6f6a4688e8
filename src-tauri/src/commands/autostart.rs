//! Start with the desktop (settings window only): read and flip `yui.autostart`, which writes or
//! removes the XDG autostart entry for this program (`yui_core::autostart`).

use crate::error::CmdResult;
use crate::state::AppState;
use tauri::State;
use yui_core::autostart::{Autostart, Status};
use yui_core::CoreError;

fn this_app() -> Result<Autostart, CoreError> {
    let exe = std::env::current_exe()
        .map_err(|e| CoreError::internal(format!("cannot tell where YUI runs from: {e}")))?;
    Autostart::for_user(&exe)
}

#[tauri::command]
pub async fn autostart_get(state: State<'_, AppState>) -> CmdResult<Status> {
    this_app()?.status(&state.store)
}

#[tauri::command]
pub async fn autostart_set(state: State<'_, AppState>, enabled: bool) -> CmdResult<Status> {
    this_app()?.set(&state.store, enabled)
}

/// At start: an enabled entry whose program moved points at this one again (never removes one).
pub fn reconcile_at_start(state: &AppState) {
    match this_app().and_then(|a| a.reconcile(&state.store)) {
        Ok(s) if s.enabled => tracing::info!(entry = %s.entry.display(), "starts with the desktop"),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e.message, "autostart entry not checked"),
    }
}
