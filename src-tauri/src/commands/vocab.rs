//! Expression commands: the vocabulary editor and the voice status (settings window only, see
//! `capabilities/settings.json`), and what character windows draw: the vocabulary's ids and flags
//! and the sprite set of the calling window. Each delegates to the core (`yui_core::vocab`,
//! `voice`, `sprites`). Saving the vocabulary makes the core's stage raise `VocabChanged`
//! (`yui://vocab-changed`), so every character window picks it up with no restart.

use crate::error::CmdResult;
use crate::state::AppState;
use crate::windows;
use tauri::{Runtime, State, WebviewWindow};
use yui_core::sprites::{self, SpriteSet};
use yui_core::vocab::{self, CharacterVocab, Motion, Vocab};
use yui_core::voice::{self, VoiceStatus};

/// The vocabulary loaded now (stored, else the defaults).
#[tauri::command]
pub async fn vocab_get(state: State<'_, AppState>) -> CmdResult<Vocab> {
    vocab::load(&state.store)
}

/// What a character window draws from the vocabulary (ids and flags only).
#[tauri::command]
pub async fn vocab_for_character(state: State<'_, AppState>) -> CmdResult<CharacterVocab> {
    vocab::for_character(&state.store)
}

/// Which of `motions` (the vocabulary being edited) may be offered to the model.
#[tauri::command]
pub async fn vocab_offerable(motions: Vec<Motion>) -> CmdResult<Vec<String>> {
    Ok(vocab::offerable_ids(&motions))
}

/// Replace the vocabulary (checked first); the next turn declares its schema. Returns it.
#[tauri::command]
pub async fn vocab_set(state: State<'_, AppState>, vocab: Vocab) -> CmdResult<Vocab> {
    vocab::save_and_load(&state.store, &vocab)
}

/// Put the default vocabulary back.
#[tauri::command]
pub async fn vocab_reset(state: State<'_, AppState>) -> CmdResult<Vocab> {
    vocab::save_and_load(&state.store, &Vocab::default())
}

/// The voice switch, engine, and whether the engine can speak here (one status line).
#[tauri::command]
pub async fn voice_get(state: State<'_, AppState>) -> CmdResult<VoiceStatus> {
    voice::status(&state.store)
}

/// The sprite set of the calling character window's preset; `null` for the built-in character.
#[tauri::command]
pub async fn sprites_get<R: Runtime>(
    window: WebviewWindow<R>,
    state: State<'_, AppState>,
) -> CmdResult<Option<SpriteSet>> {
    sprites::for_avatar(
        &windows::calling_preset(&window, "sprites belong to character windows")?.avatar,
        &vocab::load(&state.store)?,
    )
}
