//! The phone window (`phone-<presetId>`): one character's conversation history in pages, and its
//! turns (run by `turn_start` like any character window's, as [`yui_core::WindowKind::Phone`]).
//!
//! A phone's reply also plays on the character: the stage's forwarder (`stage.rs`) sends each
//! event of a phone's turn to the character's own window as `yui://character-turn`.

use crate::error::CmdResult;
use crate::state::AppState;
use crate::windows;
use tauri::{Runtime, State, WebviewWindow};
use yui_core::transcript::{self, Page};

/// A page of the calling phone's history: the `limit` lines before `before` (the newest without
/// it), oldest first, and whether older ones exist.
#[tauri::command]
pub async fn phone_history<R: Runtime>(
    window: WebviewWindow<R>,
    state: State<'_, AppState>,
    before: Option<i64>,
    limit: Option<usize>,
) -> CmdResult<Page> {
    transcript::phone_page(
        &state.store,
        &windows::calling_phone(&window)?.id,
        limit,
        before,
    )
}
