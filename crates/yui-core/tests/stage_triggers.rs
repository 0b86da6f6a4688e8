//! The presence triggers on the stage, with the clock passed in and an input idle time the test
//! drives (the platform's trait; X11's own is tested under Xvfb in yui-x11): the user back after
//! being away, the first activity of the morning (once), and late at night when the user is
//! there. Each becomes a proactive turn of the main character on the scripted server.

use crate::turn_support::backends;
use chrono::{NaiveDate, TimeZone, Utc};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use yui_core::avatar::HostError;
use yui_core::backend::Transport;
use yui_core::clock::ManualClock;
use yui_core::manners::said::Said;
use yui_core::paths::Paths;
use yui_core::presence::{InputIdle, Pace};
use yui_core::stage::{Origin, Stage, StageEvent, StageOptions, Window};
use yui_core::turn::TurnEvent;
use yui_core::Store;
use yui_testkit::sse::*;

struct Idle {
    idle: Mutex<Duration>,
    signal: tokio::sync::watch::Sender<u64>,
}

impl Idle {
    fn set(&self, d: Duration) {
        *self.idle.lock().unwrap() = d;
    }
    fn input(&self) {
        self.set(Duration::ZERO);
        self.signal.send_modify(|n| *n += 1);
    }
}

impl InputIdle for Idle {
    fn idle_for(&self) -> Result<Duration, HostError> {
        Ok(*self.idle.lock().unwrap())
    }
    fn input_signal(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.signal.subscribe())
    }
}

const PACE: Pace = Pace {
    wake_check: Duration::from_millis(10),
    recheck: Duration::from_millis(100),
};

struct Rig {
    _dir: tempfile::TempDir,
    _server: ScriptServer,
    idle: Arc<Idle>,
    store: Store,
    rx: UnboundedReceiver<StageEvent>,
    stop: tokio_util::sync::CancellationToken,
}

/// A stage whose clock shows `hh:mm` local (UTC+01:00) on 2026-12-07, the user idle `idle`.
async fn rig(hh: u32, mm: u32, idle: Duration, replies: usize) -> Rig {
    rig_with(hh, mm, idle, replies, |_| {}).await
}

/// [`rig`] on a store `seed` wrote first, as an earlier run of the app left it.
async fn rig_with(
    hh: u32,
    mm: u32,
    idle: Duration,
    replies: usize,
    seed: impl FnOnce(&Store),
) -> Rig {
    let server = ScriptServer::start((0..replies).map(|_| chat_say("Hi!")).collect()).await;
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    seed(&store);
    let now = Utc.with_ymd_and_hms(2026, 12, 7, hh - 1, mm, 0).unwrap();
    let clock = Arc::new(ManualClock::new(now, 3600));
    let opts = StageOptions {
        backend: backends::fixed(Transport::ChatCompletions, &server.base_url),
        headless: true,
        ..StageOptions::default()
    };
    let (stage, rx) = Stage::new(store.clone(), clock, paths, opts);
    stage.window_opened(Window::Main);
    let (signal, _) = tokio::sync::watch::channel(0);
    let idle = Arc::new(Idle {
        idle: Mutex::new(idle),
        signal,
    });
    let stop = tokio_util::sync::CancellationToken::new();
    let (s, i, st) = (stage.clone(), idle.clone(), stop.clone());
    tokio::spawn(async move { s.watch_presence(i, PACE, st).await });
    Rig {
        _dir: dir,
        _server: server,
        idle,
        store,
        rx,
        stop,
    }
}

impl Rig {
    /// The reason of the next proactive turn's end within 10 s.
    async fn next(&mut self) -> Option<String> {
        next_reason(&mut self.rx, Duration::from_secs(10)).await
    }
}

/// The reason of the next proactive turn's end, or `None` within `within`.
async fn next_reason(rx: &mut UnboundedReceiver<StageEvent>, within: Duration) -> Option<String> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let ev = tokio::time::timeout_at(deadline, rx.recv()).await.ok()??;
        if let StageEvent::Turn {
            origin: Origin::Proactive { reason, .. },
            event: TurnEvent::TurnEnd { .. },
            ..
        } = ev
        {
            return Some(reason);
        }
    }
}

const MIN: u64 = 60;

#[tokio::test]
async fn the_user_back_after_being_away_gets_a_hello_once() {
    let mut r = rig(14, 0, Duration::from_secs(25 * MIN), 2).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        next_reason(&mut r.rx, Duration::from_millis(200)).await,
        None
    );
    r.idle.input();
    assert_eq!(r.next().await.as_deref(), Some("user back after 25 min"));
    // Still here, typing away: nothing more.
    r.idle.set(Duration::from_secs(2));
    assert_eq!(
        next_reason(&mut r.rx, Duration::from_millis(400)).await,
        None
    );
    r.stop.cancel();
}

#[tokio::test]
async fn away_less_than_away_min_is_no_trigger() {
    let mut r = rig(14, 0, Duration::from_secs(19 * MIN), 1).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    r.idle.input();
    assert_eq!(
        next_reason(&mut r.rx, Duration::from_millis(400)).await,
        None
    );
    r.stop.cancel();
}

#[tokio::test]
async fn the_first_activity_of_the_morning_is_the_morning_trigger_once() {
    let mut r = rig(8, 0, Duration::from_secs(9 * 60 * MIN), 2).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    r.idle.input();
    assert_eq!(
        r.next().await.as_deref(),
        Some("the user's first activity this morning")
    );
    // Kept in the store: an app started again this morning does not say it again.
    assert_eq!(Said::load(&r.store).morning, Some(DEC_7));
    r.stop.cancel();
}

const DEC_7: NaiveDate = NaiveDate::from_ymd_opt(2026, 12, 7).unwrap();

#[tokio::test]
async fn a_morning_said_before_a_restart_is_not_said_again_that_day() {
    let said = |morning| {
        move |st: &Store| {
            let s = Said {
                morning: Some(morning),
                night: None,
            };
            s.save(st).unwrap()
        }
    };
    // Said today, then YUI started again: coming back is a return, not a second morning.
    let mut r = rig_with(8, 0, Duration::from_secs(9 * 60 * MIN), 2, said(DEC_7)).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    r.idle.input();
    assert_eq!(r.next().await.as_deref(), Some("user back after 540 min"));
    r.stop.cancel();
    // Said yesterday: today's morning goes.
    let yesterday = DEC_7.pred_opt().unwrap();
    let mut r = rig_with(8, 0, Duration::from_secs(5), 2, said(yesterday)).await;
    assert_eq!(
        r.next().await.as_deref(),
        Some("the user's first activity this morning")
    );
    r.stop.cancel();
}

#[tokio::test]
async fn late_at_night_with_the_user_there_is_the_night_trigger() {
    let mut r = rig(23, 10, Duration::from_secs(5), 2).await;
    assert_eq!(
        r.next().await.as_deref(),
        Some("it is late at night and the user is still here")
    );
    // Once a night.
    assert_eq!(
        next_reason(&mut r.rx, Duration::from_millis(400)).await,
        None
    );
    r.stop.cancel();
}

#[tokio::test]
async fn the_window_the_character_sits_on_closing_is_the_perch_trigger() {
    let mut r = rig(14, 0, Duration::from_secs(2), 1).await;
    let store = r.store.clone();
    let put = |v: serde_json::Value| yui_core::store::kv::put(&store, "yui.body", &v).unwrap();
    put(serde_json::json!({"state": "sitting", "window": {"app": "firefox", "title": "News"}}));
    assert_eq!(
        next_reason(&mut r.rx, Duration::from_millis(300)).await,
        None
    );
    // The avatar stood up with nothing to wait for: the window closed.
    put(serde_json::json!({"state": "standing", "x": 10, "y": 900}));
    assert_eq!(
        r.next().await.as_deref(),
        Some("the window you sit on closed (firefox)")
    );
    r.stop.cancel();
}
