//! The user's return as an X event, on a real X server (Xvfb; XTest stands in for the user): the
//! XSync alarm on IDLETIME fires at the next input and not before, and the core's presence watch
//! waits on it while asleep instead of asking every `wake_check` (issue 46: an asleep app must
//! not wake every second).

mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use support::*;
use x11rb::connection::Connection as _;
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;
use yui_core::avatar::HostError;
use yui_core::presence::{self, InputIdle, Pace};
use yui_core::turn::CancellationToken;
use yui_x11::X11Desktop;

fn pointer_move(conn: &RustConnection, x: i16) {
    let root = conn.setup().roots[0].root;
    // MotionNotify (6), absolute.
    conn.xtest_fake_input(6, 0, x11rb::CURRENT_TIME, root, x, 300, 0)
        .unwrap();
    x11rb::wrapper::ConnectionExt::sync(conn).unwrap();
}

/// The host, counting how often its idle time is asked.
struct Counting {
    host: Arc<X11Desktop>,
    asked: AtomicU32,
}

impl InputIdle for Counting {
    fn idle_for(&self) -> Result<Duration, HostError> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        self.host.idle_for()
    }
    fn input_signal(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.host.input_signal()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x11_idle_alarm_fires_at_the_next_input_and_asleep_waits_on_it() {
    let _g = lock().await;
    let s = Session::xvfb();
    let conn = s.conn();
    let host = X11Desktop::connect(Some(&s.display), None).unwrap();
    pointer_move(&conn, 10);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut input = host
        .input_signal()
        .expect("Xvfb has SYNC's IDLETIME counter");
    // No input: nothing fires.
    let quiet = tokio::time::timeout(Duration::from_millis(500), input.changed()).await;
    assert!(quiet.is_err(), "fired without input");
    pointer_move(&conn, 400);
    tokio::time::timeout(Duration::from_secs(3), input.changed())
        .await
        .expect("fired at the pointer move")
        .unwrap();

    // The presence watch: asleep after 500 ms without input, then it waits on the alarm, not
    // on a 20 ms poll (which would ask ~50 times in a second).
    pointer_move(&conn, 20);
    let idle = Arc::new(Counting {
        host: host.clone(),
        asked: AtomicU32::new(0),
    });
    let (tx, mut rx) = tokio::sync::watch::channel(false);
    let stop = CancellationToken::new();
    let pace = Pace {
        wake_check: Duration::from_millis(20),
        recheck: Duration::from_secs(60),
    };
    let src: Arc<dyn InputIdle> = idle.clone();
    tokio::spawn(presence::watch(
        src,
        || Some(Duration::from_millis(500)),
        tx,
        pace,
        stop.clone(),
    ));
    tokio::time::timeout(Duration::from_secs(3), rx.wait_for(|a| *a))
        .await
        .expect("asleep after 500 ms without input")
        .unwrap();
    let at_sleep = idle.asked.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let while_asleep = idle.asked.load(Ordering::SeqCst) - at_sleep;
    assert!(
        while_asleep <= 2,
        "asked {while_asleep} times in 1 s asleep"
    );
    pointer_move(&conn, 700);
    tokio::time::timeout(Duration::from_secs(2), rx.wait_for(|a| !*a))
        .await
        .expect("awake after a pointer move")
        .unwrap();
    stop.cancel();
}
