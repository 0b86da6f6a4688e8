//! One instance: a second launch of the app hands its arguments to the running one and exits
//! (Tauri's single-instance plugin, over the D-Bus session bus on Linux). The running app then
//! comes forward: its characters show (where they were, if the tray had hidden them, and out of
//! a minimized state), and `--settings` opens Settings. One instance per data dir (see [`plugin`]).
//! Without a session bus the plugin cannot claim its name and every launch runs on its own.

use crate::windows::{self, WindowLabel};
use std::path::Path;
use tauri::{AppHandle, Manager, Runtime};

/// The argument that opens Settings, in a first launch or a second one.
pub const SETTINGS_ARG: &str = "--settings";

/// The plugin, to be registered before any other (a second launch must exit before it builds
/// anything). One instance per data dir: two apps on one database is what must not happen, while
/// an app on another `--data-dir` (a test, a second profile) is another YUI and runs.
pub fn plugin<R: Runtime>(data_dir: &Path) -> tauri::plugin::TauriPlugin<R> {
    tauri_plugin_single_instance::Builder::new()
        .dbus_id(bus_id(data_dir))
        .callback(|app, argv, _cwd| {
            tracing::info!(?argv, "a second launch: coming forward");
            come_forward(app, argv.iter().skip(1).any(|a| a == SETTINGS_ARG));
        })
        .build()
}

/// The D-Bus name's stem for `data_dir` (the plugin appends `.SingleInstance`): the app's
/// identifier and a hash of the folder. FNV-1a, written out, so every version of YUI names the
/// same folder the same way (std's hasher may change between Rust releases).
pub fn bus_id(data_dir: &Path) -> String {
    let dir = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    let hash = dir
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    // A name element may not start with a digit.
    format!("app.yui.desktop.d{hash:016x}")
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
