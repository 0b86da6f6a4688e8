//! The built-in model in the app (docs/built-in-model.md): the first run's offer in the main
//! character's bubble (download, cancel, use, add a file) and Settings → Backend → Built-in
//! model. Each command is one call into the core's stage (`stage/model.rs`, `model_page.rs`);
//! a download's progress comes back as the `yui://model-pull` event.

use crate::error::CmdResult;
use serde_json::Value;
use tauri::{AppHandle, Runtime, WebviewWindow};
use yui_core::stage::{AfterPull, ModelPage, ModelPull};

/// Start downloading catalog model `name`; `after`: `keep`, `use`, or `greet` (use it and let
/// the main character say hello through it: the first run's button).
#[tauri::command]
pub async fn model_pull<R: Runtime>(
    app: AppHandle<R>,
    name: String,
    after: AfterPull,
) -> CmdResult<ModelPull> {
    crate::stage::shell(&app).stage.model_pull(&name, after)
}

/// Cancel the download of `name` (its partial file stays); whether one was running.
#[tauri::command]
pub async fn model_cancel<R: Runtime>(app: AppHandle<R>, name: String) -> CmdResult<bool> {
    Ok(crate::stage::shell(&app).stage.model_cancel(&name))
}

/// Make the installed model `name` the backend; with `greet` the main character says hello
/// through it. The sentence that says so.
#[tauri::command]
pub async fn model_use<R: Runtime>(
    app: AppHandle<R>,
    name: String,
    greet: bool,
) -> CmdResult<String> {
    crate::stage::shell(&app).stage.model_use(&name, greet)
}

/// Pick a GGUF file in the desktop's file dialog and add it (`use_it`: it becomes the backend
/// and the main character says hello); `null` when the user closed the dialog.
#[tauri::command]
pub async fn model_add_file<R: Runtime>(
    window: WebviewWindow<R>,
    use_it: bool,
) -> CmdResult<Option<ModelPage>> {
    crate::file_pick::add_model(&window, use_it).await
}

/// Settings → Backend → Built-in model.
#[tauri::command]
pub async fn model_page<R: Runtime>(app: AppHandle<R>) -> CmdResult<ModelPage> {
    crate::stage::shell(&app).stage.model_page()
}

/// Store `yui.model.idle_stop_s`, `yui.model.threads` or `yui.model.mirror`.
#[tauri::command]
pub async fn model_set<R: Runtime>(
    app: AppHandle<R>,
    key: String,
    value: Value,
) -> CmdResult<ModelPage> {
    crate::stage::shell(&app).stage.model_set(&key, &value)
}

/// Delete a model (never the one a running engine serves: the core's sentence says so).
#[tauri::command]
pub async fn model_remove<R: Runtime>(app: AppHandle<R>, name: String) -> CmdResult<ModelPage> {
    crate::stage::shell(&app).stage.model_remove(&name)
}
