//! The whole app's CPU around the avatar (docs/PERFORMANCE.md, "Avatar"): the release app
//! (yui-app and its WebKit processes) idle with the character standing, sitting still on another
//! app's window, and while that window is dragged (a move every 16 ms). A script that prints
//! figures (like `capture.rs`), run by `tests/e2e/drag_cpu.sh`, which starts the display, the
//! window manager, the compositor and tauri-driver and builds the release app. It lives here,
//! not among the app's tests, so it builds in release without the app's test-only dependencies;
//! it shares the end-to-end tests' WebDriver client and scripted backend, and the measuring
//! programs' launch and `/proc` reading (`tests/e2e/procstat.rs`), with `footprint.rs`.
//!
//! The character gets on the window the real way: a scripted model backend (the test kit's)
//! answers the chat message with a `body_action sit_on_window` call. CPU is read from
//! `/proc/<pid>/stat` (utime + stime) of the app and all its descendants, per process
//! (`procstat.rs`).
//!
//! Env: `YUI_APP_BIN` (the app to run), `TAURI_DRIVER_URL`, `DISPLAY`; `YUI_DRAG_IDLE_SECS`
//! (idle and sitting windows, default 60), `YUI_DRAG_SECS` (default 10), `YUI_DRAG_SETTLE_SECS`
//! (after launch, default 20), `YUI_DRAG_CONTEXT` (`name=pid ...`: other processes to report,
//! e.g. the X server and the compositor, which are not the app).

#[allow(dead_code)]
#[path = "../../../tests/e2e/fake_backend.rs"]
mod fake_backend;
#[allow(dead_code)]
#[path = "../../../tests/e2e/procstat.rs"]
mod procstat;
#[allow(dead_code)]
#[path = "../../../tests/e2e/webdriver.rs"]
mod webdriver;

use procstat::{clock_ticks, sample, secs, usage};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::*;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;
use yui_core::avatar::geometry::SIT_SINK;
use yui_core::avatar::{DesktopHost, Rect};
use yui_core::backend::Transport;
use yui_core::Store;
use yui_testkit::sse;

/// Used by `fake_backend`: seed the store before the app starts.
fn seed(dir: &Path, f: impl FnOnce(&Store)) {
    let store = Store::open(dir.join(yui_core::paths::DB_FILE)).expect("open store");
    f(&store);
}

const PERCH: (i16, i16, u16, u16) = (300, 500, 800, 400);

/// Another app's window (class Perch), managed by the window manager like any app's.
fn open_perch(conn: &RustConnection, root: Window) -> Window {
    let id = conn.generate_id().unwrap();
    let (x, y, w, h) = PERCH;
    conn.create_window(
        x11rb::COPY_DEPTH_FROM_PARENT,
        id,
        root,
        x,
        y,
        w,
        h,
        0,
        WindowClass::INPUT_OUTPUT,
        x11rb::COPY_FROM_PARENT,
        &CreateWindowAux::new().background_pixel(0x00f4_f1e8),
    )
    .unwrap();
    conn.change_property8(
        PropMode::REPLACE,
        id,
        AtomEnum::WM_CLASS,
        AtomEnum::STRING,
        b"perch\0Perch\0",
    )
    .unwrap();
    conn.change_property8(
        PropMode::REPLACE,
        id,
        AtomEnum::WM_NAME,
        AtomEnum::STRING,
        b"notes - Perch",
    )
    .unwrap();
    // USPosition | USSize: the window manager keeps the place asked for.
    let mut hints = [0u32; 18];
    hints[..5].copy_from_slice(&[3, x as u32, y as u32, w.into(), h.into()]);
    conn.change_property32(
        PropMode::REPLACE,
        id,
        AtomEnum::WM_NORMAL_HINTS,
        AtomEnum::WM_SIZE_HINTS,
        &hints,
    )
    .unwrap();
    conn.map_window(id).unwrap();
    conn.flush().unwrap();
    id
}

/// Where the perch and the main window are now, read from the X server.
fn frames(host: &yui_x11::X11Desktop) -> (Rect, Rect) {
    let desk = host.desktop().expect("the desktop");
    let perch = desk
        .windows
        .iter()
        .find(|w| w.class == "Perch")
        .expect("the perch")
        .frame;
    let main = desk
        .windows
        .iter()
        .find(|w| w.own && w.title.ends_with("Yui"))
        .unwrap_or_else(|| panic!("the main window among {:?}", desk.windows))
        .frame;
    (perch, main)
}

fn sits_on(main: Rect, perch: Rect) -> bool {
    main.bottom() == perch.y + SIT_SINK && main.x >= perch.x && main.right() <= perch.right()
}

#[tokio::main]
async fn main() {
    let app = std::env::var_os("YUI_APP_BIN")
        .map(PathBuf::from)
        .expect("YUI_APP_BIN: the app to measure (tests/e2e/drag_cpu.sh sets it)");
    let idle = secs("YUI_DRAG_IDLE_SECS", 60);
    let drag = secs("YUI_DRAG_SECS", 10);
    let settle = secs("YUI_DRAG_SETTLE_SECS", 20);
    let context: Vec<(String, u32)> = std::env::var("YUI_DRAG_CONTEXT")
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect();
    let hz = clock_ticks();

    let (conn, screen) = x11rb::connect(None).expect("the display");
    let root = conn.setup().roots[screen].root;
    let perch = open_perch(&conn, root);

    let (srv, mut requests) = fake_backend::serve(|req| {
        let args = json!({"action": "sit_on_window", "app": "perch"}).to_string();
        let events = if req.n == 1 {
            vec![
                json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"body_action","arguments":args}}]},"finish_reason":null}]}),
                json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
            ]
        } else {
            vec![
                json!({"choices":[{"index":0,"delta":{"role":"assistant","content":"Up here!"},"finish_reason":null}]}),
                json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
            ]
        };
        sse::chat_stream(&events)
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let base_url = srv.base_url.clone();
    seed(dir.path(), |st| {
        fake_backend::point_at(st, &base_url, Transport::ChatCompletions)
    });

    let (s, pid) = procstat::launch(&app, dir.path()).await;
    let host = yui_x11::X11Desktop::connect(None, Some(pid)).expect("X11 host");
    // Start-up work (first paint, the web process's caches) is not idling.
    tokio::time::sleep(settle).await;

    let measure = |span: Duration| {
        let ctx = context.clone();
        async move {
            let a = sample(pid, &ctx);
            let t = Instant::now();
            tokio::time::sleep(span).await;
            let b = sample(pid, &ctx);
            usage(&a, &b, t.elapsed(), hz)
        }
    };

    // 1. Idle: the character standing where it starts.
    let standing = measure(idle).await;

    // 2. Onto the perch, by the model's tool call.
    s.click(&s.find("#character").await.unwrap()).await.unwrap();
    s.wait_script(
        "return !document.getElementById('chat').hidden",
        Duration::from_secs(5),
    )
    .await
    .expect("the chat opens on a click");
    let input = s.find("#chat-input").await.unwrap();
    s.send_keys(&input, "Sit on my notes\u{E007}")
        .await
        .unwrap();
    s.wait_script(
        "return document.getElementById('bubble').textContent === 'Up here!'",
        Duration::from_secs(30),
    )
    .await
    .expect("the reply after the body_action round trip");
    let _first = requests.recv().await.expect("first request");
    let second = requests.recv().await.expect("the round trip").body;
    let result = second["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "tool"))
        .map(|m| m["content"].clone());
    assert_eq!(result, Some(json!("ok")), "body_action's result");
    // The chat closed (Escape), the pointer away, the bubble gone (it lingers 9 s).
    s.send_keys(&input, "\u{E00C}").await.unwrap();
    conn.warp_pointer(x11rb::NONE, root, 0, 0, 0, 0, 5, 5)
        .unwrap();
    conn.flush().unwrap();
    s.wait_script(
        "return document.getElementById('stage').dataset.body === 'sitting'",
        Duration::from_secs(10),
    )
    .await
    .expect("the page shows the body sitting");
    tokio::time::sleep(Duration::from_secs(12)).await;
    let (p0, m0) = frames(&host);
    assert!(sits_on(m0, p0), "main {m0:?} sits on the perch {p0:?}");

    // 3. Sitting still.
    let sitting = measure(idle).await;

    // 4. The perch dragged: a move every 16 ms (another connection, as a window manager's drag
    // would), back and forth over 600 px across and 100 px down.
    let dragger = x11rb::connect(None).expect("the display").0;
    let tri = |i: i32, half: i32| (i % (2 * half) - half).abs();
    let a = sample(pid, &context);
    let t = Instant::now();
    let mut moves = 0i32;
    while t.elapsed() < drag {
        moves += 1;
        let x = 200 + 5 * tri(moves, 120);
        let y = 450 + tri(moves, 100);
        dragger
            .configure_window(perch, &ConfigureWindowAux::new().x(x).y(y))
            .unwrap();
        dragger.flush().unwrap();
        std::thread::sleep(Duration::from_millis(16));
    }
    let b = sample(pid, &context);
    let dragged = usage(&a, &b, t.elapsed(), hz);
    // The body follows at 30 Hz: give it its last step.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (p1, m1) = frames(&host);
    let followed = sits_on(m1, p1) && p1 != p0;
    let offset_kept = m1.x - p1.x == m0.x - p0.x;

    println!(
        "drag_cpu: {} ({} moves in {:.1} s)",
        app.display(),
        moves,
        drag.as_secs_f64()
    );
    println!(
        "  {:<22} {:>10} {:>10} {:>10}",
        "% of one core", "idle", "sitting", "dragged"
    );
    let names: std::collections::BTreeSet<&String> = standing
        .keys()
        .chain(sitting.keys())
        .chain(dragged.keys())
        .collect();
    let get = |m: &BTreeMap<String, f64>, n: &str| m.get(n).copied().unwrap_or(0.0);
    let app_total = |m: &BTreeMap<String, f64>| {
        m.iter()
            .filter(|(k, _)| !k.starts_with('('))
            .map(|(_, v)| v)
            .sum::<f64>()
    };
    for n in names.iter().filter(|n| !n.starts_with('(')) {
        println!(
            "  {:<22} {:>10.2} {:>10.2} {:>10.2}",
            n,
            get(&standing, n),
            get(&sitting, n),
            get(&dragged, n)
        );
    }
    println!(
        "  {:<22} {:>10.2} {:>10.2} {:>10.2}",
        "app total",
        app_total(&standing),
        app_total(&sitting),
        app_total(&dragged)
    );
    for n in names.iter().filter(|n| n.starts_with('(')) {
        println!(
            "  {:<22} {:>10.2} {:>10.2} {:>10.2}",
            n,
            get(&standing, n),
            get(&sitting, n),
            get(&dragged, n)
        );
    }
    println!(
        "  followed: main {m1:?} on perch {p1:?}: {} (x offset kept: {offset_kept})",
        if followed { "yes" } else { "NO" }
    );
    s.delete().await.ok();
    assert!(followed, "the character did not follow the dragged window");
    assert!(offset_kept, "the character slid along the window");
}
