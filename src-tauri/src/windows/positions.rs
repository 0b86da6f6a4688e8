//! Where character windows are: the saved positions (written once a window rests after the
//! user's drag, flushed before Quit, kept across Show/Hide all), never written when the windowing
//! system cannot know them (Wayland), and the monitors placement reads.

use super::labels::{preset_for, WindowLabel};
use crate::error::tauri_err;
use crate::state::AppState;
use std::sync::OnceLock;
use std::time::Duration;
use tauri::{AppHandle, Manager, PhysicalPosition, Runtime, WindowEvent};
use yui_core::avatar::geometry::Rect;
use yui_core::layout::{Screen, WindowSystem};
use yui_core::presets::Preset;

/// How long a window must rest after a move before its position is written.
const SAVE_POSITION_AFTER: Duration = Duration::from_millis(600);

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
    for (label, w) in chars {
        let r = if any_visible {
            match w.outer_position().map_err(tauri_err) {
                Ok(pos) => save_position(app, &label, pos.x, pos.y),
                Err(e) => {
                    tracing::warn!(label = w.label(), error = %e.message, "keeping the position failed")
                }
            }
            w.hide()
        } else {
            let saved = preset_for(app, &label)
                .ok()
                .and_then(|p| saved_position(app, &p))
                .map(|(x, y)| PhysicalPosition::new(x, y));
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

/// Write a character's position, unless the windowing system cannot know it: under Wayland GTK
/// reports every window at (0, 0), and saving that stacks every character in one corner in the
/// next session that can place windows.
fn save_position<R: Runtime>(app: &AppHandle<R>, label: &WindowLabel, x: i32, y: i32) {
    if !window_system().knows_positions() {
        return;
    }
    let saved = preset_for(app, label).and_then(|p| crate::display::save_position(app, &p, (x, y)));
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
                // A move YUI made (the avatar's glide) is never saved as the user's drag, nor
                // an XWayland window manager's placing of a window it just mapped.
                if crate::display::settling(&label.as_label()) {
                    tracing::debug!(label = %label.as_label(), x = pos.x, y = pos.y, "placed by the window manager; not saved");
                } else if !crate::avatar::on_moved(window.app_handle(), &label, (pos.x, pos.y)) {
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

static WINDOW_SYSTEM: OnceLock<WindowSystem> = OnceLock::new();

/// Learn which windowing system the windows live in. Call once on the main thread after GTK
/// started (the app's setup); until then the environment alone decides.
pub fn learn_window_system() {
    let _ = WINDOW_SYSTEM.set(detect_window_system());
    tracing::info!(system = ?window_system(), "windowing system");
}

fn window_system() -> WindowSystem {
    *WINDOW_SYSTEM.get_or_init(|| from_env(None))
}

#[cfg(target_os = "linux")]
fn detect_window_system() -> WindowSystem {
    use gtk::glib::prelude::ObjectExt as _;
    let display = gtk::gdk::Display::default().map(|d| d.type_().name().to_string());
    from_env(display.as_deref())
}

#[cfg(not(target_os = "linux"))]
fn detect_window_system() -> WindowSystem {
    WindowSystem::Other
}

fn from_env(display_type: Option<&str>) -> WindowSystem {
    if !cfg!(target_os = "linux") {
        return WindowSystem::Other;
    }
    let var = |k| std::env::var(k).ok();
    WindowSystem::of_gtk(
        display_type,
        var("GDK_BACKEND").as_deref(),
        var("WAYLAND_DISPLAY").as_deref(),
    )
}

/// Where `preset` was saved under the current display backend, in placement's coordinates.
pub(super) fn saved_position<R: Runtime>(app: &AppHandle<R>, p: &Preset) -> Option<(i32, i32)> {
    let scale = screens(app).1.map_or(1.0, |s| s.scale);
    let (w, h) = yui_core::vrm::look::window_size_in(&app.state::<AppState>().store, p);
    let size = ((w * scale).round() as u32, (h * scale).round() as u32);
    crate::display::saved_position(app, p, size)
}

/// The monitors (their rectangles) and the primary one with its scale, for placement. On the
/// overlay layer: the compositor's outputs in logical pixels, the first as the primary.
pub(super) fn screens<R: Runtime>(app: &AppHandle<R>) -> (Vec<Rect>, Option<Screen>) {
    if super::layer::on() {
        let outputs: Vec<Rect> = crate::display::choice()
            .map(|c| c.outputs.iter().map(|o| o.rect).collect())
            .unwrap_or_default();
        let primary = outputs.first().map(|&rect| Screen { rect, scale: 1.0 });
        return (outputs, primary);
    }
    let rect = |m: &tauri::Monitor| {
        let (p, s) = (m.position(), m.size());
        Rect::new(p.x, p.y, s.width, s.height)
    };
    let monitors = app
        .available_monitors()
        .map(|ms| ms.iter().map(rect).collect())
        .unwrap_or_default();
    let primary = app.primary_monitor().ok().flatten().map(|m| Screen {
        rect: rect(&m),
        scale: m.scale_factor(),
    });
    (monitors, primary)
}
