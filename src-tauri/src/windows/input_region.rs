//! Click-through: a character window's input region, as its page drew it (docs/avatar.md,
//! "Click-through"). The rectangles were checked in the core
//! (`yui_core::display::input_region`); here they only go to GTK, which gives them to the window
//! system: an X11 input shape (XShape `ShapeInput`) or a Wayland surface's input region
//! (`wl_surface.set_input_region`, on the overlay layer too), one code path. The window system
//! then does the hit test itself, so nothing of this runs at rest.
//!
//! The region is set on the GTK widget rather than its GDK window: GTK keeps it and sets it
//! again should the window be realized anew (a layer surface is remade when mapped).

use super::labels::character_label;
use crate::error::tauri_err;
use tauri::{Runtime, WebviewWindow};
use yui_core::display::input_region::InputRect;
use yui_core::CoreError;

/// The calling character window's size in logical pixels (the page's CSS pixels), which the
/// page's rectangles must fall in.
pub fn logical_size<R: Runtime>(window: &WebviewWindow<R>) -> Result<(f64, f64), CoreError> {
    character_label(window, "only a character window has an input region")?;
    let scale = window.scale_factor().map_err(tauri_err)?;
    let size = window
        .inner_size()
        .map_err(tauri_err)?
        .to_logical::<f64>(scale);
    Ok((size.width, size.height))
}

/// Give `window` the input region `rects` (`None`: the whole window), on the main thread.
pub fn apply<R: Runtime>(
    window: &WebviewWindow<R>,
    rects: Option<Vec<InputRect>>,
) -> Result<(), CoreError> {
    let w = window.clone();
    window
        .run_on_main_thread(move || {
            #[cfg(target_os = "linux")]
            if let Err(e) = gtk_side::apply(&w, rects.as_deref()) {
                tracing::warn!(label = w.label(), error = %e, "cannot set the window's input region");
            }
            #[cfg(not(target_os = "linux"))]
            let _ = (w, rects);
        })
        .map_err(tauri_err)
}

#[cfg(target_os = "linux")]
mod gtk_side {
    use super::*;
    use gtk::cairo::{RectangleInt, Region};
    use gtk::prelude::WidgetExt as _;

    pub(super) fn apply<R: Runtime>(
        window: &WebviewWindow<R>,
        rects: Option<&[InputRect]>,
    ) -> Result<(), tauri::Error> {
        let gw = window.gtk_window()?;
        let Some(rects) = rects else {
            gw.input_shape_combine_region(None);
            commit(&gw);
            tracing::debug!(label = window.label(), "input region: the whole window");
            return Ok(());
        };
        // The core checked them: inside the window, so within i32.
        let cairo_rects: Vec<RectangleInt> = rects
            .iter()
            .map(|r| RectangleInt::new(r.x as i32, r.y as i32, r.w as i32, r.h as i32))
            .collect();
        gw.input_shape_combine_region(Some(&Region::create_rectangles(&cairo_rects)));
        commit(&gw);
        tracing::debug!(
            label = window.label(),
            rects = rects.len(),
            "input region set"
        );
        Ok(())
    }

    /// On Wayland a surface's new input region takes effect at its next commit, and a window at
    /// rest paints (commits) nothing: ask GTK for one paint. X11's input shape is at once.
    fn commit(gw: &gtk::ApplicationWindow) {
        use yui_core::display::Backend;
        if matches!(
            crate::display::backend(),
            Backend::LayerShell | Backend::Wayland
        ) {
            gw.queue_draw();
        }
    }
}
