//! Settings → Manners, the quick controls' and the tray's quiet mode (docs/proactive.md): each
//! command is one call into the core's stage (`stage/proactive/page.rs`), which stores the
//! change and looks at the waiting proactive turns again.

use crate::error::CmdResult;
use serde_json::Value;
use tauri::{AppHandle, Runtime};
use yui_core::stage::MannersPage;

/// The page: the manners' settings, each character's switch, quiet mode, the turns waiting and
/// the held-back log.
#[tauri::command]
pub async fn manners_get<R: Runtime>(app: AppHandle<R>) -> CmdResult<MannersPage> {
    crate::stage::shell(&app).stage.manners_page()
}

/// Store one manners setting (`yui.proactive.per_hour`, …); refused in plain words when invalid.
#[tauri::command]
pub async fn manners_set<R: Runtime>(
    app: AppHandle<R>,
    key: String,
    value: Value,
) -> CmdResult<MannersPage> {
    crate::stage::shell(&app).stage.manners_set(&key, &value)
}

/// One character's proactive switch.
#[tauri::command]
pub async fn manners_character<R: Runtime>(
    app: AppHandle<R>,
    preset_id: String,
    on: bool,
) -> CmdResult<MannersPage> {
    crate::stage::shell(&app)
        .stage
        .manners_character(&preset_id, on)
}

/// Quiet mode: `1h`, `tomorrow` or `off`.
#[tauri::command]
pub async fn manners_quiet<R: Runtime>(app: AppHandle<R>, what: String) -> CmdResult<MannersPage> {
    crate::stage::shell(&app).stage.quiet(&what)
}
