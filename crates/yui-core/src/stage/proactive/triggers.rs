//! The presence triggers: the user back after being away (`yui.proactive.away_min` without
//! input), the first activity after the morning starts (once a day), and late at night (once a
//! night, when the user is there). One task on the platform's input idle time
//! (`presence::InputIdle`), event-driven like the presence watch: it sleeps until the away
//! threshold could be reached or the next morning or night instant, at most `pace.recheck`
//! (the presence watch's own 60 s), and while the user is away it waits for the platform's
//! input signal (or, with none, asks every `pace.wake_check`). Each trigger is a proactive turn
//! of the main character; the manners decide (docs/proactive.md).

use super::{Proactive, Stage, Trigger};
use crate::manners::rules::{next_local, Importance};
use crate::manners::said::Said;
use crate::manners::Config;
use crate::presence::{InputIdle, Pace};
use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Input within this long counts as the user being there at a morning or night instant.
pub const PRESENT: Duration = Duration::from_secs(60);

impl Stage {
    /// Watch the user's presence for the back, morning and night triggers until `stop`.
    pub async fn watch_presence(
        &self,
        idle: Arc<dyn InputIdle>,
        pace: Pace,
        stop: CancellationToken,
    ) {
        let mut w = Watch {
            stage: self.clone(),
            said: Said::load(&self.0.store),
        };
        loop {
            let wait = match idle.idle_for() {
                Ok(now_idle) => w.step(&idle, now_idle, pace, &stop).await,
                Err(e) => {
                    tracing::debug!(error = %e, "proactive triggers: no idle time");
                    Some(pace.recheck)
                }
            };
            let Some(wait) = wait else { return };
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }
}

struct Watch {
    stage: Stage,
    /// When morning and night last went, as stored: once a day across restarts too.
    said: Said,
}

impl Watch {
    /// One look: fire what is due; how long to sleep (`None`: stopped).
    async fn step(
        &mut self,
        idle: &Arc<dyn InputIdle>,
        now_idle: Duration,
        pace: Pace,
        stop: &CancellationToken,
    ) -> Option<Duration> {
        let cfg = Config::load(&self.stage.0.store);
        let away = cfg.away.to_std().unwrap_or(Duration::from_secs(20 * 60));
        if now_idle >= away {
            // Away: wait for the user's next input, then say hello.
            let since = self.stage.0.clock.now() - chrono::Duration::from_std(now_idle).ok()?;
            if !wait_for_input(idle, away, pace, stop).await? {
                return Some(Duration::ZERO);
            }
            let mins = (self.stage.0.clock.now() - since).num_minutes().max(0) as u64;
            self.returned(&cfg, mins);
            return Some(pace.recheck.min(away));
        }
        let now = self.stage.0.clock.now();
        let local = self.stage.0.clock.local(now);
        let present = now_idle < PRESENT;
        let today = local.date_naive();
        if let Some(m) = cfg.morning {
            if present && in_morning(local.time(), m) && self.said.morning != Some(today) {
                self.said.morning = Some(today);
                self.fire(Trigger::Morning);
            }
        }
        if let Some(n) = cfg.night {
            if present && local.time() >= n && self.said.night != Some(today) {
                self.said.night = Some(today);
                self.fire(Trigger::Night);
            }
        }
        // Wake when the threshold could be reached, or at the next morning or night instant.
        let mut wait = (away - now_idle).min(pace.recheck);
        for at in [cfg.morning, cfg.night].into_iter().flatten() {
            wait = wait.min(until(next_local(local, at), now));
        }
        Some(wait.max(Duration::from_millis(10)))
    }

    /// The user came back after `mins` away: the morning's first activity, or a return.
    fn returned(&mut self, cfg: &Config, mins: u64) {
        let local = self.stage.0.clock.local_now();
        let today = local.date_naive();
        let morning = cfg
            .morning
            .is_some_and(|m| in_morning(local.time(), m) && self.said.morning != Some(today));
        if morning {
            self.said.morning = Some(today);
            self.fire(Trigger::Morning);
        } else {
            self.fire(Trigger::Back { away_min: mins });
        }
    }

    fn fire(&self, trigger: Trigger) {
        // Kept before the turn goes: a greeting said twice is worse than one lost to a crash.
        if matches!(trigger, Trigger::Morning | Trigger::Night) {
            if let Err(e) = self.said.save(&self.stage.0.store) {
                tracing::warn!(error = %e, ?trigger, "proactive triggers: cannot keep the day it went");
            }
        }
        let main = match crate::presets::main_preset(&self.stage.0.store) {
            Ok(p) => p.id,
            Err(e) => {
                tracing::warn!(error = %e.message, "proactive trigger without a main character");
                return;
            }
        };
        let out = self.stage.proactive(Proactive {
            preset_id: main,
            trigger,
            importance: Importance::Normal,
        });
        tracing::info!(?out, "presence trigger");
    }
}

/// The morning lasts from its start until noon: a first return in the afternoon is a return.
fn in_morning(t: chrono::NaiveTime, start: chrono::NaiveTime) -> bool {
    t >= start && t < chrono::NaiveTime::from_hms_opt(12, 0, 0).expect("noon")
}

fn until(t: DateTime<Utc>, now: DateTime<Utc>) -> Duration {
    (t - now).to_std().unwrap_or(Duration::ZERO)
}

/// Wait for the user's next input: the platform's signal when it has one (checked against the
/// idle time, so only a real return counts), else a look every `pace.wake_check`. `Some(true)`:
/// back; `Some(false)`: look again; `None`: stopped.
async fn wait_for_input(
    idle: &Arc<dyn InputIdle>,
    away: Duration,
    pace: Pace,
    stop: &CancellationToken,
) -> Option<bool> {
    let back = || idle.idle_for().is_ok_and(|i| i < away);
    if let Some(mut input) = idle.input_signal() {
        if back() {
            return Some(true);
        }
        tokio::select! {
            _ = stop.cancelled() => return None,
            r = input.changed() => if r.is_err() {
                // The signal is gone: fall back to looking.
                tokio::select! {
                    _ = stop.cancelled() => return None,
                    _ = tokio::time::sleep(pace.wake_check) => {}
                }
            },
            _ = tokio::time::sleep(pace.recheck) => return Some(back()),
        }
        return Some(back());
    }
    loop {
        tokio::select! {
            _ = stop.cancelled() => return None,
            _ = tokio::time::sleep(pace.wake_check) => {}
        }
        if back() {
            return Some(true);
        }
    }
}
