//! One instance: a second launch of the app hands its arguments to the running one and exits
//! (Tauri's single-instance plugin, over the D-Bus session bus on Linux). The running app then
//! comes forward: its characters show (where they were, if the tray had hidden them, and out of
//! a minimized state), and `--settings` opens Settings. Without a session bus the plugin cannot
//! claim its name and every launch runs on its own, as before.

use crate::windows::{self, WindowLabel};
use tauri::{AppHandle, Manager, Runtime};

/// The argument that opens Settings, in a first launch or a second one.
pub const SETTINGS_ARG: &str = "--settings";

/// The plugin, to be registered before any other (a second launch must exit before it builds
/// anything).
pub fn plugin<R: Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri_plugin_single_instance::init(|app, argv, _cwd| {
        tracing::info!(?argv, "a second launch: coming forward");
        come_forward(app, argv.iter().skip(1).any(|a| a == SETTINGS_ARG));
    })
}

/// Show every character (and focus the main one); with `settings`, open Settings too.
pub fn come_forward<R: Runtime>(app: &AppHandle<R>, settings: bool) {
    let chars: Vec<_> = app
        .webview_windows()
        .into_iter()
        .filter(|(l, _)| WindowLabel::parse(l).is_some_and(|l| l.is_character()))
        .map(|(_, w)| w)
        .collect();
    // Hidden from the tray: the tray's own Show puts each back where it was.
    if !chars.iter().any(|w| w.is_visible().unwrap_or(false)) {
        windows::toggle_characters(app);
    }
    for w in &chars {
        // Minimized by the window manager: bring it back.
        if let Err(e) = w.unminimize().and_then(|()| w.show()) {
            tracing::warn!(label = w.label(), error = %e, "showing a character failed");
        }
    }
    if let Some(main) = app.get_webview_window(&WindowLabel::Main.as_label()) {
        let _ = main.set_focus();
    }
    if settings {
        if let Err(e) = windows::show_tool_window(app, &WindowLabel::Settings) {
            tracing::warn!(error = %e.message, "opening settings failed");
        }
    }
}
