//! The shell's end of the core's [`Stage`], in one place:
//! - it creates the stage with the app's store when the app starts;
//! - it reports every window that opens or closes ([`Stage::window_opened`],
//!   [`Stage::window_closed`]) — the stage decides what that means for the characters;
//! - one task forwards each [`StageEvent`] to the windows it names ([`StageEvent::to`]) as its
//!   bridge event ([`BridgeEvent::of`]) with its payload ([`StageEvent::payload`]): turns played
//!   on a character's window, playback, addressed turns, push connections, and the core's change
//!   events (presets, switches, vocabulary, relations, settings);
//! - it tells the core's [`Trimmer`] what the stage does.
//!
//! It keeps no state of its own and reads nothing from the store: whose turn runs, which window
//! shows a preset and where a turn plays are the stage's (`tests/shell_rules.rs` checks it).

use crate::bridge::{self, BridgeEvent};
use crate::presence::{UserDesktop, UserIdle};
use crate::state::{AppState, Fact};
use crate::windows::WindowLabel;
use std::sync::Arc;
use tauri::plugin::TauriPlugin;
use tauri::{AppHandle, Emitter, Manager, RunEvent, Runtime, State, WindowEvent};
use yui_core::manners::mpris::Mpris;
use yui_core::manners::probes::{BusyProbes, WithDesktop, WithTyping};
use yui_core::manners::system::{Session, SystemProbes};
use yui_core::presence::Pace;
use yui_core::stage::{inbox, Stage, StageEvent, StageOptions, To};
use yui_core::trim::Trimmer;
use yui_core::turn::CancellationToken;

/// The app's stage.
pub struct Shell {
    pub stage: Stage,
}

/// The app's stage, created (with its forwarder) on first use.
pub fn shell<R: Runtime>(app: &AppHandle<R>) -> State<'_, Shell> {
    if app.try_state::<Shell>().is_none() {
        let state = app.state::<AppState>();
        let (stage, mut rx) = Stage::new(
            state.store.clone(),
            state.clock.clone(),
            state.paths.clone(),
            StageOptions::default(),
        );
        // Gives the allocator's free pages back once the turns have ended (`yui_core::trim`).
        let trimmer = Trimmer::new();
        // Other programs (`yui event`, `yui quiet`, `yui mcp-serve`) reach it through its inbox.
        let (inbox, socket) = (stage.clone(), inbox::socket_path(&state.paths.data_dir));
        if app.manage(Shell {
            stage: stage.clone(),
        }) {
            tauri::async_runtime::spawn(async move {
                if let Err(e) = inbox.serve_inbox(socket).await {
                    tracing::warn!(error = %e.message, "the inbox is closed: yui event cannot reach this app");
                }
            });
            // What the shell observed on the platform (the user away, a window unmapped, the
            // body's state) reaches the windows as the stage's events, like every other.
            if let Some(mut facts) = state.take_facts() {
                tauri::async_runtime::spawn(async move {
                    while let Some(f) = facts.recv().await {
                        match f {
                            Fact::Presence { asleep } => stage.presence_changed(asleep),
                            Fact::Shown { window, hidden } => stage.window_shown(window, hidden),
                            Fact::Body(state) => stage.body_changed(state),
                            Fact::Looking(looking) => stage.looking(looking),
                        }
                    }
                });
            }
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                while let Some(ev) = rx.recv().await {
                    trimmer.observe(&ev);
                    forward(&app, &ev);
                }
            });
        }
    }
    app.state::<Shell>()
}

/// The proactive triggers (back, morning, night) and the typing probe run on the user's idle
/// time, where the platform has one (presence.rs keeps it); docs/proactive.md.
pub fn watch_user<R: Runtime>(app: &AppHandle<R>) {
    aware(app);
    let Some(idle) = app.try_state::<UserIdle>().map(|u| u.0.clone()) else {
        return;
    };
    let stage = shell(app).stage.clone();
    // The camera and screen recorders (/proc), the microphone (the sound server).
    let system: Arc<dyn BusyProbes> = Arc::new(SystemProbes::system());
    let rest: Arc<dyn BusyProbes> = match app.try_state::<UserDesktop>() {
        Some(d) => Arc::new(WithDesktop {
            desktop: d.0.clone(),
            rest: system,
        }),
        None => system,
    };
    stage.set_busy_probes(Arc::new(WithTyping {
        idle: idle.clone(),
        rest,
    }));
    tauri::async_runtime::spawn(async move {
        stage
            .watch_presence(idle, Pace::APP, CancellationToken::new())
            .await
    });
}

/// Awareness (off until the user switches it on): the active app from the desktop host, what
/// plays from MPRIS, watched on the app's runtime.
fn aware<R: Runtime>(app: &AppHandle<R>) {
    let _rt = tauri::async_runtime::handle().inner().enter();
    let desktop = app.try_state::<UserDesktop>().map(|d| d.0.clone());
    shell(app).stage.set_awareness(Arc::new(Session {
        desktop,
        playing: Mpris::new(None),
    }));
}

/// The plugin that starts the stage with the app and reports windows opening and closing.
pub fn plugin<R: Runtime>() -> TauriPlugin<R> {
    tauri::plugin::Builder::new("yui-stage")
        .setup(|app, _| {
            shell(app);
            Ok(())
        })
        .on_webview_ready(|webview| {
            if let Some(w) = WindowLabel::parse(webview.label()).and_then(|l| l.window()) {
                // This hook runs on the event loop's thread, outside the async runtime, and a
                // window opening starts its push or realtime session's task there (without the
                // runtime entered the app panicked at start with either transport configured).
                let rt = tauri::async_runtime::handle();
                let _in_runtime = rt.inner().enter();
                shell(webview.app_handle()).stage.window_opened(w);
            }
        })
        .on_event(|app, ev| {
            if let RunEvent::WindowEvent {
                label,
                event: WindowEvent::Destroyed,
                ..
            } = ev
            {
                if let Some(w) = WindowLabel::parse(label).and_then(|l| l.window()) {
                    let rt = tauri::async_runtime::handle();
                    let _in_runtime = rt.inner().enter();
                    shell(app).stage.window_closed(w);
                }
            }
        })
        .build()
}

/// Send `ev` to the windows it names.
fn forward<R: Runtime>(app: &AppHandle<R>, ev: &StageEvent) {
    let Some(name) = BridgeEvent::of(ev) else {
        return;
    };
    match ev.to() {
        To::Every => bridge::emit(app, name, ev.payload()),
        To::Only(windows) if windows.is_empty() => {}
        To::Only(windows) => {
            let payload = ev.payload();
            for w in windows {
                let label = WindowLabel::from(&w).as_label();
                if let Err(e) = app.emit_to(label.as_str(), name.name(), &payload) {
                    tracing::debug!(label, error = %e, "an event for a closed window");
                }
            }
        }
    }
}
