//! Settings → Voice (ui/js/voice-panel.js; docs/voice.md), granted to the settings window alone.
//! Each delegates to `yui_core::voice::panel`. No command sends the speech key back to a webview.

use crate::error::CmdResult;
use crate::state::AppState;
use tauri::State;
use yui_core::voice::audio::DeviceList;
use yui_core::voice::check::{self, ListenSource, ListenTest};
use yui_core::voice::hosts;
use yui_core::voice::panel::{self, TestResult, VoiceEdit, VoicePanel};

/// The switch, engine, overlap, speech server, output device, key storage and each voice.
#[tauri::command]
pub async fn voice_panel_get(state: State<'_, AppState>) -> CmdResult<VoicePanel> {
    panel::overview(&state.store, &state.paths)
}

/// Save a change of the panel (absent fields stay).
#[tauri::command]
pub async fn voice_panel_set(state: State<'_, AppState>, edit: VoiceEdit) -> CmdResult<VoicePanel> {
    panel::save(&state.store, &state.paths, &edit)
}

/// A character's voice name and engine (empty: the defaults).
#[tauri::command]
pub async fn voice_character_set(
    state: State<'_, AppState>,
    preset: String,
    name: Option<String>,
    engine: Option<String>,
) -> CmdResult<VoicePanel> {
    panel::set_character_voice(
        &state.store,
        &state.paths,
        &preset,
        name.as_deref(),
        engine.as_deref(),
    )
}

/// The audio devices (listing opens none).
#[tauri::command]
pub async fn voice_devices() -> CmdResult<DeviceList> {
    panel::devices(hosts::host()).await
}

/// Store the speech servers' own key; where it went (never the key).
#[tauri::command]
pub async fn speech_key_set(state: State<'_, AppState>, key: String) -> CmdResult<String> {
    panel::set_speech_key(&state.paths, &key)
}

/// Forget the speech key.
#[tauri::command]
pub async fn speech_key_clear(state: State<'_, AppState>) -> CmdResult<()> {
    panel::clear_speech_key(&state.paths)
}

/// Speak `text` in `preset`'s voice (the Test button).
#[tauri::command]
pub async fn voice_test(
    state: State<'_, AppState>,
    preset: Option<String>,
    text: String,
) -> CmdResult<TestResult> {
    panel::test_speak(
        &state.store,
        &state.paths,
        hosts::host(),
        preset.as_deref(),
        &text,
    )
    .await
}

/// The listening half of Test: a few seconds from the microphone, or the speech server's sample,
/// through the transcription server; what it heard.
#[tauri::command]
pub async fn voice_test_listen(
    state: State<'_, AppState>,
    source: ListenSource,
) -> CmdResult<ListenTest> {
    check::test_listen(
        &state.store,
        &state.paths,
        hosts::host(),
        source,
        // Never cancelled: the test ends by itself within a few seconds (or the server's timeout).
        &Default::default(),
    )
    .await
}
