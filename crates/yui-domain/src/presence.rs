//! Whether the user is at the desktop: the characters fall asleep once the user has given no
//! input (keyboard, pointer) for `yui.sleep`'s `after_minutes`, and wake at the next input
//! (docs/characters.md, "Asleep"). Asleep, a character shows its sleeping face and plays no
//! ambient motion, so the app costs next to nothing while nobody looks.
//!
//! The platform says how long the user has been idle ([`InputIdle`]; X11: the screen-saver
//! extension's `ms_since_user_input`, `crates/yui-x11`). [`watch`] asks it once when the
//! threshold could have been reached (so awake it wakes at most once a minute, to re-read the
//! setting). Asleep, a platform that can tell of the user's return by an event
//! ([`InputIdle::input_signal`]; X11: an XSync alarm on the server's IDLETIME counter) is waited
//! on, so an asleep app does not wake at all until the user is back; one that cannot is asked
//! once a second, so the characters wake within a second of the user's return ([`Pace`]; tests
//! pass a faster one).

use crate::avatar::HostError;
use crate::error::{CoreError, Result};
use crate::store::Store;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Settings key: `{"after_minutes": n}`, 0 = never asleep.
pub const KEY: &str = "yui.sleep";
/// `after_minutes` when it was never set.
pub const DEFAULT_AFTER_MINUTES: u64 = 10;
/// The highest `after_minutes` accepted (a day).
pub const MAX_AFTER_MINUTES: u64 = 24 * 60;

/// How often [`watch`] asks.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// Asleep: how often it asks whether the user is back (the wake-up delay at most).
    pub wake_check: Duration,
    /// Awake: the longest wait between two checks (a changed setting takes effect within it).
    pub recheck: Duration,
}

impl Pace {
    pub const APP: Pace = Pace {
        wake_check: Duration::from_secs(1),
        recheck: Duration::from_secs(60),
    };
}

/// How long the user has given no input, as the platform counts it.
pub trait InputIdle: Send + Sync {
    fn idle_for(&self) -> std::result::Result<Duration, HostError>;

    /// Ask to be told of the user's next input: a receiver that changes when it comes (made
    /// after the ask, so only input from now on counts). `None`: the platform cannot tell by an
    /// event, and [`watch`] asks [`InputIdle::idle_for`] every `wake_check` instead.
    fn input_signal(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
}

pub fn default_value() -> Value {
    json!({ "after_minutes": DEFAULT_AFTER_MINUTES })
}

/// The threshold a `yui.sleep` value sets (`None`: never asleep).
pub fn after_from_value(v: &Value) -> Result<Option<Duration>> {
    match v.get("after_minutes").and_then(Value::as_u64) {
        Some(0) => Ok(None),
        Some(n) if n <= MAX_AFTER_MINUTES => Ok(Some(Duration::from_secs(n * 60))),
        _ => Err(CoreError::invalid(format!(
            "{KEY} must be {{\"after_minutes\": n}} with n a whole number from 0 (never) to {MAX_AFTER_MINUTES}"
        ))),
    }
}

/// The threshold in effect (an unreadable value reads as the default).
pub fn after(store: &Store) -> Option<Duration> {
    crate::store::kv::get(store, KEY)
        .ok()
        .flatten()
        .and_then(|v| after_from_value(&v).ok())
        .unwrap_or(Some(Duration::from_secs(DEFAULT_AFTER_MINUTES * 60)))
}

/// Keep `asleep` true exactly while the user has been idle for at least `after()` (read again
/// every `pace.recheck`, so a change of the setting needs no restart). A platform that cannot tell (an error)
/// counts as a user who is there: never asleep by mistake. Ends on `stop`.
pub async fn watch(
    idle: Arc<dyn InputIdle>,
    after: impl Fn() -> Option<Duration>,
    asleep: tokio::sync::watch::Sender<bool>,
    pace: Pace,
    stop: CancellationToken,
) {
    // The setting is read once per recheck, not at every wake check (a store read each second
    // would be most of what an asleep app does).
    let mut limit = after();
    let mut read_at = tokio::time::Instant::now();
    loop {
        if read_at.elapsed() >= pace.recheck {
            limit = after();
            read_at = tokio::time::Instant::now();
        }
        let wait = match (limit, idle.idle_for()) {
            (Some(limit), Ok(idle_now)) => {
                let now_asleep = idle_now >= limit;
                asleep.send_if_modified(|a| std::mem::replace(a, now_asleep) != now_asleep);
                if now_asleep {
                    if let Some(mut input) = idle.input_signal() {
                        // Input between the look above and the arming is never signalled: only
                        // a user still away is waited for; one back already is looked at again.
                        if idle.idle_for().is_ok_and(|i| i >= limit) {
                            // Asleep until the user is back (or the setting is read again).
                            let fired = tokio::select! {
                                _ = stop.cancelled() => return,
                                r = input.changed() => Some(r.is_ok()),
                                _ = tokio::time::sleep(pace.recheck) => None,
                            };
                            // A signal with the user still away (or a signal gone) waits the
                            // poll's pace once: never a spin.
                            let away = || idle.idle_for().is_ok_and(|i| i >= limit);
                            if fired == Some(false) || (fired == Some(true) && away()) {
                                tokio::select! {
                                    _ = stop.cancelled() => return,
                                    _ = tokio::time::sleep(pace.wake_check) => {}
                                }
                            }
                        }
                        continue;
                    }
                    pace.wake_check
                } else {
                    (limit - idle_now).min(pace.recheck)
                }
            }
            (_, r) => {
                if let Err(e) = r {
                    tracing::debug!(error = %e, "presence: no idle time");
                }
                asleep.send_if_modified(|a| std::mem::replace(a, false));
                pace.recheck
            }
        };
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Instant;

    /// The user's last input; `broken`: the platform cannot tell.
    struct Fake {
        last_input: Mutex<Instant>,
        broken: Mutex<bool>,
        asked: Mutex<u32>,
    }
    impl Fake {
        fn new() -> Arc<Self> {
            Arc::new(Self {
                last_input: Mutex::new(Instant::now()),
                broken: Mutex::new(false),
                asked: Mutex::new(0),
            })
        }
        fn input(&self) {
            *self.last_input.lock().unwrap() = Instant::now();
        }
        fn asked(&self) -> u32 {
            *self.asked.lock().unwrap()
        }
    }
    impl InputIdle for Fake {
        fn idle_for(&self) -> std::result::Result<Duration, HostError> {
            *self.asked.lock().unwrap() += 1;
            if *self.broken.lock().unwrap() {
                return Err(HostError::unavailable("no screen saver extension"));
            }
            Ok(self.last_input.lock().unwrap().elapsed())
        }
    }

    /// Faster than the app's pace, so each test takes well under a second.
    const PACE: Pace = Pace {
        wake_check: Duration::from_millis(10),
        recheck: Duration::from_millis(100),
    };
    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn start(
        fake: &Arc<Fake>,
        limit: Arc<Mutex<Option<Duration>>>,
    ) -> (tokio::sync::watch::Receiver<bool>, CancellationToken) {
        let (tx, rx) = tokio::sync::watch::channel(false);
        let stop = CancellationToken::new();
        let idle: Arc<dyn InputIdle> = fake.clone();
        let after = move || *limit.lock().unwrap();
        tokio::spawn(watch(idle, after, tx, PACE, stop.clone()));
        (rx, stop)
    }

    /// Waits for `rx` to read `want` (at most `within`).
    async fn becomes(
        rx: &mut tokio::sync::watch::Receiver<bool>,
        want: bool,
        within: Duration,
    ) -> bool {
        tokio::time::timeout(within, rx.wait_for(|a| *a == want))
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn asleep_after_the_idle_limit_and_awake_at_the_next_check_after_input() {
        let fake = Fake::new();
        let (mut rx, stop) = start(&fake, Arc::new(Mutex::new(Some(ms(300)))));
        tokio::time::sleep(ms(250)).await;
        assert!(!*rx.borrow(), "asleep before the limit");
        assert!(
            becomes(&mut rx, true, ms(500)).await,
            "not asleep past the limit"
        );
        let slept = Instant::now();
        // Asleep, the platform is asked once per wake check.
        let asked = fake.asked();
        tokio::time::sleep(ms(200)).await;
        let more = fake.asked() - asked;
        assert!(
            (5..=21).contains(&more),
            "{more} checks in 20 wake checks asleep"
        );
        fake.input();
        assert!(
            becomes(&mut rx, false, ms(500)).await,
            "still asleep after input"
        );
        assert!(slept.elapsed() >= ms(200));
        stop.cancel();
    }

    #[tokio::test]
    async fn awake_it_checks_only_when_the_limit_could_be_reached() {
        let fake = Fake::new();
        let (rx, stop) = start(&fake, Arc::new(Mutex::new(Some(ms(10_000)))));
        // The user is busy: never asleep, and one check per recheck at most (≈ 10 in 1 s).
        for _ in 0..20 {
            tokio::time::sleep(ms(50)).await;
            fake.input();
        }
        assert!(!*rx.borrow());
        let asked = fake.asked();
        assert!(
            (1..=13).contains(&asked),
            "{asked} checks in 10 rechecks awake"
        );
        stop.cancel();
    }

    #[tokio::test]
    async fn a_changed_setting_applies_without_restart_and_none_means_never() {
        let fake = Fake::new();
        let limit = Arc::new(Mutex::new(None));
        let (mut rx, stop) = start(&fake, limit.clone());
        tokio::time::sleep(ms(300)).await;
        assert!(!*rx.borrow(), "asleep with sleep off");
        *limit.lock().unwrap() = Some(ms(100));
        assert!(
            becomes(&mut rx, true, ms(1000)).await,
            "the new limit was not applied"
        );
        *limit.lock().unwrap() = None;
        assert!(
            becomes(&mut rx, false, ms(1000)).await,
            "still asleep after sleep was turned off"
        );
        stop.cancel();
    }

    #[tokio::test]
    async fn a_platform_that_cannot_tell_never_puts_them_to_sleep() {
        let fake = Fake::new();
        let (mut rx, stop) = start(&fake, Arc::new(Mutex::new(Some(ms(50)))));
        assert!(becomes(&mut rx, true, ms(1000)).await);
        *fake.broken.lock().unwrap() = true;
        assert!(
            becomes(&mut rx, false, ms(1000)).await,
            "asleep on an unreadable idle time"
        );
        tokio::time::sleep(ms(300)).await;
        assert!(!*rx.borrow());
        stop.cancel();
    }

    #[test]
    fn the_threshold_is_read_from_the_store_with_the_default_when_unset_or_unreadable() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("yui.sqlite3")).unwrap();
        let min = Duration::from_secs(60);
        assert_eq!(after(&store), Some(10 * min));
        crate::store::kv::put(&store, KEY, &json!({"after_minutes": 3})).unwrap();
        assert_eq!(after(&store), Some(3 * min));
        crate::store::kv::put(&store, KEY, &json!({"after_minutes": 0})).unwrap();
        assert_eq!(after(&store), None);
        // Not a valid value (an older build, a hand edit): read as the default.
        crate::store::kv::put(&store, KEY, &json!({"after_minutes": "soon"})).unwrap();
        assert_eq!(after(&store), Some(10 * min));
    }

    #[test]
    fn the_setting_is_whole_minutes_up_to_a_day() {
        let min = Duration::from_secs(60);
        assert_eq!(after_from_value(&default_value()).unwrap(), Some(10 * min));
        assert_eq!(
            after_from_value(&json!({"after_minutes": 0})).unwrap(),
            None
        );
        assert_eq!(
            after_from_value(&json!({"after_minutes": 1440})).unwrap(),
            Some(1440 * min)
        );
        for bad in [
            json!({"after_minutes": 1441}),
            json!({"after_minutes": -1}),
            json!({"after_minutes": 2.5}),
            json!({"after": 3}),
            json!(5),
        ] {
            let e = after_from_value(&bad).unwrap_err();
            assert_eq!(
                e.message,
                "yui.sleep must be {\"after_minutes\": n} with n a whole number from 0 (never) to 1440"
            );
        }
    }
}
