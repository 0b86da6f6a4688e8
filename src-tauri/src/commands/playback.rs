//! Playback of replies: the window reports `playback_bubble_done(turn_id)` once its bubble shows
//! the whole reply; the core's stage combines it with the speech (which it runs) and every
//! window hears `yui://playback-finished` `{preset_id, turn_id}`. `voice_stop` stops the calling
//! window's character's speech (Escape); other characters go on speaking.

use crate::error::CmdResult;
use crate::windows;
use tauri::{Manager, Runtime, WebviewWindow};

const NOT_CHARACTER: &str = "playback is reported by character and phone windows only";

/// The window shows the whole reply of `turn_id` in its bubble.
#[tauri::command]
pub async fn playback_bubble_done<R: Runtime>(
    window: WebviewWindow<R>,
    turn_id: String,
) -> CmdResult<()> {
    windows::turn_window(&window, NOT_CHARACTER).map(|_| {
        crate::stage::shell(window.app_handle())
            .stage
            .bubble_done(&turn_id)
    })
}

/// Stop the calling window's character's speech; whether some was running.
#[tauri::command]
pub async fn voice_stop<R: Runtime>(window: WebviewWindow<R>) -> CmdResult<bool> {
    crate::stage::shell(window.app_handle())
        .stage
        .stop_voice_in(&windows::turn_window(&window, NOT_CHARACTER)?)
}
