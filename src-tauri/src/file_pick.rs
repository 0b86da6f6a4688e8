//! The desktop's file dialog for a GGUF model (the first run's "add a file", Settings → Backend
//! → Built-in model): GTK's native file chooser (the portal's on a sandboxed desktop), run on
//! the main thread; the path goes to the core (`Stage::model_add`).

use crate::error::CmdResult;
use std::path::PathBuf;
use tauri::{Manager, Runtime, WebviewWindow};
use yui_core::stage::ModelPage;

/// Ask for a `.gguf` file over `window`; `None` when the dialog was closed.
pub async fn gguf<R: Runtime>(window: &WebviewWindow<R>) -> Option<PathBuf> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let w = window.clone();
    let ran = window.run_on_main_thread(move || {
        let _ = tx.send(pick_on_main_thread(&w));
    });
    if let Err(e) = ran {
        tracing::warn!(error = %e, "the file dialog could not open");
        return None;
    }
    rx.await.ok().flatten()
}

#[cfg(target_os = "linux")]
fn pick_on_main_thread<R: Runtime>(window: &WebviewWindow<R>) -> Option<PathBuf> {
    use gtk::prelude::*;
    let parent = window.gtk_window().ok();
    let dialog = gtk::FileChooserNative::new(
        Some("Add a GGUF model file"),
        parent.as_ref(),
        gtk::FileChooserAction::Open,
        Some("Add"),
        Some("Cancel"),
    );
    let filter = gtk::FileFilter::new();
    filter.set_name(Some("GGUF models (*.gguf)"));
    filter.add_pattern("*.gguf");
    filter.add_pattern("*.GGUF");
    dialog.add_filter(filter);
    let picked = (dialog.run() == gtk::ResponseType::Accept)
        .then(|| dialog.filename())
        .flatten();
    dialog.destroy();
    picked
}

#[cfg(not(target_os = "linux"))]
fn pick_on_main_thread<R: Runtime>(_window: &WebviewWindow<R>) -> Option<PathBuf> {
    None
}

/// The dialog, then the core adds the file (and with `use_it` uses it and says hello).
pub async fn add_model<R: Runtime>(
    window: &WebviewWindow<R>,
    use_it: bool,
) -> CmdResult<Option<ModelPage>> {
    let Some(path) = gguf(window).await else {
        return Ok(None);
    };
    let stage = crate::stage::shell(window.app_handle()).stage.clone();
    stage.model_add(&path, use_it).await.map(Some)
}
