//! The clock is passed in: daily caps, deadlines and timestamps read it through [`Clock`] so tests
//! can move time (across midnight, across a DST change) without sleeping.

use chrono::{DateTime, FixedOffset, Local, TimeZone, Utc};
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
