//! The decision before every proactive turn (and again before a queued one is spoken): "go" or
//! "held: <reason>", from the settings ([`Config`]), what the probes say, and what happened
//! before (the turns of the last hour, the last one, the unanswered ones). The clock is passed
//! in as instants. Every hold is logged and kept in a short log ([`Manners::log`], Settings →
//! Manners). The rules, in the order they are checked (docs/proactive.md):
//! 1. the character's proactive switch; 2. quiet mode; 3. quiet hours; 4. a busy probe
//!    (fullscreen, screen shared, microphone, camera, typing); 5. the stage (another turn or
//!    voice running); then, unless the importance is high: 6. the budget (`per_hour` in any
//!    hour); 7. the cooldown; 8. the back-off after two unanswered turns.

use super::probes::Busy;
use super::Config;
use chrono::{DateTime, Duration, FixedOffset, NaiveTime, Utc};
use serde::Serialize;
use std::collections::VecDeque;

/// How many held entries the log keeps.
pub const LOG_LEN: usize = 50;
/// The back-off after [`BACKOFF_AFTER`] unanswered turns: this long, doubled for each further
/// unanswered one, at most [`BACKOFF_MAX`].
pub const BACKOFF_BASE: Duration = Duration::minutes(30);
pub const BACKOFF_AFTER: u32 = 2;
pub const BACKOFF_MAX: Duration = Duration::hours(4);

/// How much a proactive turn matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Importance {
    Low,
    #[default]
    Normal,
    /// May go over the budget, the cooldown and the back-off; never quiet mode, quiet hours or
    /// a busy user: it waits (a badge shows).
    High,
}

impl Importance {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "low" => Some(Self::Low),
            "normal" => Some(Self::Normal),
            "high" => Some(Self::High),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Normal => "normal",
            Self::High => "high",
        }
    }
}

/// What is asked: one proactive turn of one character.
#[derive(Debug, Clone)]
pub struct Ask<'a> {
    /// The proactive item (one id per trigger firing; a queued item keeps its id, so its log
    /// entry is not repeated at every recheck).
    pub id: u64,
    pub preset_id: &'a str,
    /// The trigger's id (`back`, `morning`, `reminder`, `event`, …).
    pub trigger: &'a str,
    pub importance: Importance,
    /// What the probes say now.
    pub busy: Option<Busy>,
    /// Why the stage cannot take a turn now (`another character is speaking`).
    pub stage_busy: Option<String>,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Go,
    /// `reason` follows `held: `; `retry_at` is when the rule that held it lifts, when known.
    Held {
        reason: String,
        retry_at: Option<DateTime<Utc>>,
    },
}

impl Decision {
    pub fn is_go(&self) -> bool {
        *self == Decision::Go
    }
}

/// One held proactive turn, as Settings → Manners lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Held {
    pub at: DateTime<Utc>,
    pub preset_id: String,
    pub trigger: String,
    pub importance: Importance,
    /// `held: fullscreen window`.
    pub reason: String,
    #[serde(skip)]
    id: u64,
}

/// A proactive turn that went, until it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

/// What the manners remember between decisions.
#[derive(Debug, Default)]
pub struct Manners {
    /// Turns counted against the budget, newest last.
    turns: VecDeque<(Ticket, DateTime<Utc>)>,
    last: Option<DateTime<Utc>>,
    unanswered: u32,
    log: VecDeque<Held>,
    seq: u64,
}

impl Manners {
    pub fn new() -> Self {
        Self::default()
    }

    /// Go, or held and why (logged once per item and reason).
    pub fn decide(
        &mut self,
        now: DateTime<Utc>,
        local: DateTime<FixedOffset>,
        cfg: &Config,
        ask: &Ask<'_>,
    ) -> Decision {
        let d = self.rule(now, local, cfg, ask);
        if let Decision::Held { reason, .. } = &d {
            let reason = format!("held: {reason}");
            let repeat = self
                .log
                .iter()
                .rev()
                .any(|h| h.id == ask.id && h.reason == reason);
            if !repeat {
                tracing::info!(preset = ask.preset_id, trigger = ask.trigger, %reason, "proactive turn held");
                if self.log.len() == LOG_LEN {
                    self.log.pop_front();
                }
                self.log.push_back(Held {
                    at: now,
                    preset_id: ask.preset_id.to_string(),
                    trigger: ask.trigger.to_string(),
                    importance: ask.importance,
                    reason,
                    id: ask.id,
                });
            }
        }
        d
    }

    fn rule(
        &mut self,
        now: DateTime<Utc>,
        local: DateTime<FixedOffset>,
        cfg: &Config,
        ask: &Ask<'_>,
    ) -> Decision {
        let held =
            |reason: String, retry_at: Option<DateTime<Utc>>| Decision::Held { reason, retry_at };
        if !cfg.character_on(ask.preset_id) {
            return held("proactive turns off for this character".into(), None);
        }
        if let Some(until) = cfg.quiet_until.filter(|u| *u > now) {
            let at = local.offset().from_utc_datetime(&until.naive_utc());
            return held(
                format!("quiet mode until {}", at.format("%H:%M")),
                Some(until),
            );
        }
        if let Some((from, to)) = cfg.quiet_hours {
            if in_span(local.time(), from, to) {
                return held("quiet hours".into(), Some(next_local(local, to)));
            }
        }
        if let Some(b) = &ask.busy {
            return held(b.reason(), None);
        }
        if let Some(why) = &ask.stage_busy {
            return held(why.clone(), None);
        }
        if ask.importance == Importance::High {
            return Decision::Go;
        }
        self.forget_before(now - Duration::hours(1));
        if self.turns.len() as u64 >= cfg.per_hour {
            let retry = self.turns.front().map(|(_, t)| *t + Duration::hours(1));
            return held(format!("budget ({} an hour)", cfg.per_hour), retry);
        }
        if let Some(last) = self.last {
            if now < last + cfg.cooldown {
                return held("cooldown".into(), Some(last + cfg.cooldown));
            }
            if self.unanswered >= BACKOFF_AFTER {
                let wait = self.backoff();
                if now < last + wait {
                    return held(
                        format!("back-off ({} unanswered)", self.unanswered),
                        Some(last + wait),
                    );
                }
            }
        }
        Decision::Go
    }

    /// The wait after the last turn while unanswered.
    fn backoff(&self) -> Duration {
        let doublings = self.unanswered.saturating_sub(BACKOFF_AFTER).min(8);
        (BACKOFF_BASE * 2i32.pow(doublings)).min(BACKOFF_MAX)
    }

    fn forget_before(&mut self, t: DateTime<Utc>) {
        while self.turns.front().is_some_and(|(_, at)| *at <= t) {
            self.turns.pop_front();
        }
    }

    /// A proactive turn went at `now`: it counts against the budget and starts the cooldown.
    pub fn went(&mut self, now: DateTime<Utc>) -> Ticket {
        self.seq += 1;
        let t = Ticket(self.seq);
        self.turns.push_back((t, now));
        self.last = Some(now);
        t
    }

    /// The turn ended: one that said something waits for an answer; one that said nothing
    /// (`[SILENT]`, an error) gives its place in the budget back (the cooldown stays).
    pub fn ended(&mut self, ticket: Ticket, spoke: bool) {
        if spoke {
            self.unanswered += 1;
        } else {
            self.turns.retain(|(t, _)| *t != ticket);
        }
    }

    /// The user said something (any character, any window): the back-off ends.
    pub fn user_spoke(&mut self) {
        self.unanswered = 0;
    }

    /// Proactive turns said and not answered since the user last spoke.
    pub fn unanswered(&self) -> u32 {
        self.unanswered
    }

    /// The held entries, newest first.
    pub fn log(&self) -> Vec<Held> {
        self.log.iter().rev().cloned().collect()
    }
}

/// Whether `t` is in `[from, to)`, across midnight when `from` is after `to`.
pub fn in_span(t: NaiveTime, from: NaiveTime, to: NaiveTime) -> bool {
    if from <= to {
        from <= t && t < to
    } else {
        t >= from || t < to
    }
}

/// The next instant the local clock shows `at` (today if still ahead, else tomorrow), in the
/// offset of `local` (across a DST change it is off by that hour at most).
pub fn next_local(local: DateTime<FixedOffset>, at: NaiveTime) -> DateTime<Utc> {
    let mut day = local.date_naive();
    if local.time() >= at {
        day += Duration::days(1);
    }
    let naive = day.and_time(at) - Duration::seconds(local.offset().local_minus_utc() as i64);
    DateTime::from_naive_utc_and_offset(naive, Utc)
}

use chrono::TimeZone as _;
