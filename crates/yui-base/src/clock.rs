//! The clock is passed in: daily caps, deadlines and timestamps read it through [`Clock`] so tests
//! can move time (across midnight, across a DST change) without sleeping.

use chrono::{DateTime, FixedOffset, Local, TimeZone, Timelike, Utc};
use std::sync::{Arc, Mutex};

pub trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> DateTime<Utc>;
    /// The instant seen in the user's local time zone (offset valid at that instant).
    fn local(&self, at: DateTime<Utc>) -> DateTime<FixedOffset>;
    /// Local now, for convenience.
    fn local_now(&self) -> DateTime<FixedOffset> {
        self.local(self.now())
    }
}

pub type SharedClock = Arc<dyn Clock>;

/// The real clock in the OS local time zone.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
    fn local(&self, at: DateTime<Utc>) -> DateTime<FixedOffset> {
        at.with_timezone(&Local).fixed_offset()
    }
}

/// The real clock seen from a time zone picked so that it is `hour`:00 local when the clock is
/// made. For tests of the stage while time runs: a day's rules (quiet hours, the morning and
/// night triggers) would otherwise hold or start turns depending on when the suite runs.
#[derive(Debug, Clone, Copy)]
pub struct ShiftedClock {
    offset: FixedOffset,
}

impl ShiftedClock {
    /// `hour` is 0..=23 (larger values are taken modulo 24).
    pub fn at_hour(hour: u32) -> Self {
        let target = (hour % 24) as i32 * 3600;
        let now = Utc::now().num_seconds_from_midnight() as i32;
        // target - now lies in (-86400, 86400): a valid offset.
        let offset = FixedOffset::east_opt(target - now)
            .unwrap_or(FixedOffset::east_opt(0).expect("zero offset"));
        Self { offset }
    }
}

impl Clock for ShiftedClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
    fn local(&self, at: DateTime<Utc>) -> DateTime<FixedOffset> {
        at.with_timezone(&self.offset)
    }
}

/// A settable clock for tests. The local offset is a function of the instant so a test can model
/// a DST change.
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
    offset: Box<dyn Fn(DateTime<Utc>) -> FixedOffset + Send + Sync>,
}

impl ManualClock {
    pub fn new(now: DateTime<Utc>, offset_secs: i32) -> Self {
        let off = FixedOffset::east_opt(offset_secs).expect("valid offset");
        Self::with_offset_fn(now, move |_| off)
    }
    pub fn with_offset_fn(
        now: DateTime<Utc>,
        offset: impl Fn(DateTime<Utc>) -> FixedOffset + Send + Sync + 'static,
    ) -> Self {
        Self {
            now: Mutex::new(now),
            offset: Box::new(offset),
        }
    }
    pub fn set(&self, now: DateTime<Utc>) {
        *self.now.lock().unwrap_or_else(|p| p.into_inner()) = now;
    }
    pub fn advance(&self, by: chrono::Duration) {
        let mut n = self.now.lock().unwrap_or_else(|p| p.into_inner());
        *n += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn local(&self, at: DateTime<Utc>) -> DateTime<FixedOffset> {
        (self.offset)(at).from_utc_datetime(&at.naive_utc())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shifted_clock_reads_its_hour_while_time_runs() {
        for hour in [0, 12, 23] {
            let c = ShiftedClock::at_hour(hour);
            let local = c.local_now();
            // The hour asked for (or the next, when a second boundary passed at :59:59).
            assert!(
                local.hour() == hour || local.hour() == (hour + 1) % 24,
                "{hour}: {local}"
            );
            assert!(local.minute() <= 1, "{local}");
            assert!((c.now() - Utc::now()).num_seconds().abs() <= 1);
        }
    }
}
