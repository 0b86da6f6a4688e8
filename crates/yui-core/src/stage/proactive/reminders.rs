//! The reminders' timer: one task that sleeps until the next reminder is due (or a new one is
//! set: `Change::Reminders`), then hands each due reminder to the stage as a high-importance
//! proactive turn. No polling: it wakes at the due instant (at most every [`MAX_SLEEP`], so a
//! suspended machine or a changed clock is caught up). A reminder due before the stage started
//! fell due while YUI was closed: its turn says it is late. A reminder is marked said when its
//! turn starts, so it is said once, across restarts (docs/proactive.md, "Reminders").

use super::{Inner, Proactive, Stage, Trigger};
use crate::manners::rules::Importance;
use crate::store::changes::Change;
use chrono::{DateTime, Utc};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The longest the timer sleeps without looking at the clock again.
pub const MAX_SLEEP: Duration = Duration::from_secs(15 * 60);

/// The timer's state.
#[derive(Default)]
pub(super) struct Timer {
    started: AtomicBool,
    wake: Arc<tokio::sync::Notify>,
    /// Reminders handed to the stage this run (said, or waiting in its queue).
    handed: Mutex<HashSet<i64>>,
}

/// Start the timer (once; the first desktop window opening calls it): whether it started now.
pub(super) fn start(inner: &Arc<Inner>) -> bool {
    let timer = &inner.proactive.reminders;
    if timer.started.swap(true, Ordering::SeqCst) {
        return false;
    }
    let started_at = inner.clock.now();
    let wake = timer.wake.clone();
    inner.store.watch(Arc::new(move |change| {
        if *change == Change::Reminders {
            wake.notify_one();
        }
    }));
    let weak = Arc::downgrade(inner);
    let wake = timer.wake.clone();
    tokio::spawn(async move {
        loop {
            let Some(inner) = weak.upgrade() else { return };
            let wait = fire_due(&inner, started_at);
            drop(inner);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = wake.notified() => {}
            }
        }
    });
    true
}

/// Hand every due reminder to the stage; how long until the next one.
fn fire_due(inner: &Arc<Inner>, started_at: DateTime<Utc>) -> Duration {
    let pending = match crate::reminders::pending(&inner.store) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(error = %e, "the reminders could not be read; trying again later");
            return MAX_SLEEP;
        }
    };
    let now = inner.clock.now();
    let mut next: Option<DateTime<Utc>> = None;
    for r in pending {
        if r.due_at > now {
            next = Some(next.map_or(r.due_at, |n| n.min(r.due_at)));
            continue;
        }
        let fresh = inner
            .proactive
            .reminders
            .handed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(r.id);
        if !fresh {
            continue;
        }
        let out = Stage(inner.clone()).proactive(Proactive {
            preset_id: r.preset_id,
            trigger: Trigger::Reminder {
                id: r.id,
                text: r.text,
                due: r.due_at,
                late: r.due_at < started_at,
            },
            importance: Importance::High,
        });
        tracing::info!(reminder = r.id, ?out, "a reminder fell due");
    }
    next.map_or(MAX_SLEEP, |t| {
        (t - now).to_std().unwrap_or(Duration::ZERO).min(MAX_SLEEP)
    })
}

/// The reminder's turn started: it is said (never again, across restarts).
pub(super) fn said(inner: &Inner, id: i64) {
    if let Err(e) = crate::reminders::mark_said(&inner.store, id, inner.clock.now()) {
        tracing::warn!(reminder = id, error = %e, "the reminder could not be marked said");
    }
}
