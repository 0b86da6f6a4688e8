//! The characters on a Wayland compositor's overlay layer (zwlr_layer_shell_v1, through
//! gtk-layer-shell): above every normal window, anchored to the top-left corner of the output
//! they were put on and placed by margins from it. A drag moves the margins (a layer surface
//! cannot be moved by the compositor's own move), and where the drag ends is saved for that
//! output (`crate::display`).
//!
//! Placement's coordinates here are the compositor's layout in logical pixels (the probe's
//! outputs side by side); `at` is turned into an output and margins from its corner.

use super::labels::{preset_for, WindowLabel};
use crate::error::tauri_err;
use tauri::{AppHandle, Runtime, WebviewWindow};
use yui_core::avatar::geometry::Rect;
use yui_core::display::Backend;
use yui_core::CoreError;

/// Pixels the pointer must travel before a press becomes a drag (the page's own threshold).
#[cfg(target_os = "linux")]
const DRAG_THRESHOLD: f64 = 4.0;

/// Whether the characters live on the overlay layer.
pub fn on() -> bool {
    crate::display::backend() == Backend::LayerShell
}

/// Where YUI last put each character window, or the user's drag left it (by label), in the
/// layout's coordinates: GTK reports every layer surface at (0, 0), so the body asks here.
static AT: std::sync::Mutex<Vec<(String, (i32, i32))>> = std::sync::Mutex::new(Vec::new());

fn remember(label: &WindowLabel, at: (i32, i32)) {
    let label = label.as_label();
    let mut all = AT.lock().unwrap_or_else(|p| p.into_inner());
    all.retain(|(l, _)| *l != label);
    all.push((label, at));
}

/// Where the character window `label` is on the layout, as last put or dragged.
pub fn position(label: &WindowLabel) -> Option<(i32, i32)> {
    let label = label.as_label();
    let all = AT.lock().unwrap_or_else(|p| p.into_inner());
    all.iter().find(|(l, _)| *l == label).map(|(_, at)| *at)
}

/// The output holding `at` (else the first) and `at`'s margins from its corner.
fn output_at(at: (i32, i32)) -> Option<(Rect, (i32, i32))> {
    let outputs = &crate::display::choice()?.outputs;
    let o = outputs
        .iter()
        .find(|o| o.rect.contains(at))
        .or(outputs.first())?;
    Some((o.rect, (at.0 - o.rect.x, at.1 - o.rect.y)))
}

/// Make `window` (built hidden, not yet shown) a surface of the overlay layer and put it at
/// `at`; on the main thread, ahead of the show that follows.
pub fn place<R: Runtime>(
    app: &AppHandle<R>,
    window: &WebviewWindow<R>,
    label: WindowLabel,
    at: (i32, i32),
    size: (f64, f64),
) -> Result<(), CoreError> {
    let Some((output, margins)) = output_at(at) else {
        return Err(CoreError::internal("the compositor named no output"));
    };
    remember(&label, (output.x + margins.0, output.y + margins.1));
    let (w, app) = (window.clone(), app.clone());
    window
        .run_on_main_thread(move || {
            #[cfg(target_os = "linux")]
            if let Err(e) = gtk_side::place(&app, &w, label, output, margins, size) {
                tracing::warn!(error = %e, "placing a character on the overlay layer failed");
            }
            #[cfg(not(target_os = "linux"))]
            let _ = (app, w, label, output, margins, size);
        })
        .map_err(tauri_err)
}

#[cfg(target_os = "linux")]
mod gtk_side {
    // The parent module by its full path: `super` would read as `windows` to the shell's
    // import-cycle check (src-tauri/tests/shell_rules.rs), and `avatar.rs` places the body here.
    use crate::windows::layer::*;
    use gtk::prelude::*;
    use gtk_layer_shell::{Edge, KeyboardMode, Layer, LayerShell};
    use std::cell::Cell;
    use std::rc::Rc;

    pub(super) fn place<R: Runtime>(
        app: &AppHandle<R>,
        window: &WebviewWindow<R>,
        label: WindowLabel,
        output: Rect,
        margins: (i32, i32),
        (w, h): (f64, f64),
    ) -> Result<(), tauri::Error> {
        let gw = window.gtk_window()?;
        if !gw.is_layer_window() {
            // Layer surfaces are made when the window is first mapped: it must not be yet.
            if gw.is_realized() {
                tracing::debug!(label = %label.as_label(), "unrealized before the layer surface");
                gw.unrealize();
            }
            gw.init_layer_shell();
            gw.set_layer(Layer::Overlay);
            gw.set_namespace("yui");
            // The chat input takes the keyboard when clicked, and gives it back.
            gw.set_keyboard_mode(KeyboardMode::OnDemand);
            gw.set_anchor(Edge::Top, true);
            gw.set_anchor(Edge::Left, true);
            gw.set_exclusive_zone(-1);
            // A layer surface takes its size from the request (WebKit asks for none).
            gw.set_size_request(w.round() as i32, h.round() as i32);
            drag_moves_margins(app.clone(), &gw, label, output, (w as i32, h as i32));
        }
        if let Some(m) = monitor_of(&gw, output) {
            gw.set_monitor(&m);
        }
        gw.set_layer_shell_margin(Edge::Left, margins.0);
        gw.set_layer_shell_margin(Edge::Top, margins.1);
        Ok(())
    }

    /// Put `window`'s margins at `start` moved by `(dx, dy)`, wholly on `output`.
    fn move_to(
        window: &gtk::ApplicationWindow,
        start: (i32, i32),
        (dx, dy): (f64, f64),
        output: Rect,
        size: (i32, i32),
    ) {
        let at = (start.0 + dx.round() as i32, start.1 + dy.round() as i32);
        let area = Rect::new(0, 0, output.w, output.h);
        let (x, y) = yui_core::display::places::on_screen(at, (size.0 as u32, size.1 as u32), area);
        window.set_layer_shell_margin(Edge::Left, x);
        window.set_layer_shell_margin(Edge::Top, y);
    }

    /// The GDK monitor the compositor's output `r` is (GDK names no connectors: by geometry).
    fn monitor_of(gw: &gtk::ApplicationWindow, r: Rect) -> Option<gtk::gdk::Monitor> {
        let display = gw.display();
        (0..display.n_monitors())
            .filter_map(|i| display.monitor(i))
            .find(|m| {
                let g = m.geometry();
                (g.x(), g.y(), g.width(), g.height()) == (r.x, r.y, r.w as i32, r.h as i32)
            })
    }

    /// A press that travels moves the margins; its end is saved for the output. The gesture
    /// sees the pointer before the page does (capture phase) and claims nothing, so the page's
    /// click (open the chat) and its own drag threshold work as on X11.
    fn drag_moves_margins<R: Runtime>(
        app: AppHandle<R>,
        gw: &gtk::ApplicationWindow,
        label: WindowLabel,
        output: Rect,
        size: (i32, i32),
    ) {
        let drag = gtk::GestureDrag::new(gw);
        drag.set_button(1);
        drag.set_propagation_phase(gtk::PropagationPhase::Capture);
        let moving = Rc::new(Cell::new(false));
        // The margins when the press began: GTK gives a drag's offset as the pointer's travel
        // since the press (it keeps it right while the surface moves under it), so the window
        // goes to where it began plus that travel.
        let start = Rc::new(Cell::new((0, 0)));
        let (s, window) = (start.clone(), gw.clone());
        drag.connect_drag_begin(move |_, _, _| {
            s.set((
                window.layer_shell_margin(Edge::Left),
                window.layer_shell_margin(Edge::Top),
            ));
        });
        let (m, s, window) = (moving.clone(), start.clone(), gw.clone());
        drag.connect_drag_update(move |_, dx, dy| {
            if !m.get() && dx.hypot(dy) < DRAG_THRESHOLD {
                return;
            }
            m.set(true);
            move_to(&window, s.get(), (dx, dy), output, size);
        });
        let window = gw.clone();
        drag.connect_drag_end(move |_, dx, dy| {
            if !moving.replace(false) {
                return;
            }
            move_to(&window, start.get(), (dx, dy), output, size);
            let at = (
                output.x + window.layer_shell_margin(Edge::Left),
                output.y + window.layer_shell_margin(Edge::Top),
            );
            remember(&label, at);
            let saved = preset_for(&app, &label)
                .and_then(|p| crate::display::save_position(&app, &p, at));
            match saved {
                Ok(()) => tracing::info!(label = %label.as_label(), x = at.0, y = at.1, "character put on the overlay layer"),
                Err(e) => tracing::warn!(error = %e.message, "saving the character's place failed"),
            }
        });
        // The gesture lives as long as the window (GTK 3 gestures are owned by their caller).
        unsafe { gw.set_data("yui-drag", drag) };
    }
}
