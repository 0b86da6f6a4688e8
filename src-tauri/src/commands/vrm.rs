//! VRM looks (docs/vrm.md): what a character window draws for its model (the faces of the
//! emotions, mouth shapes, blink, motions with a `.vrma`: `vrm_look`) and the model's bytes or
//! a motion's `.vrma` (`vrm_model`, sent as raw bytes, not JSON); the look picker's preview of a VRM look (`look_vrm_preview`)
//! and its motions' `.vrma` files (`vrm_motions`, `vrm_motion_set`, `vrm_motion_remove`: the
//! same core calls as `yui look set --vrm-motion`). Each delegates to the core (`yui_core::vrm`).

use crate::error::CmdResult;
use crate::state::AppState;
use crate::windows;
use serde_json::Value;
use tauri::ipc::Response;
use tauri::{Runtime, State, WebviewWindow};
use yui_core::vrm::{self, motions::MotionSlot, Look};

/// The calling character window's VRM look; the window takes the size its framing asks.
#[tauri::command]
pub async fn vrm_look<R: Runtime>(
    window: WebviewWindow<R>,
    state: State<'_, AppState>,
) -> CmdResult<Look> {
    windows::fit_character(
        &window,
        vrm::look::look_for_avatar(
            &state.store,
            &windows::calling_preset(&window, "a VRM look belongs to a character window")?.avatar,
        ),
    )
}

/// The calling character window's model file, or (`motion`) the `.vrma` file that motion
/// plays, as bytes (an ArrayBuffer in the window).
#[tauri::command]
pub async fn vrm_model<R: Runtime>(
    window: WebviewWindow<R>,
    motion: Option<String>,
) -> CmdResult<Response> {
    vrm::look::window_bytes(
        &windows::calling_preset(&window, "a VRM model belongs to a character window")?.avatar,
        motion.as_deref(),
    )
    .map(Response::new)
}

/// A VRM look's faces, licence and expressions, for the look picker (settings window).
#[tauri::command]
pub async fn look_vrm_preview(state: State<'_, AppState>, avatar: Value) -> CmdResult<Look> {
    vrm::look::look_for_avatar(&state.store, &avatar)
}

/// The calling window could not draw its model (no WebGL2, a model three-vrm refuses, too slow
/// a first frame) and shows the previous look: the app's log records why.
#[tauri::command]
pub async fn vrm_failed<R: Runtime>(window: WebviewWindow<R>, reason: String) -> CmdResult<()> {
    vrm::look::report_failure(
        &windows::calling_preset(&window, "a VRM model belongs to a character window")?,
        &reason,
    )
}

/// A VRM look's model file, as bytes, for the look picker's pictures of each emotion.
#[tauri::command]
pub async fn look_vrm_model(avatar: Value) -> CmdResult<Response> {
    vrm::look::model_bytes(&avatar).map(Response::new)
}

/// Settings → Characters → Look…: each motion of VRM character `id` and the `.vrma` it plays.
#[tauri::command]
pub async fn vrm_motions(state: State<'_, AppState>, id: String) -> CmdResult<Vec<MotionSlot>> {
    vrm::motions::slots(&state.store, &id)
}

/// Play the `.vrma` file the user chose (`name`, its bytes as base64) for `motion` of VRM
/// character `id`: checked and kept as `--vrm-motion MOTION=FILE.vrma` keeps it.
#[tauri::command]
pub async fn vrm_motion_set(
    state: State<'_, AppState>,
    id: String,
    motion: String,
    name: String,
    data: String,
) -> CmdResult<Vec<MotionSlot>> {
    vrm::motions::set_from_upload(
        &state.store,
        &state.paths.data_dir,
        &id,
        &motion,
        &name,
        &data,
    )
}

/// `motion` of VRM character `id` plays its procedural animation again (`MOTION=`).
#[tauri::command]
pub async fn vrm_motion_remove(
    state: State<'_, AppState>,
    id: String,
    motion: String,
) -> CmdResult<Vec<MotionSlot>> {
    vrm::motions::remove(&state.store, &state.paths.data_dir, &id, &motion)
}
