//! The shell's end of the display backend (docs/wayland.md): the choice made at start, before
//! GTK starts (`yui_core::display::decide`, with the compositor asked by `yui_wayland`), the
//! `GDK_BACKEND` it sets, the log line that says it, and where each backend keeps the characters'
//! places: an X11 session in the presets table as before, XWayland and the overlay layer in
//! `yui.display.places`, per output. The overlay layer itself is `windows::layer`.

use std::sync::OnceLock;
use tauri::{AppHandle, Manager, Runtime};
use yui_core::avatar::geometry::Rect;
use yui_core::display::places::{self, Screen};
use yui_core::display::{Backend, Choice, Output};
use yui_core::presets::Preset;

static CHOICE: OnceLock<Choice> = OnceLock::new();

/// How long after YUI shows a window its moves are the window manager's, not the user's: an
/// XWayland window manager reparents and places a window as it maps it, and GTK then reports
/// positions that are not where it is on screen (weston's: (0, 0)). Saving those would overwrite
/// the user's place.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(1500);

/// When each window (by label) was last shown by YUI, under XWayland.
static SHOWN: std::sync::Mutex<Vec<(String, std::time::Instant)>> =
    std::sync::Mutex::new(Vec::new());

/// YUI is about to show the window `label`.
pub fn mapping(label: &str) {
    if backend() != Backend::Xwayland {
        return;
    }
    let mut shown = SHOWN.lock().unwrap_or_else(|e| e.into_inner());
    shown.retain(|(l, _)| l != label);
    shown.push((label.to_string(), std::time::Instant::now()));
}

/// Whether a move of `label` now is the window manager settling it (see [`SETTLE`]).
pub fn settling(label: &str) -> bool {
    let shown = SHOWN.lock().unwrap_or_else(|e| e.into_inner());
    shown
        .iter()
        .any(|(l, at)| l == label && at.elapsed() < SETTLE)
}

/// Choose how the windows are shown and tell GTK (`GDK_BACKEND`). Call first in `main`, while
/// this is the process's only thread: it reads the stored setting from `db` without opening the
/// store, and asks the compositor on this thread. Returns the variables it set for this process
/// only (the programs YUI starts do not inherit them).
#[cfg(target_os = "linux")]
pub fn choose_before_gtk(db: &std::path::Path) -> Vec<String> {
    let preference = yui_core::display::stored_preference(db);
    let session = yui_core::display::Session::from_env(|k| std::env::var(k).ok());
    let choice = yui_core::display::decide(preference, &session, &yui_wayland::Registry);
    std::env::set_var("GDK_BACKEND", choice.backend.gdk_backend());
    let _ = CHOICE.set(choice);
    // The user's own GDK_BACKEND goes on to the programs YUI starts; one YUI set does not.
    match session.gdk_backend {
        Some(_) => Vec::new(),
        None => vec!["GDK_BACKEND".to_string()],
    }
}

/// Off Linux the system's own windows: nothing to choose.
#[cfg(not(target_os = "linux"))]
pub fn choose_before_gtk(_db: &std::path::Path) -> Vec<String> {
    Vec::new()
}

/// The choice made at start (`None` off Linux, or before [`choose_before_gtk`]).
pub fn choice() -> Option<&'static Choice> {
    CHOICE.get()
}

/// The backend the windows live in (`X11` off Linux: positions work the same way there).
pub fn backend() -> Backend {
    choice().map_or(Backend::X11, |c| c.backend)
}

/// Say the choice in the log, once logging runs.
pub fn log_choice() {
    let Some(c) = choice() else { return };
    let outputs: Vec<String> = c
        .outputs
        .iter()
        .map(|o| {
            format!(
                "{} {}x{}+{}+{}",
                o.name, o.rect.w, o.rect.h, o.rect.x, o.rect.y
            )
        })
        .collect();
    tracing::info!(
        backend = c.backend.key(),
        setting = c.preference.as_str(),
        reason = %c.reason,
        outputs = ?outputs,
        "display backend: {}",
        c.backend.describe()
    );
    if let Some(note) = c.note() {
        tracing::info!("{note}");
    }
}

/// What Settings → General shows: the backend, why, the setting, and the note.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DisplayView {
    pub backend: String,
    pub describe: String,
    pub reason: String,
    pub setting: String,
    pub note: Option<String>,
}

/// [`DisplayView`] of the choice made at start, with the setting as stored now (a change shows
/// at the next start).
pub fn view(store: &yui_core::Store) -> Result<DisplayView, yui_core::CoreError> {
    let stored = yui_core::settings::get(store, yui_core::display::KEY)?;
    let setting = yui_core::display::Preference::from_value(&stored)?;
    Ok(match choice() {
        Some(c) => DisplayView {
            backend: c.backend.key().into(),
            describe: c.backend.describe().into(),
            reason: c.reason.to_string(),
            setting: setting.as_str().into(),
            note: c.note().map(str::to_string),
        },
        None => DisplayView {
            backend: "native".into(),
            describe: "The system's own windows".into(),
            reason: "no choice was made when YUI started (not a Linux desktop)".into(),
            setting: setting.as_str().into(),
            note: None,
        },
    })
}

/// Store `backend` as `yui.display.backend` (refused in words unless auto, x11 or wayland).
pub fn set_preference(
    store: &yui_core::Store,
    backend: &str,
) -> Result<DisplayView, yui_core::CoreError> {
    let value = serde_json::Value::String(backend.to_string());
    yui_core::settings::set(store, yui_core::display::KEY, &value)?;
    view(store)
}

/// The outputs places are kept on under the current backend: the compositor's (logical
/// pixels, from the probe) on the overlay layer, else the monitors GTK reports (X11 pixels).
pub fn screens<R: Runtime>(app: &AppHandle<R>) -> Vec<Screen> {
    if backend() == Backend::LayerShell {
        return choice()
            .map(|c| c.outputs.iter().map(screen_of).collect())
            .unwrap_or_default();
    }
    app.available_monitors()
        .map(|ms| {
            ms.iter()
                .enumerate()
                .map(|(i, m)| Screen {
                    name: m
                        .name()
                        .cloned()
                        .unwrap_or_else(|| format!("monitor-{}", i + 1)),
                    rect: Rect::new(
                        m.position().x,
                        m.position().y,
                        m.size().width,
                        m.size().height,
                    ),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn screen_of(o: &Output) -> Screen {
    Screen {
        name: o.name.clone(),
        rect: o.rect,
    }
}

/// Where `preset` was saved under the current backend, in the coordinates placement uses (the
/// X11 desktop's; the overlay layer's outputs side by side as the compositor lays them out),
/// brought back on screen when off its output. `None`: never saved here (the default row).
pub fn saved_position<R: Runtime>(
    app: &AppHandle<R>,
    preset: &Preset,
    size: (u32, u32),
) -> Option<(i32, i32)> {
    let backend = backend();
    match backend {
        Backend::X11 => preset.pos_x.zip(preset.pos_y),
        Backend::Wayland => None,
        Backend::Xwayland | Backend::LayerShell => {
            let store = &app.state::<crate::state::AppState>().store;
            let mine = places::load(store, backend).ok().flatten();
            let screens = screens(app);
            let placed = places::restore(mine.as_ref(), &preset.id, &screens, size)?;
            let r = screens[placed.output].rect;
            Some((r.x + placed.at.0, r.y + placed.at.1))
        }
    }
}

/// Save `preset`'s position `(x, y)` (placement's coordinates) under the current backend: on
/// the output that holds its top-left corner (else the first), relative to it.
pub fn save_position<R: Runtime>(
    app: &AppHandle<R>,
    preset: &Preset,
    (x, y): (i32, i32),
) -> Result<(), yui_core::CoreError> {
    let store = &app.state::<crate::state::AppState>().store;
    let backend = backend();
    match backend {
        Backend::X11 => yui_core::presets::set_position(store, &preset.id, x, y).map(drop),
        // The compositor places the windows: nothing YUI reads is where they are.
        Backend::Wayland => Ok(()),
        Backend::Xwayland | Backend::LayerShell => {
            let screens = screens(app);
            let Some(s) = screens
                .iter()
                .find(|s| s.rect.contains((x, y)))
                .or(screens.first())
            else {
                return Ok(());
            };
            places::save(
                store,
                backend,
                &preset.id,
                &s.name,
                (x - s.rect.x, y - s.rect.y),
            )
        }
    }
}
