//! Awareness on the stage: the platform's answers (`manners::aware::Awareness`: the active app
//! from the desktop host, what plays from MPRIS), read into every turn's client context while
//! their switches are on (`stage/run.rs`). The stage tells the platform when the now-playing
//! switch changes, so nothing listens on the bus while it is off.

use super::{lock, Inner, Stage};
use crate::manners::aware::{self, Awareness, Unaware};
use crate::manners::NOW_PLAYING_KEY;
use crate::store::changes::Change;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The stage's awareness part.
pub(super) struct Slot {
    aware: Mutex<Arc<dyn Awareness>>,
    /// The store watch on the switch is installed (once).
    watching: AtomicBool,
}

impl Default for Slot {
    fn default() -> Self {
        Self {
            aware: Mutex::new(Arc::new(Unaware)),
            watching: AtomicBool::new(false),
        }
    }
}

impl Stage {
    /// The platform's awareness (the app: the desktop host and MPRIS; tests: their own).
    pub fn set_awareness(&self, aw: Arc<dyn Awareness>) {
        let inner = &self.0;
        aw.watch_playing(aware::switch_on(&inner.store, NOW_PLAYING_KEY));
        *lock(&inner.proactive.aware.aware) = aw;
        if inner.proactive.aware.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak = Arc::downgrade(inner);
        inner.store.watch(Arc::new(move |change| {
            let Change::Setting(key) = change else { return };
            if key != NOW_PLAYING_KEY {
                return;
            }
            let Some(inner) = weak.upgrade() else { return };
            let aw = lock(&inner.proactive.aware.aware).clone();
            aw.watch_playing(aware::switch_on(&inner.store, NOW_PLAYING_KEY));
        }));
    }
}

/// The awareness lines for a turn starting now.
pub(in crate::stage) fn lines(inner: &Inner) -> Vec<String> {
    let aw = lock(&inner.proactive.aware.aware).clone();
    aware::lines(&inner.store, aw.as_ref())
}
