//! Building windows: the character windows (opened where [`yui_core::layout`] places them),
//! settings, quick controls and phones, and opening or closing them as the store says.

use super::labels::{label_for, WindowLabel};
use super::positions::{self, flush_positions};
use crate::error::tauri_err;
use crate::gestures::RefuseNewWindows as _;
use crate::state::AppState;
use tauri::{
    AppHandle, Manager, PhysicalPosition, Runtime, WebviewUrl, WebviewWindow, WebviewWindowBuilder,
};
use yui_core::layout::{self, Seat};
use yui_core::presets::{self, Preset};
use yui_core::CoreError;

/// Logical sizes of the tool windows (the characters' are in [`yui_core::layout`]).
const SETTINGS_SIZE: (f64, f64) = (720.0, 640.0);
pub(super) const QUICK_SIZE: (f64, f64) = (320.0, 360.0);
const PHONE_SIZE: (f64, f64) = (360.0, 580.0);

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
    let (monitors, primary) = positions::screens(app);
    let at = layout::place_one(seat(app, preset), slot, &monitors, primary);
    open_at(app, preset, at)
}

/// Open (or show) the window of `preset`, placed at `at` when it is built.
fn open_at<R: Runtime>(
    app: &AppHandle<R>,
    preset: &Preset,
    at: (i32, i32),
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
                    return place_and_show(app, built?, preset, at);
                }
            }
        }
    }
    let window = character_builder(app, preset).build().map_err(tauri_err)?;
    place_and_show(app, window, preset, at)
}

fn character_builder<'a, R: Runtime>(
    app: &'a AppHandle<R>,
    preset: &Preset,
) -> WebviewWindowBuilder<'a, R, AppHandle<R>> {
    let store = &app.state::<AppState>().store;
    let (w, h) = yui_core::vrm::look::window_size_in(store, preset);
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
    (x, y): (i32, i32),
) -> Result<WebviewWindow<R>, CoreError> {
    if super::layer::on() {
        let size = yui_core::vrm::look::window_size_in(&app.state::<AppState>().store, preset);
        super::layer::place(app, &window, label_for(preset), (x, y), size)?;
    } else {
        window
            .set_position(PhysicalPosition::new(x, y))
            .map_err(tauri_err)?;
    }
    crate::visibility::watch(&window);
    crate::display::mapping(window.label());
    window.show().map_err(tauri_err)?;
    // XWayland's window managers (weston's) place a window anew when it maps.
    if crate::display::backend() == yui_core::display::Backend::Xwayland {
        window
            .set_position(PhysicalPosition::new(x, y))
            .map_err(tauri_err)?;
    }
    Ok(window)
}

/// A preset as placement sees it: where it was saved under the current display backend.
fn seat<R: Runtime>(app: &AppHandle<R>, p: &Preset) -> Seat {
    Seat {
        is_main: p.is_main,
        saved: positions::saved_position(app, p),
        zoom: layout::scale(&app.state::<AppState>().store),
    }
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
    let open: Vec<&Preset> = std::iter::once(&main)
        .chain(all.iter().filter(|p| p.id != main.id && p.is_open))
        .collect();
    // A saved layout that is stacked or off every monitor is laid out afresh, as a whole.
    let seats: Vec<Seat> = open.iter().map(|p| seat(app, p)).collect();
    let (monitors, primary) = positions::screens(app);
    let places = layout::lay_out(&seats, &monitors, primary);
    for (p, at) in open.into_iter().zip(places) {
        open_at(app, p, at)?;
    }
    for p in all.iter().filter(|p| p.id != main.id && !p.is_open) {
        close_character(app, p)?;
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

/// A VRM character window read its look: give the window the size the model's framing asks
/// (`yui_core::vrm::look::window_size`), in case the look changed since the window was built
/// (a model chosen in the look picker reloads the page, not the window). The overlay layer
/// keeps the size it was placed with.
pub fn fit_character<R: Runtime, T>(
    window: &WebviewWindow<R>,
    look: Result<T, CoreError>,
) -> Result<T, CoreError> {
    let look = look?;
    let preset = super::labels::calling_preset(window, "a VRM look belongs to a character window")?;
    let (w, h) = yui_core::vrm::look::window_size_in(&window.state::<AppState>().store, &preset);
    if !super::layer::on() {
        let now = super::input_region::logical_size(window)?;
        if (now.0 - w).abs() > 0.5 || (now.1 - h).abs() > 0.5 {
            window
                .set_size(tauri::LogicalSize::new(w, h))
                .map_err(tauri_err)?;
        }
    }
    Ok(look)
}
