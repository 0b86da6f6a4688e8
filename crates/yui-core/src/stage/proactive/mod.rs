//! Proactive turns: a character speaks up on its own (the user came back, the morning, a
//! reminder, an event from another program). Each goes through the stage like any other turn;
//! its client context says why (`proactive: user back after 42 min`) and the model may answer
//! exactly `[SILENT]`, which says nothing. Before it starts, and again before a queued one is
//! spoken, the manners decide (`manners::rules`): go, or held and why. A held turn that may wait
//! (a reminder, an event) is queued and rechecked when the rule that held it lifts, at the
//! latest every [`RECHECK`] (the presence watch's own pace), or at once when
//! [`super::Stage::proactive_recheck`] says something changed; the others are dropped. Every
//! hold is in the manners' log. docs/proactive.md.

pub(super) mod aware;
mod page;
mod perch;
mod reminders;
mod triggers;

pub use page::{CharacterSwitch, MannersPage};

use super::{Inner, Origin, Stage};
use crate::manners::probes::{self, BusyProbes, NoProbes};
use crate::manners::rules::{Ask, Decision, Held, Importance, Manners, Ticket};
use crate::manners::Config;
use crate::turn::TurnStatus;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The longest wait between two rechecks of a queued turn (no faster than the presence watch).
pub const RECHECK: Duration = Duration::from_secs(60);
/// Why a proactive turn happens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Trigger {
    /// The user is back after this many minutes without input.
    Back { away_min: u64 },
    /// The user's first activity after the morning started.
    Morning,
    /// Late at night (once a night).
    Night,
    /// A reminder the character set (`remind`), due at `due`; `late`: it fell due while YUI
    /// was closed.
    Reminder {
        id: i64,
        text: String,
        due: DateTime<Utc>,
        late: bool,
    },
    /// The window the character sits on closed or went fullscreen (`what` says which).
    Perch { what: String },
    /// Another program handed the character something to react to (`yui event`, MCP `notify`).
    Event { text: String },
    /// Another program asks the character to pass `text` on to the user (MCP `say`).
    Say { text: String },
}

impl Trigger {
    /// The trigger's id (Settings → Manners, the log, `yui.proactive.triggers`).
    pub fn id(&self) -> &'static str {
        match self {
            Self::Back { .. } => "back",
            Self::Morning => "morning",
            Self::Night => "night",
            Self::Reminder { .. } => "reminder",
            Self::Perch { .. } => "perch",
            Self::Event { .. } | Self::Say { .. } => "events",
        }
    }

    /// What follows `proactive: ` in the client context (and is stored as the turn's message).
    pub fn reason(&self, clock: &dyn crate::clock::Clock, importance: Importance) -> String {
        let quoted = |t: &str| serde_json::Value::from(t.trim()).to_string();
        match self {
            Self::Back { away_min } => format!("user back after {away_min} min"),
            Self::Morning => "the user's first activity this morning".into(),
            Self::Night => "it is late at night and the user is still here".into(),
            Self::Reminder {
                text, due, late, ..
            } => {
                let at = clock.local(*due).format("%H:%M");
                match late {
                    false => format!("reminder you set, due {at}: {}", quoted(text)),
                    true => format!(
                        "reminder you set, due {at}, late (YUI was closed then): {}",
                        quoted(text)
                    ),
                }
            }
            Self::Perch { what } => format!("the window you sit on {what}"),
            Self::Event { text } => format!(
                "event from another program (importance {}): {}",
                importance.as_str(),
                quoted(text)
            ),
            Self::Say { text } => format!(
                "another program asks you to tell the user this, in your own words: {}",
                quoted(text)
            ),
        }
    }

    /// How long it may wait when held (`None`: dropped). The moment of a return or a window
    /// is gone once held; a reminder waits until it can be said.
    fn may_wait(&self, importance: Importance) -> Option<chrono::Duration> {
        match (self, importance) {
            (Self::Reminder { .. }, _) => Some(chrono::Duration::days(7)),
            (Self::Event { .. }, Importance::High) => Some(chrono::Duration::hours(12)),
            (Self::Event { .. }, Importance::Normal) | (Self::Say { .. }, _) => {
                Some(chrono::Duration::minutes(30))
            }
            _ => None,
        }
    }
}

/// One proactive turn asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Proactive {
    pub preset_id: String,
    pub trigger: Trigger,
    pub importance: Importance,
}

/// What became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    Went {
        turn_id: String,
    },
    /// Held and queued; `reason` starts with `held: `.
    Waiting {
        reason: String,
    },
    /// Held and dropped (its moment passed, or it cannot wait).
    Dropped {
        reason: String,
    },
}

/// A turn waiting for the manners.
#[derive(Debug, Clone, Serialize)]
pub struct Waiting {
    #[serde(skip)]
    id: u64,
    #[serde(flatten)]
    pub turn: Proactive,
    pub reason: String,
    #[serde(skip)]
    retry_at: Option<DateTime<Utc>>,
    #[serde(skip)]
    expires: DateTime<Utc>,
}

/// Settings → Manners' live part.
#[derive(Debug, Clone, Serialize)]
pub struct MannersView {
    pub quiet_until: Option<DateTime<Utc>>,
    pub unanswered: u32,
    pub waiting: Vec<Waiting>,
    pub held: Vec<Held>,
}

/// Start the reminders' timer (once).
pub(super) fn start_reminders(inner: &Arc<Inner>) {
    if !reminders::start(inner) {
        return;
    }
    // The perch trigger watches the body's state from the same moment on.
    perch::watch(inner);
}

/// The stage's proactive part.
pub(super) struct Slot {
    manners: Mutex<Manners>,
    probes: Mutex<Arc<dyn BusyProbes>>,
    queue: Mutex<Vec<Waiting>>,
    /// Running proactive turns: turn id → budget ticket.
    running: Mutex<HashMap<String, Ticket>>,
    wake: Arc<tokio::sync::Notify>,
    timer: AtomicBool,
    seq: AtomicU64,
    /// The reminders' timer (`reminders.rs`).
    reminders: reminders::Timer,
    /// What the platform tells of the user's doing (`aware.rs`).
    aware: aware::Slot,
}

impl Default for Slot {
    fn default() -> Self {
        Self {
            manners: Mutex::new(Manners::new()),
            probes: Mutex::new(Arc::new(NoProbes)),
            queue: Mutex::default(),
            running: Mutex::default(),
            wake: Arc::new(tokio::sync::Notify::new()),
            timer: AtomicBool::new(false),
            seq: AtomicU64::new(0),
            reminders: Default::default(),
            aware: Default::default(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Stage {
    /// The platform's busy probes (the app: X11, PulseAudio, `/proc`; tests: `probes::Fixed`).
    pub fn set_busy_probes(&self, probes: Arc<dyn BusyProbes>) {
        *lock(&self.0.proactive.probes) = probes;
    }

    /// Ask for a proactive turn: it goes now, waits, or is dropped, as the manners say.
    pub fn proactive(&self, p: Proactive) -> Outcome {
        let id = self.0.proactive.seq.fetch_add(1, Ordering::Relaxed) + 1;
        let out = attempt(&self.0, id, &p);
        match out {
            Attempt::Went(turn_id) => Outcome::Went { turn_id },
            Attempt::Held { reason, retry_at } => {
                let now = self.0.clock.now();
                match p.trigger.may_wait(p.importance) {
                    Some(wait) => {
                        lock(&self.0.proactive.queue).push(Waiting {
                            id,
                            turn: p,
                            reason: reason.clone(),
                            retry_at,
                            expires: now + wait,
                        });
                        ensure_timer(&self.0);
                        tell_waiting(&self.0);
                        Outcome::Waiting { reason }
                    }
                    None => Outcome::Dropped { reason },
                }
            }
        }
    }

    /// Something the manners read changed (quiet mode, a window, a setting): queued turns are
    /// checked again now.
    pub fn proactive_recheck(&self) {
        self.0.proactive.wake.notify_one();
    }

    /// Settings → Manners: quiet mode, the turns waiting and the held-back log.
    pub fn manners_view(&self) -> MannersView {
        let cfg = Config::load(&self.0.store);
        let slot = &self.0.proactive;
        let (unanswered, held) = {
            let m = lock(&slot.manners);
            (m.unanswered(), m.log())
        };
        let waiting = lock(&slot.queue).clone();
        MannersView {
            quiet_until: cfg.quiet_until.filter(|u| *u > self.0.clock.now()),
            unanswered,
            waiting,
            held,
        }
    }
}

enum Attempt {
    Went(String),
    Held {
        reason: String,
        retry_at: Option<DateTime<Utc>>,
    },
}

/// Decide and, on go, start the turn.
fn attempt(inner: &Arc<Inner>, id: u64, p: &Proactive) -> Attempt {
    let cfg = Config::load(&inner.store);
    let held = |reason: &str| Attempt::Held {
        reason: format!("held: {reason}"),
        retry_at: None,
    };
    if !matches!(p.trigger, Trigger::Reminder { .. }) && !cfg.trigger_on(p.trigger.id()) {
        return held("trigger off");
    }
    let Some(window) = inner.desktop_of(&p.preset_id) else {
        return held("character not on the desktop");
    };
    let Some(kind) = window.kind() else {
        return held("character not on the desktop");
    };
    let busy = probes::busy(lock(&inner.proactive.probes).as_ref());
    let stage_busy = stage_busy(inner);
    let now = inner.clock.now();
    let ask = Ask {
        id,
        preset_id: &p.preset_id,
        trigger: p.trigger.id(),
        importance: p.importance,
        busy,
        stage_busy,
    };
    let mut manners = lock(&inner.proactive.manners);
    match manners.decide(now, inner.clock.local(now), &cfg, &ask) {
        Decision::Held { reason, retry_at } => Attempt::Held {
            reason: format!("held: {reason}"),
            retry_at,
        },
        Decision::Go => {
            let reason = p.trigger.reason(inner.clock.as_ref(), p.importance);
            let origin = Origin::Proactive {
                trigger: p.trigger.id().to_string(),
                reason: reason.clone(),
            };
            let epoch = inner.chain().epoch;
            match super::run::start(
                inner,
                &p.preset_id,
                kind,
                &reason,
                origin,
                epoch,
                None,
                None,
            ) {
                Ok(turn_id) => {
                    let ticket = manners.went(now);
                    lock(&inner.proactive.running).insert(turn_id.clone(), ticket);
                    tracing::info!(preset = %p.preset_id, trigger = p.trigger.id(), turn = %turn_id, "proactive turn");
                    if let Trigger::Reminder { id, .. } = &p.trigger {
                        reminders::said(inner, *id);
                    }
                    Attempt::Went(turn_id)
                }
                Err(e) => {
                    tracing::warn!(preset = %p.preset_id, error = %e.message, "the proactive turn could not start");
                    Attempt::Held {
                        reason: format!("held: the turn could not start ({})", e.message),
                        retry_at: Some(now + chrono::Duration::minutes(1)),
                    }
                }
            }
        }
    }
}

/// Why the stage cannot take a proactive turn now: a turn runs or a voice plays.
fn stage_busy(inner: &Inner) -> Option<String> {
    if inner.seats().values().any(|s| s.turn.is_some()) {
        return Some("a turn is running".into());
    }
    inner
        .any_speaking()
        .then(|| "a character is speaking".into())
}

/// A proactive turn ended: one that said nothing gives its place in the budget back. Queued
/// turns are looked at again (the stage is free).
pub(super) fn ended(inner: &Inner, turn_id: &str, status: TurnStatus) {
    let Some(ticket) = lock(&inner.proactive.running).remove(turn_id) else {
        return;
    };
    lock(&inner.proactive.manners).ended(ticket, status == TurnStatus::Ok);
    inner.proactive.wake.notify_one();
}

/// The user started a turn: the back-off ends.
pub(super) fn user_spoke(inner: &Inner) {
    lock(&inner.proactive.manners).user_spoke();
}

/// One task while turns wait: sleeps until the first rule lifts (at most [`RECHECK`]) or a
/// wake, then checks every queued turn again in order.
fn ensure_timer(inner: &Arc<Inner>) {
    if inner.proactive.timer.swap(true, Ordering::SeqCst) {
        inner.proactive.wake.notify_one();
        return;
    }
    let weak = Arc::downgrade(inner);
    tokio::spawn(async move {
        loop {
            let Some(inner) = weak.upgrade() else { return };
            let wait = {
                let queue = lock(&inner.proactive.queue);
                if queue.is_empty() {
                    inner.proactive.timer.store(false, Ordering::SeqCst);
                    return;
                }
                let now = inner.clock.now();
                queue
                    .iter()
                    .filter_map(|w| w.retry_at)
                    .map(|t| (t - now).to_std().unwrap_or(Duration::ZERO))
                    .fold(RECHECK, Duration::min)
            };
            let wake = inner.proactive.wake.clone();
            let desktop = lock(&inner.proactive.probes).changed();
            drop(inner);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = wake.notified() => {}
                _ = desktop_changed(desktop) => {}
            }
            let Some(inner) = weak.upgrade() else { return };
            recheck(&inner);
        }
    });
}

/// The probes' change signal fired (a window closed or left fullscreen), then settled for
/// [`SETTLE`] so a burst of window events is one recheck; never, without a signal.
async fn desktop_changed(rx: Option<tokio::sync::watch::Receiver<u64>>) {
    let Some(mut rx) = rx else {
        return std::future::pending().await;
    };
    if rx.changed().await.is_err() {
        return std::future::pending().await;
    }
    tokio::time::sleep(SETTLE).await;
}

/// How long window changes settle before waiting turns are checked again.
const SETTLE: Duration = Duration::from_millis(300);

/// Each queued turn in order: gone, dropped when it waited too long, or still waiting.
fn recheck(inner: &Arc<Inner>) {
    let queued: Vec<Waiting> = std::mem::take(&mut *lock(&inner.proactive.queue));
    let before = queued_ids(&queued);
    let now = inner.clock.now();
    let mut keep = Vec::new();
    for mut w in queued {
        if now >= w.expires {
            tracing::info!(preset = %w.turn.preset_id, trigger = w.turn.trigger.id(), "a waiting proactive turn expired");
            continue;
        }
        match attempt(inner, w.id, &w.turn) {
            Attempt::Went(_) => {}
            Attempt::Held { reason, retry_at } => {
                w.reason = reason;
                w.retry_at = retry_at;
                keep.push(w);
            }
        }
    }
    let changed = {
        let mut queue = lock(&inner.proactive.queue);
        // Asked while this ran: after the older ones.
        keep.append(&mut queue);
        *queue = keep;
        before != queued_ids(&queue)
    };
    if changed {
        tell_waiting(inner);
    }
}

fn queued_ids(q: &[Waiting]) -> Vec<(u64, String)> {
    q.iter().map(|w| (w.id, w.reason.clone())).collect()
}

/// The windows hear what waits now (the badge, Settings → Manners).
fn tell_waiting(inner: &Inner) {
    let waiting = lock(&inner.proactive.queue).clone();
    inner.emit(super::StageEvent::Waiting { waiting });
}
