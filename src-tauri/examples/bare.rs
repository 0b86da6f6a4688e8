//! A bare Tauri app showing the same windows as YUI (a 220×300 and a 170×232 transparent,
//! undecorated, always-on-top window with a static page), the baseline for
//! `tests/e2e/measure.sh`'s memory figures.

use tauri::{WebviewUrl, WebviewWindowBuilder};

fn main() {
    tauri::Builder::default()
        .setup(|app| {
            for (label, w, h, x) in [
                ("main", 220.0, 300.0, 1000.0),
                ("pet-bare", 170.0, 232.0, 780.0),
            ] {
                // A real static document (about:blank would not start a web process at all): the
                // start-up error page, which is a few lines of HTML and no IPC.
                let url = WebviewUrl::App("error.html#bare".into());
                WebviewWindowBuilder::new(app, label, url)
                    .inner_size(w, h)
                    .position(x, 440.0)
                    .transparent(true)
                    .decorations(false)
                    .always_on_top(true)
                    .skip_taskbar(true)
                    .build()?;
            }
            Ok(())
        })
        .run(tauri::generate_context!())
        .expect("bare app");
}
