//! Whether a character window is on screen, told to its page through the stage
//! (`yui://visibility` `{hidden}` to that window, forwarded by stage.rs) when the window system
//! unmaps it (Show/Hide all, the window manager iconifying it,
//! a screen capture) and maps it again. The page then stops (or restarts) its ambient motions.
//! WebKit's own `visibilitychange` is not enough here: an iconified window's page stays
//! "visible" to WebKit and goes on painting blinks nobody sees (measured: docs/PERFORMANCE.md,
//! "Idle CPU").

use tauri::{Manager, Runtime, WebviewWindow};

/// Watch `window`'s map state (GTK's map/unmap events, on the main thread).
#[cfg(target_os = "linux")]
pub fn watch<R: Runtime>(window: &WebviewWindow<R>) {
    use gtk::prelude::WidgetExtManual as _;
    let w = window.clone();
    let r = window.run_on_main_thread(move || {
        let Ok(gtk_window) = w.gtk_window() else {
            return;
        };
        let on_map = w.clone();
        gtk_window.connect_map_event(move |_, _| {
            tell(&on_map, false);
            gtk::glib::Propagation::Proceed
        });
        let on_unmap = w.clone();
        gtk_window.connect_unmap_event(move |_, _| {
            tell(&on_unmap, true);
            gtk::glib::Propagation::Proceed
        });
    });
    if let Err(e) = r {
        tracing::warn!(label = window.label(), error = %e, "cannot watch the window's visibility");
    }
}

#[cfg(not(target_os = "linux"))]
pub fn watch<R: Runtime>(_window: &WebviewWindow<R>) {}

fn tell<R: Runtime>(w: &WebviewWindow<R>, hidden: bool) {
    tracing::debug!(label = w.label(), hidden, "window visibility");
    let Some(window) = crate::label::WindowLabel::parse(w.label()).and_then(|l| l.window()) else {
        return;
    };
    let app = w.app_handle();
    app.state::<crate::state::AppState>()
        .tell(crate::state::Fact::Shown { window, hidden });
}
