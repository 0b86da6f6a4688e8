//! The tray icon: Show/Hide all, Quick controls, Settings, Quit.

use crate::windows::{self, WindowLabel};
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Runtime};

const TOGGLE: &str = "toggle";
const QUICK: &str = "quick";
const SETTINGS: &str = "settings";
const QUIT: &str = "quit";

pub fn create<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let menu = Menu::with_items(
        app,
        &[
            &MenuItem::with_id(app, TOGGLE, "Show/Hide all", true, None::<&str>)?,
            &MenuItem::with_id(app, QUICK, "Quick controls", true, None::<&str>)?,
            &MenuItem::with_id(app, SETTINGS, "Settings", true, None::<&str>)?,
            &PredefinedMenuItem::separator(app)?,
            &MenuItem::with_id(app, QUIT, "Quit", true, None::<&str>)?,
        ],
    )?;
    let mut tray = TrayIconBuilder::with_id("yui")
        .tooltip("YUI")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| on_menu(app, event.id().as_ref()));
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    Ok(())
}

fn on_menu<R: Runtime>(app: &AppHandle<R>, id: &str) {
    let shown = match id {
        TOGGLE => {
            windows::toggle_characters(app);
            Ok(())
        }
        QUICK => windows::show_tool_window(app, &WindowLabel::Quick),
        SETTINGS => windows::show_tool_window(app, &WindowLabel::Settings),
        QUIT => {
            app.exit(0);
            Ok(())
        }
        _ => Ok(()),
    };
    if let Err(e) = shown {
        tracing::warn!(item = id, error = %e.message, "tray action failed");
    }
}
