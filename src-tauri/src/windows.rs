//! Windows: the one enum of window labels, the one enum of bridge event names, and the code that
//! creates, shows and hides windows. Which preset is open lives in the core (`presets`); this
//! module only turns that table into windows and remembers where the user dragged them.

use crate::gestures::RefuseNewWindows as _;
use crate::state::AppState;
use std::time::Duration;
use tauri::{
    AppHandle, Manager, PhysicalPosition, Runtime, WebviewUrl, WebviewWindow, WebviewWindowBuilder,
    WindowEvent,
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
    /// A character's phone: its conversation history and an input, `phone-<presetId>`.
    Phone(String),
    /// The ordinary settings window.
    Settings,
    /// The quick-controls popover.
    Quick,
    /// The window that explains why the app cannot start (store damaged or too new).
    Fatal,
}

const PET_PREFIX: &str = "pet-";
const PHONE_PREFIX: &str = "phone-";

impl WindowLabel {
    pub fn as_label(&self) -> String {
        match self {
            Self::Main => "main".into(),
            Self::Pet(id) => format!("{PET_PREFIX}{id}"),
            Self::Phone(id) => format!("{PHONE_PREFIX}{id}"),
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
            other => {
                let id = |prefix| other.strip_prefix(prefix).filter(|id| !id.is_empty());
                id(PET_PREFIX)
                    .map(|id| Self::Pet(id.to_string()))
                    .or_else(|| id(PHONE_PREFIX).map(|id| Self::Phone(id.to_string())))
            }
        }
    }

    /// The contract's window kind, for character windows only.
    pub fn kind(&self) -> Option<WindowKind> {
        match self {
            Self::Main => Some(WindowKind::Main),
            Self::Pet(_) => Some(WindowKind::Pet),
            Self::Phone(_) => Some(WindowKind::Phone),
            Self::Settings | Self::Quick | Self::Fatal => None,
        }
    }

    /// The name the UI sees (`main`, `pet`, `phone`, `settings`, `quick`).
    pub fn role(&self) -> &'static str {
        match self {
            Self::Main => "main",
            Self::Pet(_) => "pet",
            Self::Phone(_) => "phone",
            Self::Settings => "settings",
            Self::Quick => "quick",
            Self::Fatal => "error",
        }
    }

    pub fn is_character(&self) -> bool {
        matches!(self, Self::Main | Self::Pet(_))
    }

    /// Windows that show one preset and run its turns: the character windows and phones.
    pub fn runs_turns(&self) -> bool {
        self.kind().is_some()
    }
}

pub use crate::bridge::{emit, BridgeEvent};

/// Logical sizes of the windows.
const MAIN_SIZE: (f64, f64) = (220.0, 300.0);
const PET_SIZE: (f64, f64) = (170.0, 232.0);
const SETTINGS_SIZE: (f64, f64) = (720.0, 640.0);
const QUICK_SIZE: (f64, f64) = (320.0, 360.0);
const PHONE_SIZE: (f64, f64) = (360.0, 580.0);
/// How long a window must rest after a move before its position is written.
const SAVE_POSITION_AFTER: Duration = Duration::from_millis(600);

pub fn tauri_err(e: tauri::Error) -> CoreError {
    CoreError::internal(format!("window error: {e}"))
}

/// The logical size of a preset's window: the main character is drawn larger than pets.
fn character_size(preset: &Preset) -> (f64, f64) {
    if preset.is_main {
        MAIN_SIZE
    } else {
        PET_SIZE
    }
}

/// The label a preset's window has.
pub fn label_for(preset: &Preset) -> WindowLabel {
    if preset.is_main {
        WindowLabel::Main
    } else {
        WindowLabel::Pet(preset.id.clone())
    }
}

/// The label of the calling `window` if it is a window that runs turns (main, pet or a phone);
/// else an `invalid_input` error saying `why`.
pub fn turn_label<R: Runtime>(
    window: &WebviewWindow<R>,
    why: &str,
) -> Result<WindowLabel, CoreError> {
    WindowLabel::parse(window.label())
        .filter(WindowLabel::runs_turns)
        .ok_or_else(|| CoreError::invalid(why))
}

/// The label of the calling `window` if it is a character window (main or pet); else an
/// `invalid_input` error saying `why` (e.g. "turns run in character windows only").
pub fn character_label<R: Runtime>(
    window: &WebviewWindow<R>,
    why: &str,
) -> Result<WindowLabel, CoreError> {
    WindowLabel::parse(window.label())
        .filter(WindowLabel::is_character)
        .ok_or_else(|| CoreError::invalid(why))
}

/// The preset the calling character `window` shows (`why`: as for [`character_label`]).
pub fn calling_preset<R: Runtime>(
    window: &WebviewWindow<R>,
    why: &str,
) -> Result<Preset, CoreError> {
    preset_for(window.app_handle(), &character_label(window, why)?)
}

/// The preset the calling phone `window` shows.
pub fn calling_phone<R: Runtime>(window: &WebviewWindow<R>) -> Result<Preset, CoreError> {
    match WindowLabel::parse(window.label()) {
        Some(label @ WindowLabel::Phone(_)) => preset_for(window.app_handle(), &label),
        _ => Err(CoreError::invalid("only a phone window reads its history")),
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
        WindowLabel::Pet(id) | WindowLabel::Phone(id) => presets::get(store, id),
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
    let (w, h) = character_size(preset);
    WebviewWindowBuilder::new(
        app,
        label_for(preset).as_label(),
        WebviewUrl::App("index.html".into()),
    )
    .refuse_new_windows()
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
    let pos = match (preset.pos_x, preset.pos_y) {
        (Some(x), Some(y)) => PhysicalPosition::new(x, y),
        _ => default_position(app, slot, character_size(preset).1),
    };
    window.set_position(pos).map_err(tauri_err)?;
    crate::visibility::watch(&window);
    window.show().map_err(tauri_err)?;
    // With the push transport the character's connection opens with its window.
    let kind = label_for(preset).kind().unwrap_or(WindowKind::Pet);
    crate::stage::shell(app).stage.opened(&preset.id, kind);
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
    crate::stage::shell(app).stage.closed(&preset.id);
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

/// The main character changed: close the windows of every preset in `before` (the list before
/// the change), so the main window is built again for the new main preset, then open the windows
/// of the open presets again.
pub fn rebuild_characters<R: Runtime>(
    app: &AppHandle<R>,
    before: &[Preset],
) -> Result<(), CoreError> {
    flush_positions(app);
    // Pets first: on Linux they share the main window's web process.
    for p in before.iter().filter(|p| !p.is_main) {
        close_character(app, p)?;
    }
    for p in before.iter().filter(|p| p.is_main) {
        close_character(app, p)?;
    }
    sync_characters(app)
}

/// Show the settings or quick window, creating it if needed. Quick controls open at the top right
/// of the screen the pointer is on (see [`show_quick`] for a known tray icon position).
pub fn show_tool_window<R: Runtime>(
    app: &AppHandle<R>,
    which: &WindowLabel,
) -> Result<(), CoreError> {
    if *which == WindowLabel::Quick {
        return show_quick(app, None);
    }
    build_tool_window(app, which, None).map(|_| ())
}

/// Show quick controls as a popover: next to `anchor` (the tray icon's rectangle, where the
/// platform knows it), else in the top right corner of the pointer's screen, and focused, so it
/// hides again once it loses focus ([`on_window_event`]).
pub fn show_quick<R: Runtime>(
    app: &AppHandle<R>,
    anchor: Option<tauri::Rect>,
) -> Result<(), CoreError> {
    // An existing (hidden) popover is placed before it shows, so it does not jump.
    let w = match app.get_webview_window(&WindowLabel::Quick.as_label()) {
        Some(w) => w,
        None => build_tool_window(app, &WindowLabel::Quick, None)?, // built hidden
    };
    if let Some(pos) = popover_position(&w, anchor) {
        w.set_position(pos).map_err(tauri_err)?;
    }
    w.show().map_err(tauri_err)?;
    w.set_focus().map_err(tauri_err)?;
    Ok(())
}

/// Where quick controls go: below (or above) the anchor, right edges aligned, kept on screen;
/// without an anchor, the top right corner of the work area. `None` when no monitor is known.
fn popover_position<R: Runtime>(
    w: &WebviewWindow<R>,
    anchor: Option<tauri::Rect>,
) -> Option<PhysicalPosition<i32>> {
    const MARGIN: f64 = 8.0;
    let monitor = w
        .cursor_position()
        .ok()
        .and_then(|c| w.monitor_from_point(c.x, c.y).ok().flatten())
        .or_else(|| w.primary_monitor().ok().flatten())?;
    let scale = monitor.scale_factor();
    let area = *monitor.work_area();
    let (ww, wh) = (
        (QUICK_SIZE.0 * scale).round() as i32,
        (QUICK_SIZE.1 * scale).round() as i32,
    );
    let margin = (MARGIN * scale).round() as i32;
    let (left, top) = (area.position.x, area.position.y);
    let (right, bottom) = (left + area.size.width as i32, top + area.size.height as i32);
    let (x, y) = match anchor {
        Some(r) => {
            let p = r.position.to_physical::<i32>(scale);
            let sz = r.size.to_physical::<i32>(scale);
            let below = p.y + sz.height / 2 < top + (bottom - top) / 2;
            let y = if below { p.y + sz.height } else { p.y - wh };
            (p.x + sz.width - ww, y)
        }
        None => (right - ww - margin, top + margin),
    };
    Some(PhysicalPosition::new(
        x.min(right - ww).max(left),
        y.min(bottom - wh).max(top),
    ))
}

pub(crate) fn build_tool_window<R: Runtime>(
    app: &AppHandle<R>,
    which: &WindowLabel,
    section: Option<&str>,
) -> Result<WebviewWindow<R>, CoreError> {
    let label = which.as_label();
    if let Some(w) = app.get_webview_window(&label) {
        w.show().map_err(tauri_err)?;
        w.unminimize().map_err(tauri_err)?;
        w.set_focus().map_err(tauri_err)?;
        return Ok(w);
    }
    let builder = match which {
        WindowLabel::Settings => {
            // At a section: settings.html#<section> (crate::settings_window).
            let page = section.map_or("settings.html".into(), |s| format!("settings.html#{s}"));
            WebviewWindowBuilder::new(app, label, WebviewUrl::App(page.into()))
                .title("YUI settings")
                .inner_size(SETTINGS_SIZE.0, SETTINGS_SIZE.1)
                .min_inner_size(420.0, 400.0)
        }
        WindowLabel::Quick => {
            WebviewWindowBuilder::new(app, label, WebviewUrl::App("quick.html".into()))
                .title("YUI quick controls")
                .inner_size(QUICK_SIZE.0, QUICK_SIZE.1)
                .resizable(false)
                .decorations(false)
                .always_on_top(true)
                .skip_taskbar(true)
                .focused(true)
                .visible(false)
        }
        _ => {
            return Err(CoreError::invalid(
                "only settings and quick are tool windows",
            ))
        }
    };
    builder.refuse_new_windows().build().map_err(tauri_err)
}

/// Open (or focus) the phone window of preset `id` (docs/characters.md).
pub fn show_phone<R: Runtime>(app: &AppHandle<R>, id: &str) -> Result<(), CoreError> {
    let preset = presets::get(&app.state::<AppState>().store, id)?;
    let label = WindowLabel::Phone(preset.id.clone()).as_label();
    if let Some(w) = app.get_webview_window(&label) {
        w.show().map_err(tauri_err)?;
        w.unminimize().map_err(tauri_err)?;
        w.set_focus().map_err(tauri_err)?;
        return Ok(());
    }
    WebviewWindowBuilder::new(app, label, WebviewUrl::App("phone.html".into()))
        .refuse_new_windows()
        .title(format!("{} — YUI phone", preset.name))
        .inner_size(PHONE_SIZE.0, PHONE_SIZE.1)
        .min_inner_size(300.0, 360.0)
        .build()
        .map_err(tauri_err)?;
    Ok(())
}

/// Close the phone window of preset `id` if it is open (the preset was deleted).
pub fn close_phone<R: Runtime>(app: &AppHandle<R>, id: &str) -> Result<(), CoreError> {
    if let Some(w) = app.get_webview_window(&WindowLabel::Phone(id.to_string()).as_label()) {
        w.destroy().map_err(tauri_err)?;
    }
    Ok(())
}

/// The window that shows `preset` on the desktop, if it is open (a phone's replies also play
/// there).
pub fn character_window<R: Runtime>(
    app: &AppHandle<R>,
    preset: &Preset,
) -> Option<WebviewWindow<R>> {
    app.get_webview_window(&label_for(preset).as_label())
}

/// Show/Hide all: if any character window (main and pets) is visible, hide them all; else show
/// them all where they were. GTK forgets a hidden window's position (the window manager places it
/// anew on show), so hiding writes each position to the store and showing puts it back.
pub fn toggle_characters<R: Runtime>(app: &AppHandle<R>) {
    let chars: Vec<_> = app
        .webview_windows()
        .into_iter()
        .filter_map(|(l, w)| {
            WindowLabel::parse(&l)
                .filter(WindowLabel::is_character)
                .map(|l| (l, w))
        })
        .collect();
    let any_visible = chars.iter().any(|(_, w)| w.is_visible().unwrap_or(false));
    if any_visible {
        flush_positions(app);
    }
    let store = &app.state::<AppState>().store;
    for (label, w) in chars {
        let r = if any_visible {
            let kept = w.outer_position().map_err(tauri_err).and_then(|pos| {
                preset_for(app, &label)
                    .and_then(|p| presets::set_position(store, &p.id, pos.x, pos.y))
            });
            if let Err(e) = kept {
                tracing::warn!(label = w.label(), error = %e.message, "keeping the position failed");
            }
            w.hide()
        } else {
            let saved = preset_for(app, &label)
                .ok()
                .and_then(|p| Some(PhysicalPosition::new(p.pos_x?, p.pos_y?)));
            // Before show for the first placement, after it for window managers that re-place.
            let place = || saved.map_or(Ok(()), |pos| w.set_position(pos));
            place().and_then(|()| w.show()).and_then(|()| place())
        };
        if let Err(e) = r {
            tracing::warn!(label = w.label(), error = %e, "show/hide failed");
        }
    }
}

/// Write every character position still waiting for its window to rest (a move in the last
/// [`SAVE_POSITION_AFTER`]). Called before Quit, so the last drag is not lost.
pub fn flush_positions<R: Runtime>(app: &AppHandle<R>) {
    let state = app.state::<AppState>();
    for (label, (x, y)) in state.take_pending_moves() {
        save_position(app, &label, x, y);
    }
}

fn save_position<R: Runtime>(app: &AppHandle<R>, label: &WindowLabel, x: i32, y: i32) {
    let store = &app.state::<AppState>().store;
    let saved = preset_for(app, label).and_then(|p| presets::set_position(store, &p.id, x, y));
    if let Err(e) = saved {
        tracing::warn!(label = %label.as_label(), error = %e.message, "saving window position failed");
    }
}

/// Window events: remember a character's position once it rests after a move; hide quick
/// controls when they lose focus (a popover).
pub fn on_window_event<R: Runtime>(window: &tauri::Window<R>, event: &WindowEvent) {
    let label = WindowLabel::parse(window.label());
    match event {
        WindowEvent::Focused(false) if label == Some(WindowLabel::Quick) => {
            if let Err(e) = window.hide() {
                tracing::warn!(error = %e, "hiding quick controls failed");
            }
        }
        // A hidden window's "moves" are the window system forgetting it, not the user's drag.
        WindowEvent::Moved(pos) if window.is_visible().unwrap_or(true) => {
            if let Some(label) = label.filter(WindowLabel::is_character) {
                // A move YUI made (the avatar's glide) is never saved as the user's drag.
                if !crate::avatar::on_moved(window.app_handle(), &label, (pos.x, pos.y)) {
                    remember_move(window.app_handle(), label, pos.x, pos.y);
                }
            }
        }
        _ => {}
    }
}

/// Record a move and write it once the window rested [`SAVE_POSITION_AFTER`] (unless a later
/// move or [`flush_positions`] took it first).
fn remember_move<R: Runtime>(app: &AppHandle<R>, label: WindowLabel, x: i32, y: i32) {
    let generation = app.state::<AppState>().bump_move(&label, (x, y));
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SAVE_POSITION_AFTER).await;
        if let Some((x, y)) = app.state::<AppState>().take_move(&label, generation) {
            save_position(&app, &label, x, y);
            crate::avatar::on_rested(&label);
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
            WindowLabel::Phone("kai".into()),
            WindowLabel::Settings,
            WindowLabel::Quick,
            WindowLabel::Fatal,
        ] {
            assert_eq!(WindowLabel::parse(&l.as_label()), Some(l));
        }
        assert_eq!(WindowLabel::Pet("kai".into()).as_label(), "pet-kai");
        assert_eq!(WindowLabel::parse("pet-"), None);
        assert_eq!(WindowLabel::parse("phone-"), None);
        assert_eq!(
            WindowLabel::Phone("kai".into()).kind(),
            Some(WindowKind::Phone)
        );
        assert_eq!(WindowLabel::parse("other"), None);
    }

    /// `EVENTS` in ui/js/ipc.js mirrors this enum: the UI must listen for the names we emit.
    #[test]
    fn ui_event_names_mirror_bridge_events() {
        let ipc_js = include_str!("../../ui/js/ipc.js");
        for ev in BridgeEvent::ALL {
            assert!(
                ipc_js.contains(&format!("\"{}\"", ev.name())),
                "ui/js/ipc.js EVENTS lacks {}",
                ev.name()
            );
        }
    }
}
