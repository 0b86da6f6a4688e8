//! The global push-to-talk shortcut (`yui.voice.listen` `shortcut`, e.g. `Ctrl+Alt+Space`):
//! held anywhere on the desktop, the main character listens (the core's `Stage::mic_press`, then
//! `mic_release` when it is let go). Taken through the domain's `GlobalShortcut` seam, which
//! `avatar.rs` picks per display backend: on an X11 session the X11 desktop host's own
//! connection (`yui_x11::hotkey`: XGrabKey, read by the host's event thread, which sleeps in the
//! connection's file descriptor: no polling); on the Wayland backends the desktop's
//! GlobalShortcuts portal (`display::shortcuts_portal`: `Activated`/`Deactivated` are the press
//! and release), under XWayland the portal first and the grab where no portal answers. Taken
//! only while push-to-talk with a shortcut is on. Where the desktop binds the keys (the portal),
//! how it describes them, also after the user rebinds them in its settings, is shown in
//! Settings → Voice ([`trigger`]). A shortcut that cannot be taken (bad name,
//! another program holds it, no portal, the desktop declined, no X) is one plain line in
//! Settings → Voice and in the log, and the in-window push-to-talk still works.

use crate::avatar::{Keys, SHORTCUT_UNAVAILABLE as UNAVAILABLE};
use crate::state::AppState;
use std::sync::{Arc, Mutex};
use tauri::{AppHandle, Manager, Runtime};
use yui_core::stage::Window;
use yui_core::voice::config::{self, ListenSettings, MicMode};
use yui_core::Store;

/// The shortcut taken last and how that went; `applying` lets one apply run at a time without
/// holding the state while the desktop answers (the portal may ask the user first), so Settings
/// can show "waiting" meanwhile.
#[derive(Default)]
struct Taken {
    state: Mutex<Option<(String, Result<(), String>)>>,
    applying: Mutex<()>,
}

impl Taken {
    fn state(&self) -> std::sync::MutexGuard<'_, Option<(String, Result<(), String>)>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What Settings → Voice says while the desktop has not answered yet.
const WAITING: &str = "waiting for the desktop to bind the shortcut";

/// What the shortcut's press and release do (called, in order, on the thread that hears them:
/// the X event thread, the portal session's thread).
fn handler<R: Runtime>(app: &AppHandle<R>) -> Arc<dyn Fn(bool) + Send + Sync> {
    let app = app.clone();
    Arc::new(move |down| {
        // The stage starts its microphone task on the async runtime: enter it (the caller
        // calls in order, so a release never overtakes its press).
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
    let _one = taken.applying.lock().unwrap_or_else(|p| p.into_inner());
    if taken.state().as_ref().map(|(k, _)| k) == want.as_ref() {
        return;
    }
    if let Some(h) = &host {
        h.give_back();
    }
    let Some(key) = want else {
        *taken.state() = None;
        return;
    };
    *taken.state() = Some((key.clone(), Err(WAITING.into())));
    let r = match &host {
        None => Err(UNAVAILABLE.to_string()),
        Some(h) => h
            .take(&key, handler(app))
            .map_err(|e| format!("the shortcut {key} cannot be used: {e}")),
    };
    match &r {
        Ok(()) => tracing::info!(%key, "push-to-talk shortcut taken"),
        Err(e) => tracing::warn!("{e}"),
    }
    *taken.state() = Some((key, r));
}

/// Whether the stored shortcut is taken (`None`: none is set, or push-to-talk is off).
pub fn state<R: Runtime>(
    app: &AppHandle<R>,
    listen: &ListenSettings,
) -> Option<Result<(), String>> {
    let taken = app.try_state::<Taken>()?;
    let taken = taken.state();
    match (&*taken, &listen.shortcut) {
        (Some((k, r)), Some(want)) if k == want => Some(r.clone()),
        (_, Some(_)) if listen.mode == MicMode::PushToTalk => Some(Err(UNAVAILABLE.into())),
        _ => None,
    }
}

/// How the desktop describes the keys bound to the shortcut now, where the desktop chose them
/// (the portal: the user may rebind it in the desktop's settings at any time); `None` where the
/// setting's own keys are grabbed or nothing is taken.
pub fn trigger<R: Runtime>(app: &AppHandle<R>) -> Option<String> {
    app.try_state::<Keys>()?.0.as_ref()?.trigger()
}

/// Follow the stored settings from start (after `avatar::install`, which makes the host), off
/// the main thread and the async ones (the grab waits for the X server's answer, the portal
/// for the desktop's, which may ask the user).
pub fn install<R: Runtime>(app: &AppHandle<R>) {
    app.manage(Taken::default());
    let app = app.clone();
    tauri::async_runtime::spawn_blocking(move || follow_settings(&app));
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
