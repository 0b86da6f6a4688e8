//! The global push-to-talk shortcut (`yui.voice.listen` `shortcut`, e.g. `Ctrl+Alt+Space`):
//! held anywhere on the desktop, the main character listens (the core's `Stage::mic_press`, then
//! `mic_release` when it is let go). On tauri-plugin-global-shortcut (global-hotkey underneath:
//! XGrabKey on X11), registered with the app at start; a shortcut that cannot be taken (bad
//! name, another program holds it, Wayland without X) is reported in Settings → Voice and
//! logged, and the in-window push-to-talk still works.

use crate::state::AppState;
use std::sync::Mutex;
use tauri::plugin::TauriPlugin;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_global_shortcut::{GlobalShortcutExt, ShortcutState};
use yui_core::voice::config::{self, ListenSettings, MicMode};
use yui_core::Store;

/// The shortcut taken last and how that went.
#[derive(Default)]
struct Taken(Mutex<Option<(String, Result<(), String>)>>);

/// The plugin, with the press and release handler.
pub fn plugin<R: Runtime>() -> TauriPlugin<R> {
    tauri_plugin_global_shortcut::Builder::new()
        .with_handler(|app, _shortcut, event| {
            // The handler runs on the event loop's thread, outside the async runtime the stage
            // starts its microphone task on: enter it (in order, so a release never overtakes
            // its press).
            let rt = tauri::async_runtime::handle();
            let _in_runtime = rt.inner().enter();
            match event.state {
                ShortcutState::Pressed => press(app),
                ShortcutState::Released => {
                    crate::stage::shell(app).stage.mic_release();
                }
            }
        })
        .build()
}

fn press<R: Runtime>(app: &AppHandle<R>) {
    let store = app.state::<AppState>().store.clone();
    let pressed = yui_core::presets::main_preset(&store).and_then(|main| {
        crate::stage::shell(app)
            .stage
            .mic_press(&main.id, yui_core::WindowKind::Main)
    });
    if let Err(e) = pressed {
        tracing::info!(error = %e.message, "push-to-talk shortcut");
    }
}

/// Take the stored shortcut when push-to-talk is on (and give back any other). Never fails: a
/// shortcut that cannot be taken is remembered for [`state`] and logged.
pub fn apply<R: Runtime>(app: &AppHandle<R>, store: &Store) {
    let Some(gs) = app.try_state::<tauri_plugin_global_shortcut::GlobalShortcut<R>>() else {
        return;
    };
    let listen = config::load_listen(store).unwrap_or_default();
    let want = listen
        .shortcut
        .clone()
        .filter(|_| listen.mode == MicMode::PushToTalk);
    let taken = app.state::<Taken>();
    let mut taken = taken.0.lock().unwrap_or_else(|p| p.into_inner());
    if taken.as_ref().map(|(k, _)| k) == want.as_ref() {
        return;
    }
    if let Err(e) = gs.unregister_all() {
        tracing::warn!(error = %e, "push-to-talk shortcut not released");
    }
    *taken = want.map(|key| {
        let r = app
            .global_shortcut()
            .register(key.as_str())
            .map_err(|e| format!("the shortcut {key} cannot be used: {e}"));
        if let Err(e) = &r {
            tracing::warn!("{e}");
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
        (_, Some(_)) if listen.mode == MicMode::PushToTalk => Some(Err(
            "the global shortcut is not available on this desktop".into(),
        )),
        _ => None,
    }
}

/// Register the plugin on the running app (a desktop where it cannot start keeps the app
/// running without it) and follow the stored settings, off the main thread (the plugin runs its
/// calls there and waits).
pub fn install<R: Runtime>(app: &AppHandle<R>) {
    app.manage(Taken::default());
    if let Err(e) = app.plugin(plugin()) {
        tracing::warn!(error = %e, "no global shortcuts on this desktop");
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        follow_settings(&app);
    });
}

/// Apply the stored mode and shortcut (at start and after a save).
pub fn follow_settings<R: Runtime>(app: &AppHandle<R>) {
    let store = app.state::<AppState>().store.clone();
    apply(app, &store);
    let main = match yui_core::presets::main_preset(&store) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(error = %e.message, "microphone: no main character");
            return;
        }
    };
    if let Err(e) = crate::stage::shell(app)
        .stage
        .mic_follow_settings(&main.id, yui_core::WindowKind::Main)
    {
        tracing::warn!(error = %e.message, "microphone settings not applied");
    }
}
