//! The X11 host and the avatar executor on real X servers (Xvfb, Xephyr with two Xinerama heads)
//! with openbox and real windows: perch targets, frames, states, following a moved window,
//! standing up, monitor numbering, capture, own windows absent from the capture, no files.

mod support;

use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use support::*;
use yui_core::avatar::body::{Action, Outcome, Timing};
use yui_core::avatar::geometry::SIT_SINK;
use yui_core::avatar::{Activity, Avatar, BodyWindow, DesktopHost, DesktopWindow};
use yui_core::clock::SystemClock;
use yui_core::settings;
use yui_core::tools::avatar::{BodyActionTool, LookTool};
use yui_core::tools::{ToolContext, ToolOutput};
use yui_core::turn::CancellationToken;
use yui_core::{Store, WindowKind};
use yui_x11::X11Desktop;

const BODY: (u32, u32) = (120, 160);
const GREEN: u32 = 0x00_20_c0_20;
const BLUE: u32 = 0x00_20_20_c0;
const RED: u32 = 0x00_ff_00_00;

fn find(host: &X11Desktop, class: &str) -> Option<DesktopWindow> {
    host.desktop()
        .ok()?
        .windows
        .into_iter()
        .find(|w| w.class == class)
}

async fn wait_listed(host: &X11Desktop, class: &str) -> DesktopWindow {
    assert!(
        eventually(|| find(host, class).is_some()).await,
        "{class} never listed"
    );
    // Let the window manager finish placing and framing it.
    tokio::time::sleep(Duration::from_millis(150)).await;
    find(host, class).unwrap()
}

struct Rig {
    _dir: tempfile::TempDir,
    store: Store,
    host: Arc<X11Desktop>,
    body: Arc<XBody>,
    avatar: Arc<Avatar>,
}

fn rig(s: &Session, at: (i32, i32)) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("yui.db")).unwrap();
    let host = X11Desktop::connect(Some(&s.display), Some(std::process::id())).unwrap();
    let body = XBody::open(&s.conn(), at, BODY, RED);
    let timing = Timing {
        max_glide: Duration::from_millis(150),
        ..Timing::default()
    };
    let avatar = Arc::new(Avatar::with_timing(
        Some(host.clone()),
        Some(body.clone()),
        Some(store.clone()),
        timing,
    ));
    Rig {
        _dir: dir,
        store,
        host,
        body,
        avatar,
    }
}

fn ctx(store: &Store) -> ToolContext {
    ToolContext {
        store: store.clone(),
        clock: Arc::new(SystemClock),
        preset_id: "yui".into(),
        window: WindowKind::Main,
        turn_id: "t".into(),
        call: Default::default(),
    }
}

async fn look(avatar: &Arc<Avatar>, store: &Store, args: Value) -> ToolOutput {
    LookTool::shared(Some(avatar.clone()))
        .call(args, &ctx(store), CancellationToken::new())
        .await
        .unwrap()
}

fn sit(app: &str) -> Action {
    Action::SitOnWindow { app: app.into() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x11_lists_real_windows_with_class_title_frame_and_monitor() {
    let _g = lock().await;
    let s = Session::xvfb();
    let conn = s.conn();
    let _a = TestWindow::open(
        &conn,
        "Alpha",
        "alpha notes",
        (200, 300, 600, 400),
        GREEN,
        None,
    );
    let b = TestWindow::open(&conn, "Beta", "beta", (900, 400, 500, 300), BLUE, None);
    let host = X11Desktop::connect(Some(&s.display), None).unwrap();
    let alpha = wait_listed(&host, "Alpha").await;
    assert_eq!(
        (alpha.instance.as_str(), alpha.title.as_str()),
        ("alpha", "alpha notes")
    );
    // openbox's frame: the outer top edge is above the client's, its width at least the client's.
    assert!(
        alpha.frame.w >= 600 && alpha.frame.h > 400,
        "{:?}",
        alpha.frame
    );
    let desk = host.desktop().unwrap();
    assert_eq!(desk.monitors.len(), 1);
    assert_eq!(
        (desk.monitors[0].number, desk.monitors[0].rect.w),
        (1, 1920)
    );
    // Stacking order: Beta was mapped last, so it is on top (last).
    let order: Vec<_> = desk.windows.iter().map(|w| w.class.as_str()).collect();
    assert_eq!(order, ["Alpha", "Beta"]);
    b.minimize();
    assert!(
        eventually(|| find(&host, "Beta").is_some_and(|w| w.hidden)).await,
        "minimised"
    );
    // look at perch_targets over the real desktop.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("y.db")).unwrap();
    let avatar = Arc::new(Avatar::new(Some(host.clone()), None, None));
    let out = look(&avatar, &store, json!({"at": "perch_targets"})).await;
    let v: Value = serde_json::from_str(out.as_text()).unwrap();
    let ws = v["windows"].as_array().unwrap();
    let beta = ws.iter().find(|w| w["app"] == "Beta").unwrap();
    assert_eq!(
        (beta["visible"].clone(), beta["monitor"].clone()),
        (json!(false), json!(1))
    );
    let alpha = ws.iter().find(|w| w["app"] == "Alpha").unwrap();
    assert_eq!(
        (alpha["visible"].clone(), alpha["can_sit"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(alpha["title"], "alpha notes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x11_changes_are_event_driven() {
    let _g = lock().await;
    let s = Session::xvfb();
    let conn = s.conn();
    let w = TestWindow::open(&conn, "Gamma", "g", (100, 200, 400, 300), GREEN, None);
    let own = std::process::id();
    let mine = TestWindow::open(&conn, "Mine", "yui", (700, 200, 200, 200), RED, Some(own));
    let host = X11Desktop::connect(Some(&s.display), Some(own)).unwrap();
    wait_listed(&host, "Gamma").await;
    wait_listed(&host, "Mine").await;
    let mut rx = host.changes();
    tokio::time::sleep(Duration::from_millis(300)).await;
    rx.mark_unchanged();
    // Idle: no signal at all (nothing polls).
    assert!(
        tokio::time::timeout(Duration::from_millis(400), rx.changed())
            .await
            .is_err()
    );
    // YUI's own window moving (the body gliding) signals nothing either.
    mine.move_to(720, 260);
    assert!(
        tokio::time::timeout(Duration::from_millis(400), rx.changed())
            .await
            .is_err(),
        "an own move woke the host"
    );
    assert!(eventually(|| find(&host, "Mine").is_some_and(|m| m.own && m.frame.x > 700)).await);
    w.move_to(300, 400);
    tokio::time::timeout(Duration::from_secs(2), rx.changed())
        .await
        .expect("a move is signalled")
        .unwrap();
}

/// The host keeps what it read until an X event says it changed: after a burst of moves, a
/// rename and state changes, what it lists is what a host connecting afresh reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x11_remembered_windows_match_a_fresh_read_after_moves_renames_and_states() {
    use x11rb::wrapper::ConnectionExt as _;
    let _g = lock().await;
    let s = Session::xvfb();
    let conn = s.conn();
    let a = TestWindow::open(&conn, "Alpha", "a", (200, 300, 600, 400), GREEN, None);
    let b = TestWindow::open(&conn, "Beta", "b", (900, 400, 500, 300), BLUE, None);
    let host = X11Desktop::connect(Some(&s.display), None).unwrap();
    wait_listed(&host, "Alpha").await;
    let before = wait_listed(&host, "Beta").await;
    for i in 0..40 {
        a.move_to(100 + i * 20, 200 + i * 3);
        if i % 10 == 0 {
            // Reads in between keep the cache busy while the events arrive.
            host.desktop().unwrap();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    conn.change_property8(
        x11rb::protocol::xproto::PropMode::REPLACE,
        b.id,
        intern(&conn, "_NET_WM_NAME"),
        intern(&conn, "UTF8_STRING"),
        b"beta renamed",
    )
    .unwrap();
    x11rb::connection::Connection::flush(&*conn).unwrap();
    b.set_state("_NET_WM_STATE_MAXIMIZED_VERT", true);
    b.set_state("_NET_WM_STATE_MAXIMIZED_HORZ", true);
    let same = || {
        let fresh = X11Desktop::connect(Some(&s.display), None).unwrap();
        let (now, then) = (host.desktop().unwrap(), fresh.desktop().unwrap());
        now == then
            && now
                .windows
                .iter()
                .any(|w| w.title == "beta renamed" && w.maximized)
            && now
                .windows
                .iter()
                .any(|w| w.class == "Alpha" && w.frame.x > 800 && w.frame.x < 900)
    };
    assert!(
        eventually(same).await,
        "remembered {:?}",
        host.desktop().unwrap().windows
    );
    let beta = find(&host, "Beta").unwrap();
    assert_ne!(beta.frame, before.frame, "maximising resized it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x11_sit_on_window_lands_on_its_top_edge_and_follows_it() {
    let _g = lock().await;
    let s = Session::xvfb();
    let conn = s.conn();
    let w = TestWindow::open(&conn, "Perch", "perch", (400, 500, 700, 300), GREEN, None);
    let r = rig(&s, (1500, 900));
    let perch = wait_listed(&r.host, "Perch").await;
    assert_eq!(r.avatar.act(sit("perch")).await, Outcome::Ok);
    let (x, y) = r.body.position().unwrap();
    assert_eq!(y, perch.frame.y + SIT_SINK - BODY.1 as i32);
    assert!(x >= perch.frame.x && x + BODY.0 as i32 <= perch.frame.right());
    // The user moves the window: the body follows.
    w.move_to(200, 600);
    let moved = async {
        eventually(|| {
            find(&r.host, "Perch").is_some_and(|p| {
                r.body.position()
                    == Some((
                        x - perch.frame.x + p.frame.x,
                        p.frame.y + SIT_SINK - BODY.1 as i32,
                    ))
                    && p.frame.y != perch.frame.y
            })
        })
        .await
    };
    assert!(
        moved.await,
        "body at {:?}, perch {:?}",
        r.body.position(),
        find(&r.host, "Perch")
    );
    assert_eq!(r.avatar.state().state, Activity::Sitting);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x11_stands_up_when_fullscreen_then_sits_back_and_when_minimized_or_closed() {
    let _g = lock().await;
    let s = Session::xvfb();
    let conn = s.conn();
    let w = TestWindow::open(&conn, "Perch", "perch", (400, 500, 700, 300), GREEN, None);
    let r = rig(&s, (1500, 900));
    wait_listed(&r.host, "Perch").await;
    assert_eq!(r.avatar.act(sit("perch")).await, Outcome::Ok);
    let floor = 1080 - BODY.1 as i32;
    w.fullscreen(true);
    assert!(
        eventually(|| r.avatar.state().state == Activity::Standing).await,
        "fullscreen"
    );
    assert_eq!(r.body.position().unwrap().1, floor);
    // Never sits on a fullscreen window.
    assert_eq!(r.avatar.act(sit("perch")).await, Outcome::Blocked);
    let out = BodyActionTool::shared(Some(r.avatar.clone()))
        .call(
            json!({"action": "sit_on_window", "app": "perch"}),
            &ctx(&r.store),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.as_text(), "blocked");
    assert_eq!(r.avatar.act(sit("perch")).await, Outcome::Blocked);
    w.fullscreen(false);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(r.avatar.act(sit("perch")).await, Outcome::Ok);
    w.minimize();
    assert!(
        eventually(|| r.avatar.state().state == Activity::Standing).await,
        "minimised"
    );
    assert_eq!(r.body.position().unwrap().1, floor);
    assert_eq!(
        r.avatar.state().waiting_for.map(|p| p.app).as_deref(),
        Some("Perch")
    );
    w.restore();
    assert!(
        eventually(|| r.avatar.state().state == Activity::Sitting).await,
        "sits back"
    );
    w.close();
    assert!(
        eventually(|| r.avatar.state().state == Activity::Standing).await,
        "closed"
    );
    assert_eq!(r.avatar.state().waiting_for, None);
    assert_eq!(r.avatar.act(sit("perch")).await, Outcome::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x11_two_xinerama_heads_are_monitors_1_and_2() {
    let _g = lock().await;
    let s = Session::two_heads();
    let host = X11Desktop::connect(Some(&s.display), None).unwrap();
    let ms = host.desktop().unwrap().monitors;
    let rects: Vec<_> = ms
        .iter()
        .map(|m| (m.number, m.rect.x, m.rect.w, m.rect.h))
        .collect();
    assert_eq!(rects, [(1, 0, 1280, 1080), (2, 1280, 1280, 1080)]);
    // move_to with a monitor lands on that head; a third one is invalid.
    let r = rig(&s, (100, 100));
    let tool = BodyActionTool::shared(Some(r.avatar.clone()));
    let call = |args: Value| {
        let tool = tool.clone();
        let store = r.store.clone();
        async move {
            tool.call(args, &ctx(&store), CancellationToken::new())
                .await
                .unwrap()
                .as_text()
                .to_string()
        }
    };
    assert_eq!(
        call(json!({"action": "move_to", "spot": "bottom-right", "monitor": 2})).await,
        "ok"
    );
    let (x, _) = r.body.position().unwrap();
    assert_eq!(x, 2560 - 16 - BODY.0 as i32);
    assert_eq!(r.avatar.state().monitor, Some(2));
    assert_eq!(
        call(json!({"action": "move_to", "spot": "center", "monitor": 3})).await,
        "error: invalid field monitor"
    );
    // look at screen: the body's display by default, each head by number, 3 is invalid.
    settings::set_switch(&r.store, settings::SCREEN, true).unwrap();
    let ToolOutput::Images { text, images } =
        look(&r.avatar, &r.store, json!({"at": "screen"})).await
    else {
        panic!("no image");
    };
    assert_eq!(text, "screenshot of display 2");
    let img = decode(&images[0]);
    assert_eq!((img.width(), img.height()), (1280, 1080));
    let ToolOutput::Images { text, .. } =
        look(&r.avatar, &r.store, json!({"at": "screen", "monitor": 1})).await
    else {
        panic!("no image");
    };
    assert_eq!(text, "screenshot of display 1");
    assert_eq!(
        look(&r.avatar, &r.store, json!({"at": "screen", "monitor": 3})).await,
        ToolOutput::text("error: invalid field monitor")
    );
}

fn decode(url: &str) -> image::RgbImage {
    use base64::Engine as _;
    let b64 = url
        .strip_prefix("data:image/jpeg;base64,")
        .expect("a JPEG data URL");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    image::load_from_memory(&bytes).unwrap().into_rgb8()
}

fn count_files(dir: &std::path::Path) -> usize {
    walk(dir).len()
}
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x11_capture_leaves_out_own_windows_and_writes_no_files() {
    let _g = lock().await;
    let s = Session::xvfb();
    let conn = s.conn();
    let _w = TestWindow::open(&conn, "Under", "under", (100, 100, 1000, 700), GREEN, None);
    let r = rig(&s, (400, 300));
    wait_listed(&r.host, "Under").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Without hiding, the (red) body is in the picture at its place...
    let raw = r
        .host
        .capture(yui_core::avatar::Rect::new(0, 0, 1920, 1080))
        .unwrap();
    let px = |rgb: &[u8], w: u32, x: u32, y: u32| {
        let i = ((y * w + x) * 3) as usize;
        (rgb[i], rgb[i + 1], rgb[i + 2])
    };
    assert_eq!(
        px(&raw.rgb, 1920, 450, 350),
        (0xff, 0, 0),
        "control: the body is red there"
    );
    // ...and look at screen hides it: the window under it shows there instead.
    settings::set_switch(&r.store, settings::SCREEN, true).unwrap();
    let tmp = std::env::temp_dir();
    let before = (count_files(&tmp), count_files(r._dir.path()));
    let ToolOutput::Images { images, .. } =
        look(&r.avatar, &r.store, json!({"at": "screen"})).await
    else {
        panic!("no image");
    };
    let img = decode(&images[0]);
    assert_eq!((img.width(), img.height()), (1280, 720));
    // 450,350 on 1920×1080 is 300,233 on 1280×720.
    let p = img.get_pixel(300, 233).0;
    assert!(
        p[0] < 0x80 && p[1] > 0x90,
        "green (the window under), not red: {p:?}"
    );
    assert_eq!(
        *r.body.hides.lock().unwrap(),
        vec![true, false],
        "hidden for the capture, shown after"
    );
    assert!(r.body.position().is_some());
    let after = (count_files(&tmp), count_files(r._dir.path()));
    // The store's WAL files may appear in the data dir at the first write; a capture writes none.
    assert!(
        after.0 <= before.0,
        "no new file under the temp dir: {before:?} -> {after:?}"
    );
    assert_eq!(after.1, before.1, "no new file in the data dir");
}

/// The user's idle time is the server's: it grows while nobody touches the display and starts
/// again at a pointer move (XTest stands in for the user); the core's presence watch puts the
/// characters to sleep on it and wakes them at the next input.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x11_idle_time_grows_without_input_and_a_pointer_move_resets_it_and_wakes_them() {
    use x11rb::connection::Connection as _;
    use x11rb::protocol::xtest::ConnectionExt as _;
    use yui_core::presence::{self, InputIdle, Pace};
    let _g = lock().await;
    let s = Session::xvfb();
    let conn = s.conn();
    let host = X11Desktop::connect(Some(&s.display), None).unwrap();
    let pointer_move = |x: i16| {
        let root = conn.setup().roots[0].root;
        // MotionNotify (6), absolute.
        conn.xtest_fake_input(6, 0, x11rb::CURRENT_TIME, root, x, 300, 0)
            .unwrap();
        x11rb::wrapper::ConnectionExt::sync(&*conn).unwrap();
    };
    pointer_move(10);
    tokio::time::sleep(Duration::from_millis(700)).await;
    let idle = host.idle_for().unwrap();
    assert!(
        idle >= Duration::from_millis(600),
        "idle {idle:?} after 700 ms"
    );
    assert!(idle < Duration::from_secs(5), "idle {idle:?}");
    pointer_move(400);
    let idle = host.idle_for().unwrap();
    assert!(
        idle < Duration::from_millis(300),
        "idle {idle:?} just after a move"
    );

    let (tx, mut rx) = tokio::sync::watch::channel(false);
    let stop = CancellationToken::new();
    let pace = Pace {
        wake_check: Duration::from_millis(20),
        recheck: Duration::from_millis(200),
    };
    let idle: Arc<dyn InputIdle> = host.clone();
    tokio::spawn(presence::watch(
        idle,
        || Some(Duration::from_millis(500)),
        tx,
        pace,
        stop.clone(),
    ));
    tokio::time::timeout(Duration::from_secs(3), rx.wait_for(|a| *a))
        .await
        .expect("asleep after 500 ms without input")
        .unwrap();
    pointer_move(700);
    tokio::time::timeout(Duration::from_secs(1), rx.wait_for(|a| !*a))
        .await
        .expect("awake after a pointer move")
        .unwrap();
    stop.cancel();
}
