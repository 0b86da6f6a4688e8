//! The global push-to-talk shortcut (`yui.voice.listen` `shortcut`, e.g. `Ctrl+Alt+Space`):
//! held anywhere on the desktop, the main character listens (the core's `Stage::mic_press`, then
//! `mic_release` when it is let go). Taken on the X11 desktop host's own connection
//! (`yui_x11::hotkey`: XGrabKey, its press and release read by the host's event thread, which
//! sleeps in the connection's file descriptor: no polling), and only while push-to-talk with a
//! shortcut is on. A shortcut that cannot be taken (bad name, another program holds it, Wayland
//! or no X) is reported in Settings → Voice and logged, and the in-window push-to-talk still
//! works.

use crate::avatar::{Keys, SHORTCUT_UNAVAILABLE as UNAVAILABLE};
use crate::state::AppState;
use std::sync::{Arc, Mutex};
use tauri::{AppHandle, Manager, Runtime};
use yui_core::stage::Window;
use yui_core::voice::config::{self, ListenSettings, MicMode};
use yui_core::Store;

/// The shortcut taken last and how that went.
#[derive(Default)]
struct Taken(Mutex<Option<(String, Result<(), String>)>>);

/// What the shortcut's press and release do (called on the X event thread).
fn handler<R: Runtime>(app: &AppHandle<R>) -> Arc<dyn Fn(bool) + Send + Sync> {
    let app = app.clone();
    Arc::new(move |down| {
        // The stage starts its microphone task on the async runtime: enter it (the X event
        // thread calls in order, so a release never overtakes its press).
        let rt = tauri::async_runtime::handle();
        let _in_runtime = rt.inner().enter();
        if down {
            press(&app);
        } else {
            crate::stage::shell(&app).stage.mic_release();
        }
    })
}

fn press<R: Runtime>(app: &AppHandle<R>) {
    // The main window's character: the stage knows which.
    let pressed = crate::stage::shell(app).stage.mic_press(Window::Main);
    if let Err(e) = pressed {
        tracing::info!(error = %e.message, "push-to-talk shortcut");
    }
}

/// Take the stored shortcut when push-to-talk is on, and give it back otherwise (nothing is
/// grabbed, and nothing wakes, while it is not wanted). Never fails: a shortcut that cannot be
/// taken is remembered for [`state`] and logged.
pub fn apply<R: Runtime>(app: &AppHandle<R>, store: &Store) {
    let host = app.try_state::<Keys>().and_then(|k| k.0.clone());
    let listen = config::load_listen(store).unwrap_or_default();
    let want = listen
        .shortcut
        .clone()
        .filter(|_| listen.mode == MicMode::PushToTalk);
    let Some(taken) = app.try_state::<Taken>() else {
        return;
    };
    let mut taken = taken.0.lock().unwrap_or_else(|p| p.into_inner());
    if taken.as_ref().map(|(k, _)| k) == want.as_ref() {
        return;
    }
    if let Some(h) = &host {
        h.give_back_shortcut();
    }
    *taken = want.map(|key| {
        let r = match &host {
            None => Err(UNAVAILABLE.to_string()),
            Some(h) => h
                .take_shortcut(&key, handler(app))
                .map_err(|e| format!("the shortcut {key} cannot be used: {e}")),
        };
        match &r {
            Ok(()) => tracing::info!(%key, "push-to-talk shortcut taken"),
            Err(e) => tracing::warn!("{e}"),
        }
        (key, r)
    });
}

/// Whether the stored shortcut is taken (`None`: none is set, or push-to-talk is off).
pub fn state<R: Runtime>(
    app: &AppHandle<R>,
    listen: &ListenSettings,
) -> Option<Result<(), String>> {
    let taken = app.try_state::<Taken>()?;
    let taken = taken.0.lock().unwrap_or_else(|p| p.into_inner());
    match (&*taken, &listen.shortcut) {
        (Some((k, r)), Some(want)) if k == want => Some(r.clone()),
        (_, Some(_)) if listen.mode == MicMode::PushToTalk => Some(Err(UNAVAILABLE.into())),
        _ => None,
    }
}

/// Follow the stored settings from start (after `avatar::install`, which makes the host), off
/// the main thread (the grab waits for the X server's answer).
pub fn install<R: Runtime>(app: &AppHandle<R>) {
    app.manage(Taken::default());
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        follow_settings(&app);
    });
}

/// Apply the stored mode and shortcut (at start and after a save).
pub fn follow_settings<R: Runtime>(app: &AppHandle<R>) {
    let store = app.state::<AppState>().store.clone();
    apply(app, &store);
    if let Err(e) = crate::stage::shell(app)
        .stage
        .mic_follow_settings(Window::Main)
    {
        tracing::warn!(error = %e.message, "microphone settings not applied");
    }
}
