//! Relations commands. `relations_list` and `relation_set` (the slider) are granted to the
//! settings window alone; `relation_bands` (each preset's band toward the user) to the settings
//! window and the quick controls. Each delegates to `yui_core::relations` in one line.
//!
//! Whenever a value may have changed — a slider move here, or an accepted `rate_relation` call in
//! a turn — the core's stage raises `RelationsChanged` with the fresh [`UserBands`] and the shell
//! forwards it as `yui://relations-changed`, so the quick controls' band words and the settings
//! panel update live.

use crate::error::CmdResult;
use crate::state::AppState;
use tauri::State;
use yui_core::relations::{self, Listing, SetResult, Target, UserBands};

/// Log entries the settings panel shows (newest first).
const LOG_LIMIT: usize = 200;

/// Values, bands and the change log (one preset's, or all).
#[tauri::command]
pub async fn relations_list(
    state: State<'_, AppState>,
    preset: Option<String>,
) -> CmdResult<Listing> {
    relations::list(&state.store, preset.as_deref(), LOG_LIMIT)
}

/// The slider: set `preset`'s value toward `target` by hand (logged with the user's reserved
/// reason, no daily cap, only the range).
#[tauri::command]
pub async fn relation_set(
    state: State<'_, AppState>,
    preset: String,
    target: Target,
    value: i64,
) -> CmdResult<SetResult> {
    relations::set_by_hand(&state.store, state.clock.as_ref(), &preset, &target, value)
}

/// Each preset's band toward the user, and the Relations switch.
#[tauri::command]
pub async fn relation_bands(state: State<'_, AppState>) -> CmdResult<UserBands> {
    relations::user_bands(&state.store)
}
