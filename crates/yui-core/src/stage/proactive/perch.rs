//! The perch trigger: the window the main character sits on closed, or went fullscreen. The
//! avatar writes its settled state (`yui.body`) when it stands up from a perch; the stage
//! watches that write (no polling): sitting, then standing with nothing to wait for, is a
//! closed window; standing while waiting for the same window, which the desktop now shows
//! fullscreen, is a window gone fullscreen (then the fullscreen probe usually holds the turn,
//! as it should: it is logged, not said). Minimised or covered windows are no trigger.

use super::{Inner, Proactive, Stage, Trigger};
use crate::avatar::{Activity, BodyState};
use crate::manners::rules::Importance;
use crate::store::changes::Change;
use std::sync::{Arc, Mutex};

/// Watch the body's settled state (once, with the reminders' timer).
pub(super) fn watch(inner: &Arc<Inner>) {
    let last: Mutex<Option<BodyState>> = Mutex::new(read(&inner.store));
    let weak = Arc::downgrade(inner);
    inner.store.watch(Arc::new(move |change| {
        let Change::Setting(key) = change else { return };
        if key != crate::avatar::BODY_KEY {
            return;
        }
        let Some(inner) = weak.upgrade() else { return };
        let now = read(&inner.store);
        let before = std::mem::replace(
            &mut *last.lock().unwrap_or_else(|p| p.into_inner()),
            now.clone(),
        );
        let (Some(before), Some(now)) = (before, now) else {
            return;
        };
        let Some(perch) = before.window.filter(|_| before.state == Activity::Sitting) else {
            return;
        };
        if now.state != Activity::Standing {
            return;
        }
        let stage = Stage(inner);
        match now.waiting_for {
            None => fire(&stage, format!("closed ({})", perch.app)),
            Some(w) if w.app == perch.app => {
                // Fullscreen, or only minimised or covered? The desktop says (off this thread).
                let Some(avatar) = crate::avatar::installed() else {
                    return;
                };
                let Ok(rt) = tokio::runtime::Handle::try_current() else {
                    return;
                };
                rt.spawn(async move {
                    let Ok(desk) = avatar.snapshot().await else {
                        return;
                    };
                    let full = desk
                        .windows
                        .iter()
                        .any(|d| d.class == w.app && d.title == w.title && d.fullscreen);
                    if full {
                        fire(&stage, format!("went fullscreen ({})", w.app));
                    }
                });
            }
            Some(_) => {}
        }
    }));
}

fn read(store: &crate::store::Store) -> Option<BodyState> {
    let v = crate::store::kv::get(store, crate::avatar::BODY_KEY).ok()??;
    serde_json::from_value(v).ok()
}

fn fire(stage: &Stage, what: String) {
    // A turn needs the async runtime; a write from elsewhere (a CLI) has none.
    if tokio::runtime::Handle::try_current().is_err() {
        return;
    }
    let main = match crate::presets::main_preset(&stage.0.store) {
        Ok(p) => p.id,
        Err(_) => return,
    };
    let out = stage.proactive(Proactive {
        preset_id: main,
        trigger: Trigger::Perch { what },
        importance: Importance::Normal,
    });
    tracing::info!(?out, "perch trigger");
}
