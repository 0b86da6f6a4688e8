//! Settings → Backend's helpers and the first-run greeting: find local model servers, list a
//! server's models, test the connection (`yui doctor`'s checks), and the main character's first
//! words. Each delegates to yui-core (`discover`, `doctor`, `firstrun`).

use crate::error::CmdResult;
use crate::state::AppState;
use serde_json::Value;
use tauri::{Runtime, State, WebviewWindow};
use yui_core::discover::{self, Found};
use yui_core::doctor::{self, Overrides};
use yui_core::firstrun::{self, Greeting};

/// Probe the usual local servers ("Find").
#[tauri::command]
pub async fn backend_find() -> CmdResult<Vec<Found>> {
    Ok(discover::discover_local(&discover::candidates()).await)
}

/// The model ids of the configured server, or of `base_url` (the model list).
#[tauri::command]
pub async fn backend_models(
    state: State<'_, AppState>,
    base_url: Option<String>,
) -> CmdResult<Vec<String>> {
    discover::configured_models(&state.store, &state.paths, base_url.as_deref()).await
}

/// "Test connection": the doctor's checks against the configured backend with the form's values.
#[tauri::command]
pub async fn backend_test(
    state: State<'_, AppState>,
    overrides: Option<Overrides>,
) -> CmdResult<Value> {
    Ok(
        doctor::run_configured(&state.store, &state.paths, &overrides.unwrap_or_default())
            .await?
            .for_ui(),
    )
}

/// The main character's first-run greeting, or the display choice's one-time note (`null` on
/// later runs and in other windows).
#[tauri::command]
pub async fn first_run<R: Runtime>(
    window: WebviewWindow<R>,
    state: State<'_, AppState>,
) -> CmdResult<Option<Greeting>> {
    firstrun::greet_in(
        &state.store,
        &state.paths,
        crate::windows::kind_of(&window),
        &discover::candidates(),
        crate::display::choice(),
    )
    .await
}
