//! The shell's end of the core's presence watch (`yui_core::presence`): runs it on the X11
//! host's idle time and hands each change to the stage, which tells every window
//! (`yui://presence` `{asleep}`, forwarded by stage.rs); a character window that starts later
//! reads the current value from `window_context`. The core decides when the characters sleep;
//! the pages only show it.

use crate::state::{AppState, Fact};
use std::sync::Arc;
use tauri::{AppHandle, Manager, Runtime};
use yui_core::presence::{self, InputIdle, Pace};
use yui_core::turn::CancellationToken;

/// The user's input idle time, kept for the proactive triggers (the shell's stage starts them).
pub struct UserIdle(pub Arc<dyn InputIdle>);

/// The desktop host, kept for the fullscreen busy probe (the shell's stage sets it).
pub struct UserDesktop(pub Arc<dyn yui_core::avatar::DesktopHost>);

/// Start watching the user's idle time (for the app's whole life).
pub fn start<R: Runtime>(app: &AppHandle<R>, idle: Arc<dyn InputIdle>) {
    app.manage(UserIdle(idle.clone()));
    let state = app.state::<AppState>();
    let store = state.store.clone();
    let (tx, mut rx) = tokio::sync::watch::channel(false);
    state.set_asleep_watch(rx.clone());
    let after = move || presence::after(&store);
    tauri::async_runtime::spawn(presence::watch(
        idle.clone(),
        after,
        tx,
        Pace::APP,
        CancellationToken::new(),
    ));
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        while rx.changed().await.is_ok() {
            let asleep = *rx.borrow_and_update();
            tracing::info!(
                asleep,
                "presence: the user is {}",
                if asleep { "away" } else { "back" }
            );
            app.state::<AppState>().tell(Fact::Presence { asleep });
        }
    });
}
