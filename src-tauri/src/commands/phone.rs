//! The phone window (`phone-<presetId>`): one character's conversation history in pages, and its
//! turns (run by `turn_start` like any character window's, as [`yui_core::WindowKind::Phone`]).
//!
//! A phone's reply also plays on the character: [`Mirror`] forwards each event of a phone's turn
//! to the character's own window as `yui://phone-turn` `{preset_id, turn_id, event}`, which the
//! window plays like its own turn (bubble, cues). The lead's core stage will own this routing;
//! until then it is this one forwarder.

use crate::error::CmdResult;
use crate::state::AppState;
use crate::windows::{self, BridgeEvent, WindowLabel};
use tauri::{AppHandle, Emitter, Runtime, State, WebviewWindow};
use yui_core::presets::Preset;
use yui_core::transcript::{self, Page};
use yui_core::turn::TurnEvent;

/// The most lines one history page carries.
const PAGE_LIMIT: usize = 100;

/// A page of the calling phone's history: the `limit` lines before `before` (the newest without
/// it), oldest first, and whether older ones exist.
#[tauri::command]
pub async fn phone_history<R: Runtime>(
    window: WebviewWindow<R>,
    state: State<'_, AppState>,
    before: Option<i64>,
    limit: Option<usize>,
) -> CmdResult<Page> {
    let preset = windows::calling_phone(&window)?;
    let limit = limit.unwrap_or(30).clamp(1, PAGE_LIMIT);
    transcript::page(&state.store, &preset.id, limit, before)
}

/// Where a phone's turn events go besides the phone itself.
pub struct Mirror {
    /// (character window label, preset id, turn id) when the turn runs in a phone.
    target: Option<(String, String, String)>,
}

impl Mirror {
    /// A mirror for a turn started in window `label` for `preset`: none unless it is a phone.
    pub fn for_turn<R: Runtime>(
        app: &AppHandle<R>,
        label: &WindowLabel,
        preset: &Preset,
        turn_id: &str,
    ) -> Self {
        let target = match label {
            WindowLabel::Phone(_) => windows::character_window(app, preset).map(|w| {
                (
                    w.label().to_string(),
                    preset.id.clone(),
                    turn_id.to_string(),
                )
            }),
            _ => None,
        };
        Self { target }
    }

    /// Forward one event to the character's window (best effort: a closed window misses it).
    pub fn send<R: Runtime>(&self, app: &AppHandle<R>, event: &TurnEvent) {
        let Some((label, preset_id, turn_id)) = &self.target else {
            return;
        };
        let payload = serde_json::json!({
            "preset_id": preset_id,
            "turn_id": turn_id,
            "event": event,
        });
        if let Err(e) = app.emit_to(label.as_str(), BridgeEvent::PhoneTurn.name(), payload) {
            tracing::debug!(label, error = %e, "mirroring a phone turn failed");
        }
    }
}
