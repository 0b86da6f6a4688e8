//! Windows: the one enum of window labels, the one enum of bridge event names, and the code that
//! creates, shows and hides windows. Which preset is open lives in the core (`presets`); this
//! module only turns that table into windows and remembers where the user dragged them.

use crate::state::AppState;
use serde::Serialize;
use std::time::Duration;
use tauri::{
    AppHandle, Emitter, Manager, PhysicalPosition, Runtime, WebviewUrl, WebviewWindow,
    WebviewWindowBuilder, WindowEvent,
};
use yui_core::presets::{self, Preset};
use yui_core::{CoreError, WindowKind};

/// Every window label the app uses. Parse labels with [`WindowLabel::parse`]; never compare label
/// strings elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WindowLabel {
    /// The main character (the preset marked main).
    Main,
    /// One pet window per other open preset: `pet-<presetId>`.
    Pet(String),
    /// The ordinary settings window.
    Settings,
    /// The quick-controls popover.
    Quick,
    /// The window that explains why the app cannot start (store damaged or too new).
    Fatal,
}

const PET_PREFIX: &str = "pet-";

impl WindowLabel {
    pub fn as_label(&self) -> String {
        match self {
            Self::Main => "main".into(),
            Self::Pet(id) => format!("{PET_PREFIX}{id}"),
            Self::Settings => "settings".into(),
            Self::Quick => "quick".into(),
            Self::Fatal => "error".into(),
        }
    }

    pub fn parse(label: &str) -> Option<Self> {
        match label {
            "main" => Some(Self::Main),
            "settings" => Some(Self::Settings),
            "quick" => Some(Self::Quick),
            "error" => Some(Self::Fatal),
            other => other
                .strip_prefix(PET_PREFIX)
                .filter(|id| !id.is_empty())
                .map(|id| Self::Pet(id.to_string())),
        }
    }

    /// The contract's window kind, for character windows only.
    pub fn kind(&self) -> Option<WindowKind> {
        match self {
            Self::Main => Some(WindowKind::Main),
            Self::Pet(_) => Some(WindowKind::Pet),
            Self::Settings | Self::Quick | Self::Fatal => None,
        }
    }

    /// The name the UI sees (`main`, `pet`, `settings`, `quick`).
    pub fn role(&self) -> &'static str {
        match self {
            Self::Main => "main",
            Self::Pet(_) => "pet",
            Self::Settings => "settings",
            Self::Quick => "quick",
            Self::Fatal => "error",
        }
    }

    pub fn is_character(&self) -> bool {
        matches!(self, Self::Main | Self::Pet(_))
    }
}

/// Bridge events the shell emits to the webviews. The UI listens for these exact names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BridgeEvent {
    /// The presets table changed (opened, closed, renamed): payload is the full list.
    PresetsChanged,
    /// A switch changed: payload is `{browser, relations, screen}` booleans.
    SwitchesChanged,
    /// A character was addressed by another one's reply (contract: address_character).
    CharacterAddressed,
}

impl BridgeEvent {
    pub const fn name(self) -> &'static str {
        match self {
            Self::PresetsChanged => "yui://presets-changed",
            Self::SwitchesChanged => "yui://switches-changed",
            Self::CharacterAddressed => "yui://character-addressed",
        }
    }
}

/// Emit a bridge event to every window.
pub fn emit<R: Runtime, P: Serialize + Clone>(app: &AppHandle<R>, ev: BridgeEvent, payload: P) {
    if let Err(e) = app.emit(ev.name(), payload) {
        tracing::warn!(event = ev.name(), error = %e, "emit failed");
    }
}

/// Logical sizes of the windows.
const MAIN_SIZE: (f64, f64) = (220.0, 300.0);
const PET_SIZE: (f64, f64) = (170.0, 232.0);
const SETTINGS_SIZE: (f64, f64) = (560.0, 640.0);
const QUICK_SIZE: (f64, f64) = (320.0, 360.0);
/// How long a window must rest after a move before its position is written.
const SAVE_POSITION_AFTER: Duration = Duration::from_millis(600);

pub fn tauri_err(e: tauri::Error) -> CoreError {
    CoreError::internal(format!("window error: {e}"))
}

/// The label a preset's window has.
pub fn label_for(preset: &Preset) -> WindowLabel {
    if preset.is_main {
        WindowLabel::Main
    } else {
        WindowLabel::Pet(preset.id.clone())
    }
}

/// The preset a character window shows, read from the store.
pub fn preset_for<R: Runtime>(
    app: &AppHandle<R>,
    label: &WindowLabel,
) -> Result<Preset, CoreError> {
    let store = &app.state::<AppState>().store;
    match label {
        WindowLabel::Main => presets::main_preset(store),
        WindowLabel::Pet(id) => presets::get(store, id),
        _ => Err(CoreError::invalid("not a character window")),
    }
}

/// Open (or show) the window of `preset`. Idempotent.
///
/// On Linux a pet window is created as a *related view* of the main window, so WebKitGTK runs
/// both pages in one web process instead of one process per window (the bulk of a window's
/// memory). Only character windows share: settings and quick get their own process.
pub fn open_character<R: Runtime>(
    app: &AppHandle<R>,
    preset: &Preset,
    slot: usize,
) -> Result<WebviewWindow<R>, CoreError> {
    let label = label_for(preset);
    if let Some(w) = app.get_webview_window(&label.as_label()) {
        w.show().map_err(tauri_err)?;
        return Ok(w);
    }
    #[cfg(target_os = "linux")]
    if label != WindowLabel::Main {
        if let Some(main) = app.get_webview_window(&WindowLabel::Main.as_label()) {
            let (tx, rx) = std::sync::mpsc::channel();
            let (app2, preset2) = (app.clone(), preset.clone());
            // Runs on the main thread (at once when we are on it); a runtime without webviews
            // (the mock runtime) drops the closure and we fall back to a window of its own.
            let dispatched = main.with_webview(move |webview| {
                let built = character_builder(&app2, &preset2)
                    .with_related_view(webview.inner())
                    .build()
                    .map_err(tauri_err);
                let _ = tx.send(built);
            });
            if dispatched.is_ok() {
                if let Ok(built) = rx.recv() {
                    return place_and_show(app, built?, preset, slot);
                }
            }
        }
    }
    let window = character_builder(app, preset).build().map_err(tauri_err)?;
    place_and_show(app, window, preset, slot)
}

fn character_builder<'a, R: Runtime>(
    app: &'a AppHandle<R>,
    preset: &Preset,
) -> WebviewWindowBuilder<'a, R, AppHandle<R>> {
    let label = label_for(preset);
    let (w, h) = if label == WindowLabel::Main {
        MAIN_SIZE
    } else {
        PET_SIZE
    };
    WebviewWindowBuilder::new(app, label.as_label(), WebviewUrl::App("index.html".into()))
        .title(format!("YUI — {}", preset.name))
        .inner_size(w, h)
        .transparent(true)
        .decorations(false)
        .always_on_top(true)
        .skip_taskbar(true)
        .resizable(false)
        .shadow(false)
        .focused(false)
        .visible(false)
}

fn place_and_show<R: Runtime>(
    app: &AppHandle<R>,
    window: WebviewWindow<R>,
    preset: &Preset,
    slot: usize,
) -> Result<WebviewWindow<R>, CoreError> {
    let h = if preset.is_main {
        MAIN_SIZE.1
    } else {
        PET_SIZE.1
    };
    let pos = match (preset.pos_x, preset.pos_y) {
        (Some(x), Some(y)) => PhysicalPosition::new(x, y),
        _ => default_position(app, slot, h),
    };
    window.set_position(pos).map_err(tauri_err)?;
    window.show().map_err(tauri_err)?;
    Ok(window)
}

/// Where a character without a saved position goes: along the bottom right of the primary
/// screen, main rightmost, pets to its left.
fn default_position<R: Runtime>(app: &AppHandle<R>, slot: usize, h: f64) -> PhysicalPosition<i32> {
    let monitor = app.primary_monitor().ok().flatten();
    let (sw, sh, scale) = monitor
        .map(|m| {
            (
                m.size().width as f64,
                m.size().height as f64,
                m.scale_factor(),
            )
        })
        .unwrap_or((1280.0, 800.0, 1.0));
    let step = (PET_SIZE.0 + 10.0) * scale;
    let x = sw - (MAIN_SIZE.0 + 40.0) * scale - step * slot as f64;
    let y = sh - (h + 60.0) * scale;
    PhysicalPosition::new(x.max(0.0) as i32, y.max(0.0) as i32)
}

/// Close the window of `preset` if it is open.
pub fn close_character<R: Runtime>(app: &AppHandle<R>, preset: &Preset) -> Result<(), CoreError> {
    if let Some(w) = app.get_webview_window(&label_for(preset).as_label()) {
        w.destroy().map_err(tauri_err)?;
    }
    Ok(())
}

/// Open a window for every open preset (main first) and close windows of presets now closed.
pub fn sync_characters<R: Runtime>(app: &AppHandle<R>) -> Result<(), CoreError> {
    let store = app.state::<AppState>().store.clone();
    let all = presets::list(&store)?;
    let main = presets::main_preset(&store)?;
    let mut slot = 0;
    open_character(app, &main, slot)?;
    for p in all.iter().filter(|p| p.id != main.id) {
        if p.is_open {
            slot += 1;
            open_character(app, p, slot)?;
        } else {
            close_character(app, p)?;
        }
    }
    Ok(())
}

/// Show the settings or quick window, creating it if needed.
pub fn show_tool_window<R: Runtime>(
    app: &AppHandle<R>,
    which: &WindowLabel,
) -> Result<(), CoreError> {
    let label = which.as_label();
    if let Some(w) = app.get_webview_window(&label) {
        w.show().map_err(tauri_err)?;
        w.unminimize().map_err(tauri_err)?;
        w.set_focus().map_err(tauri_err)?;
        return Ok(());
    }
    let builder = match which {
        WindowLabel::Settings => {
            WebviewWindowBuilder::new(app, label, WebviewUrl::App("settings.html".into()))
                .title("YUI settings")
                .inner_size(SETTINGS_SIZE.0, SETTINGS_SIZE.1)
                .min_inner_size(420.0, 400.0)
        }
        WindowLabel::Quick => {
            WebviewWindowBuilder::new(app, label, WebviewUrl::App("quick.html".into()))
                .title("YUI quick controls")
                .inner_size(QUICK_SIZE.0, QUICK_SIZE.1)
                .resizable(false)
                .always_on_top(true)
                .skip_taskbar(true)
        }
        _ => {
            return Err(CoreError::invalid(
                "only settings and quick are tool windows",
            ))
        }
    };
    builder.build().map_err(tauri_err)?;
    Ok(())
}

/// Show/Hide all: if any character window is visible, hide them all; else show them all.
pub fn toggle_characters<R: Runtime>(app: &AppHandle<R>) {
    let chars: Vec<_> = app
        .webview_windows()
        .into_iter()
        .filter(|(l, _)| WindowLabel::parse(l).is_some_and(|l| l.is_character()))
        .map(|(_, w)| w)
        .collect();
    let any_visible = chars.iter().any(|w| w.is_visible().unwrap_or(false));
    for w in chars {
        let r = if any_visible { w.hide() } else { w.show() };
        if let Err(e) = r {
            tracing::warn!(label = w.label(), error = %e, "show/hide failed");
        }
    }
}

/// Window events: remember a character's position once it rests after a move.
pub fn on_window_event<R: Runtime>(window: &tauri::Window<R>, event: &WindowEvent) {
    let WindowEvent::Moved(pos) = event else {
        return;
    };
    let Some(label) = WindowLabel::parse(window.label()).filter(WindowLabel::is_character) else {
        return;
    };
    let app = window.app_handle().clone();
    let state = app.state::<AppState>();
    let generation = state.bump_move(&label);
    let pos = *pos;
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SAVE_POSITION_AFTER).await;
        let state = app.state::<AppState>();
        if !state.is_latest_move(&label, generation) {
            return; // a later move supersedes this one
        }
        let saved = preset_for(&app, &label)
            .and_then(|p| presets::set_position(&state.store, &p.id, pos.x, pos.y));
        if let Err(e) = saved {
            tracing::warn!(label = %label.as_label(), error = %e.message, "saving window position failed");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip() {
        for l in [
            WindowLabel::Main,
            WindowLabel::Pet("kai".into()),
            WindowLabel::Settings,
            WindowLabel::Quick,
            WindowLabel::Fatal,
        ] {
            assert_eq!(WindowLabel::parse(&l.as_label()), Some(l));
        }
        assert_eq!(WindowLabel::Pet("kai".into()).as_label(), "pet-kai");
        assert_eq!(WindowLabel::parse("pet-"), None);
        assert_eq!(WindowLabel::parse("other"), None);
    }
}
