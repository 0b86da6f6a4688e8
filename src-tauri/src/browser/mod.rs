//! Browser commands (contract: client-tools.md, "browser"): `browser_run` runs backend-written
//! JavaScript in ego lite, in the task space `yui-<presetId>` of the calling character window's
//! preset; `browser_guide` returns the installed ego lite's guide. Both delegate to
//! `yui_core::tools::browser` in one line, which checks the `yui.browser` switch and the code
//! like a tool call and answers the contract's strings. The result crosses IPC as the bare string
//! or as `{text, images}` (JPEG data URLs); only a store failure is an `Err` (`CoreError`).
//!
//! Granted to the character windows (main and `pet-*`) alone, in `capabilities/character.json`.

use crate::error::CmdResult;
use crate::state::AppState;
use crate::windows;
use tauri::{Runtime, State, WebviewWindow};
use yui_core::tools::{browser, ToolOutput};
use yui_core::turn::CancellationToken;

/// Run `code` (the body of an async function) after the contract's prelude.
#[tauri::command]
pub async fn browser_run<R: Runtime>(
    window: WebviewWindow<R>,
    state: State<'_, AppState>,
    code: String,
) -> CmdResult<ToolOutput> {
    // Not tied to a turn: nothing here cancels it, so it ends with its result or the 32 s wait.
    browser::run(
        &state.store,
        &windows::calling_preset(&window, "browser runs in character windows only")?.id,
        &code,
        CancellationToken::new(),
    )
    .await
}

/// The installed ego lite's guide (`ego-browser skill`).
#[tauri::command]
pub async fn browser_guide(state: State<'_, AppState>) -> CmdResult<ToolOutput> {
    browser::guide(&state.store, CancellationToken::new()).await
}

/// At app start: delete every leftover `yui-browser-*` screenshot folder in the temp directory
/// (a script killed at the backstop can recreate one late). A failure is logged, never fatal.
pub fn cleanup_at_start() {
    match browser::cleanup_at_start() {
        Ok(0) => {}
        Ok(n) => tracing::info!(folders = n, "removed leftover browser screenshot folders"),
        Err(e) => tracing::warn!(error = %e, "removing leftover browser screenshot folders failed"),
    }
}
