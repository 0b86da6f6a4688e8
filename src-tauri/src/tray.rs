//! The tray icon: Show/Hide all (every character window, positions kept), Quick controls (a
//! popover next to the tray where the platform says where it is, else at the top right), Settings,
//! Quit (writes the last window positions first); while the microphone is live, its item says so
//! and one click stops it (`mic_changed`). Quiet mode: "Quiet for 1 hour", "Quiet until
//! tomorrow", "Quiet off" (the core stores it: docs/proactive.md).

use crate::windows::{self, WindowLabel};
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Listener, Manager, Runtime};

const TOGGLE: &str = "toggle";
const QUICK: &str = "quick";
const SETTINGS: &str = "settings";
const QUIT: &str = "quit";
const MIC: &str = "mic";
const MIC_OFF: &str = "Microphone off";
/// Quiet mode's items: their ids are what `Stage::quiet` takes after this prefix.
const QUIET: &str = "quiet:";

/// The tray's microphone item, kept to follow the microphone.
struct MicItem<R: Runtime>(MenuItem<R>);
/// The tray icon's id (to find its rectangle for the quick-controls popover).
const TRAY_ID: &str = "yui";

pub fn create<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let mic = MenuItem::with_id(app, MIC, MIC_OFF, false, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &MenuItem::with_id(app, TOGGLE, "Show/Hide all", true, None::<&str>)?,
            &MenuItem::with_id(app, QUICK, "Quick controls", true, None::<&str>)?,
            &mic,
            &MenuItem::with_id(app, "quiet:1h", "Quiet for 1 hour", true, None::<&str>)?,
            &MenuItem::with_id(
                app,
                "quiet:tomorrow",
                "Quiet until tomorrow",
                true,
                None::<&str>,
            )?,
            &MenuItem::with_id(app, "quiet:off", "Quiet off", true, None::<&str>)?,
            &MenuItem::with_id(app, SETTINGS, "Settings", true, None::<&str>)?,
            &PredefinedMenuItem::separator(app)?,
            &MenuItem::with_id(app, QUIT, "Quit", true, None::<&str>)?,
        ],
    )?;
    let mut tray = TrayIconBuilder::with_id(TRAY_ID)
        .tooltip("YUI")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| on_menu(app, event.id().as_ref()));
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    app.manage(MicItem(mic));
    // The microphone item follows the core's MicStatus as every window hears it (yui://mic).
    let handle = app.clone();
    app.listen("yui://mic", move |event| {
        if let Ok(status) = serde_json::from_str::<yui_core::stage::MicStatus>(event.payload()) {
            mic_changed(&handle, &status);
        }
    });
    Ok(())
}

/// The microphone changed: "Microphone on — stop" (enabled) while live, else "Microphone off".
pub fn mic_changed<R: Runtime>(app: &AppHandle<R>, status: &yui_core::stage::MicStatus) {
    let Some(item) = app.try_state::<MicItem<R>>() else {
        return;
    };
    let text = if status.live {
        "Microphone on — stop"
    } else {
        MIC_OFF
    };
    if let Err(e) = item
        .0
        .set_text(text)
        .and_then(|_| item.0.set_enabled(status.live))
    {
        tracing::debug!(error = %e, "tray microphone item not updated");
    }
}

fn on_menu<R: Runtime>(app: &AppHandle<R>, id: &str) {
    let shown = match id {
        TOGGLE => {
            windows::toggle_characters(app);
            Ok(())
        }
        QUICK => {
            // Known on Windows and macOS; on Linux the tray gives no position (top right then).
            let anchor = app
                .tray_by_id(TRAY_ID)
                .and_then(|t| t.rect().ok().flatten());
            windows::show_quick(app, anchor)
        }
        SETTINGS => windows::show_tool_window(app, &WindowLabel::Settings),
        MIC => {
            crate::stage::shell(app).stage.mic_stop();
            Ok(())
        }
        QUIT => {
            quit(app);
            Ok(())
        }
        quiet if quiet.starts_with(QUIET) => crate::stage::shell(app)
            .stage
            .quiet(&quiet[QUIET.len()..])
            .map(drop),
        _ => Ok(()),
    };
    if let Err(e) = shown {
        tracing::warn!(item = id, error = %e.message, "tray action failed");
    }
}

/// Quit: write the positions of windows moved in the last moments (their debounced save has not
/// run yet), then exit.
pub fn quit<R: Runtime>(app: &AppHandle<R>) {
    windows::flush_positions(app);
    app.exit(0);
}
