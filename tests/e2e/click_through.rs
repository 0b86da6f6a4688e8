//! Click-through on the real app under Xvfb (docs/avatar.md, "Click-through"): a plain X client's
//! window lies under the main character; a click (XTest, the X server's own input) on a pixel of
//! the character's window where nothing is drawn reaches that window, a click on the character
//! reaches the character, and the window's input shape, read back with the X Shape extension, is
//! what the page computed. The chat box opening grows the shape; a drag still moves the window;
//! no outline (`null`) or the switch off gives the whole window back; bad rectangles are refused.
//! The same for a VRM model (the generated humanoid), whose outline is its drawn silhouette, and
//! for a card's picture (a figure on a transparent ground), whose outline is its opaque pixels.

use super::xinput::Hands;
use super::{launch_showing, seed};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use x11rb::connection::Connection as _;
use x11rb::protocol::shape::{ConnectionExt as _, SK};
use x11rb::protocol::xproto::*;
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use yui_core::looks::{self, CardImport};
use yui_core::{presets, settings, vrm};
use yui_testkit::vrm::{Fixture, Version};

/// A plain X client's window over the whole screen, under the always-on-top characters, counting
/// the button presses it gets.
fn open_below() -> (RustConnection, Window) {
    let (conn, screen) = x11rb::connect(None).expect("the e2e display");
    let root = conn.setup().roots[screen].root;
    let id = conn.generate_id().unwrap();
    conn.create_window(
        x11rb::COPY_DEPTH_FROM_PARENT,
        id,
        root,
        0,
        0,
        1280,
        800,
        0,
        WindowClass::INPUT_OUTPUT,
        x11rb::COPY_FROM_PARENT,
        &CreateWindowAux::new()
            .background_pixel(0x0030_5080)
            .event_mask(EventMask::BUTTON_PRESS),
    )
    .unwrap();
    conn.map_window(id).unwrap();
    conn.flush().unwrap();
    (conn, id)
}

/// The button presses `below` got within `wait`, where (on the root).
fn presses_below(conn: &RustConnection, wait: Duration) -> Vec<(i16, i16)> {
    let until = Instant::now() + wait;
    let mut out = Vec::new();
    while Instant::now() < until {
        while let Some(ev) = conn.poll_for_event().unwrap() {
            if let Event::ButtonPress(p) = ev {
                out.push((p.root_x, p.root_y));
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    out
}

/// A coverage map of a `w` × `h` window from rectangles (x, y, w, h).
fn coverage(w: usize, h: usize, rects: &[(i64, i64, i64, i64)]) -> Vec<bool> {
    let mut m = vec![false; w * h];
    for &(rx, ry, rw, rh) in rects {
        for y in ry.max(0)..(ry + rh).min(h as i64) {
            for x in rx.max(0)..(rx + rw).min(w as i64) {
                m[y as usize * w + x as usize] = true;
            }
        }
    }
    m
}

/// The window's input shape as the X server holds it.
fn input_shape(conn: &RustConnection, w: Window) -> Vec<(i64, i64, i64, i64)> {
    conn.shape_get_rectangles(w, SK::INPUT)
        .unwrap()
        .reply()
        .unwrap()
        .rectangles
        .iter()
        .map(|r| (r.x.into(), r.y.into(), r.width.into(), r.height.into()))
        .collect()
}

/// The rectangles the page last sent (`data-input-region`), `None` for the whole window.
async fn page_region(s: &super::webdriver::Session) -> Option<Vec<(i64, i64, i64, i64)>> {
    let v = s
        .exec(
            "return document.documentElement.dataset.inputRegion ?? null",
            json!([]),
        )
        .await
        .unwrap();
    let rects: Value = serde_json::from_str(v.as_str()?).ok()?;
    Some(
        rects
            .as_array()?
            .iter()
            .map(|r| {
                let n = |k: &str| r[k].as_i64().unwrap();
                (n("x"), n("y"), n("w"), n("h"))
            })
            .collect(),
    )
}

/// Wait until the X server's input shape of `win` covers the same pixels as `want`.
fn wait_shape(conn: &RustConnection, win: Window, size: (usize, usize), want: &[bool]) {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let got = coverage(size.0, size.1, &input_shape(conn, win));
        if got == want {
            return;
        }
        assert!(
            Instant::now() < until,
            "the input shape {:?} is not the page's outline",
            input_shape(conn, win)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Wait until the X server's input shape of `win` is the page's outline as the page last sent it
/// (read again each time: a change may send a newer one meanwhile); that outline.
async fn shape_follows_page(
    s: &super::webdriver::Session,
    conn: &RustConnection,
    win: Window,
    size: (usize, usize),
) -> Vec<(i64, i64, i64, i64)> {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let page = page_region(s).await.expect("an outline");
        if coverage(size.0, size.1, &input_shape(conn, win)) == coverage(size.0, size.1, &page) {
            return page;
        }
        assert!(
            Instant::now() < until,
            "the input shape {:?} is not the page's outline {page:?}",
            input_shape(conn, win)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A point of the window at least 6 px from every covered pixel (scanning from the top-left).
fn clear_point(w: usize, h: usize, m: &[bool]) -> (i16, i16) {
    let free = |x: usize, y: usize| {
        (y.saturating_sub(6)..(y + 7).min(h))
            .all(|yy| (x.saturating_sub(6)..(x + 7).min(w)).all(|xx| !m[yy * w + xx]))
    };
    for y in (8..h).step_by(4) {
        for x in (8..w).step_by(4) {
            if free(x, y) {
                return (x as i16, y as i16);
            }
        }
    }
    panic!("the outline covers the whole window");
}

const PRESSES: &str = "window.__downs = 0; \
    document.addEventListener('pointerdown', () => { window.__downs += 1; }, true); return 0";
const DOWNS: &str = "return window.__downs";

/// The main window as the X server has it, after its page sent an outline.
struct Seen {
    win: Window,
    size: (usize, usize),
    /// Where the click on the character went (on the root).
    on: (i16, i16),
    rects: Vec<(i64, i64, i64, i64)>,
}

/// With the app showing the main character over `below`'s window: the input shape is the page's
/// outline, a click beside the character reaches the window below (the page sees no press), and
/// a click on it (the middle of the outline's largest rectangle) reaches the character.
async fn through_beside_and_on(
    s: &super::webdriver::Session,
    conn: &RustConnection,
    hands: &Hands,
) -> Seen {
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "const r = document.documentElement.dataset.inputRects; return !!r && r !== 'whole'",
        Duration::from_secs(30),
    )
    .await
    .expect("the page sent the character's outline");
    let title = s.exec("return document.title", json!([])).await.unwrap();
    let win = hands.window(title.as_str().unwrap()).unwrap();
    let geo = conn.get_geometry(win).unwrap().reply().unwrap();
    let size = (usize::from(geo.width), usize::from(geo.height));
    let (ox, oy) = hands.origin(win).unwrap();

    // The shape is the page's outline, pixel for pixel, and far less than the window.
    let rects = shape_follows_page(s, conn, win, size).await;
    let want = coverage(size.0, size.1, &rects);
    let covered = want.iter().filter(|c| **c).count();
    assert!(
        covered > 0 && covered < size.0 * size.1 * 6 / 10,
        "the outline covers {covered} of {} pixels",
        size.0 * size.1
    );

    // What one outline costs the page (a figure for docs/PERFORMANCE.md; it runs on changes only).
    let ms = s
        .exec_async(
            "const done = arguments[arguments.length - 1];
             import('./character/outline.js').then(({ createMask, markDom }) => {
               const c = document.querySelector('#character .yui-char');
               if (c.classList.contains('yui-vrm')) return done(null);
               const t0 = performance.now();
               for (let i = 0; i < 50; i++) {
                 const m = createMask(innerWidth, innerHeight); markDom(m, c); m.rects();
               }
               done((performance.now() - t0) / 50);
             }).catch((e) => done(String(e)));",
            json!([]),
        )
        .await
        .unwrap();
    eprintln!("click-through: one outline of the drawn character: {ms} ms");

    // Beside the character: the click goes to the window below, the page sees nothing.
    s.exec(PRESSES, json!([])).await.unwrap();
    let (cx, cy) = clear_point(size.0, size.1, &want);
    presses_below(conn, Duration::from_millis(100));
    hands.click(ox + cx, oy + cy).unwrap();
    let got = presses_below(conn, Duration::from_millis(600));
    assert_eq!(
        got,
        vec![(ox + cx, oy + cy)],
        "the click at ({cx}, {cy}) went below"
    );
    assert_eq!(s.exec(DOWNS, json!([])).await.unwrap(), json!(0));

    // On the character: the character gets it, the window below does not.
    let big = rects.iter().max_by_key(|r| r.2 * r.3).unwrap();
    let (px, py) = ((big.0 + big.2 / 2) as i16, (big.1 + big.3 / 2) as i16);
    hands.click(ox + px, oy + py).unwrap();
    s.wait_script("return window.__downs === 1", Duration::from_secs(3))
        .await
        .expect("the character got the click");
    assert!(presses_below(conn, Duration::from_millis(400)).is_empty());
    Seen {
        win,
        size,
        on: (ox + px, oy + py),
        rects,
    }
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_click_beside_the_character_reaches_the_window_below_and_one_on_it_the_character() {
    let dir = tempfile::tempdir().unwrap();
    // No first-run greeting: the bubble stays hidden, the outline is the character's.
    seed(dir.path(), |st| {
        settings::set(st, settings::FIRST_RUN, &json!({"done": true})).unwrap();
    });
    let (conn, _below) = open_below();
    let s = launch_showing(dir.path(), &["main"]).await;
    let hands = Hands::connect().unwrap();
    let Seen {
        win,
        size,
        on: (px, py),
        ..
    } = through_beside_and_on(&s, &conn, &hands).await;
    s.wait_script(
        "return document.getElementById('chat').hidden === false",
        Duration::from_secs(3),
    )
    .await
    .expect("a click on the character opens the chat");

    // The chat box is drawn now: the outline, and the shape, take it in.
    s.wait_script(
        "const c = document.getElementById('chat').getBoundingClientRect(); \
         const r = JSON.parse(document.documentElement.dataset.inputRegion || 'null'); \
         return !!r && r.some((q) => q.x <= c.left + 5 && q.y <= c.top + 5 && q.x + q.w >= c.right - 5)",
        Duration::from_secs(3),
    )
    .await
    .expect("the outline takes in the chat box");
    shape_follows_page(&s, &conn, win, size).await;

    // A drag on the character still moves the window.
    let (x0, y0) = hands.origin(win).unwrap();
    hands.move_to(px, py).unwrap();
    hands.button(true).unwrap();
    for step in 1..=12 {
        hands.move_to(px + step * 8, py).unwrap();
        std::thread::sleep(Duration::from_millis(30));
    }
    hands.button(false).unwrap();
    let until = Instant::now() + Duration::from_secs(3);
    while hands.origin(win).unwrap() == (x0, y0) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let (x1, _) = hands.origin(win).unwrap();
    assert!(x1 - x0 > 40, "the drag moved the window from {x0} to {x1}");

    // The page at rest again (the drag's reaction played and its outline went out), so that what
    // follows is not overtaken by an outline of its own.
    s.wait_script(
        "return ![...document.querySelector('#character .yui-char').classList] \
           .some((k) => k.startsWith('yui-m-'))",
        Duration::from_secs(5),
    )
    .await
    .expect("the drag's reaction ended");
    tokio::time::sleep(Duration::from_millis(500)).await;
    shape_follows_page(&s, &conn, win, size).await;

    // No outline: the whole window takes clicks again.
    let whole = vec![true; size.0 * size.1];
    let r = s
        .invoke("window_input_region", json!({"rects": null}))
        .await
        .unwrap();
    assert_eq!(r["ok"], json!(true), "{r}");
    wait_shape(&conn, win, size, &whole);

    // Bad rectangles are refused in plain words and change nothing.
    let r = s
        .invoke("window_input_region", json!({"rects": []}))
        .await
        .unwrap();
    assert_eq!(r["ok"], json!(false));
    assert_eq!(r["error"]["code"], json!("invalid_input"), "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at least one rectangle"),
        "{r}"
    );
    let r = s
        .invoke(
            "window_input_region",
            json!({"rects": [{"x": 5000, "y": 0, "w": 10, "h": 10}]}),
        )
        .await
        .unwrap();
    assert!(
        r["error"]["message"].as_str().unwrap().contains("outside"),
        "{r}"
    );
    wait_shape(&conn, win, size, &whole);

    // Switched off (yui.click_through): an outline sent gives the whole window.
    let store = super::read_store(dir.path());
    settings::set(
        &store,
        yui_core::display::input_region::KEY,
        &json!({"enabled": false}),
    )
    .unwrap();
    let r = s
        .invoke(
            "window_input_region",
            json!({"rects": [{"x": 0, "y": 0, "w": 10, "h": 10}]}),
        )
        .await
        .unwrap();
    assert_eq!(r["ok"], json!(true), "{r}");
    std::thread::sleep(Duration::from_millis(300));
    wait_shape(&conn, win, size, &whole);
    s.delete().await.ok();
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_vrm_character_takes_clicks_where_the_model_is_drawn_only() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fixture.vrm");
    std::fs::write(&file, Fixture::full(Version::V1).build()).unwrap();
    let data_dir = dir.path().to_path_buf();
    seed(dir.path(), |st| {
        settings::set(st, settings::FIRST_RUN, &json!({"done": true})).unwrap();
        vrm::look::set_for(st, &data_dir, "yui", &file).expect("give Yui the model");
    });
    let (conn, _below) = open_below();
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return !!document.querySelector('#character .yui-vrm')",
        Duration::from_secs(40),
    )
    .await
    .expect("the model is drawn");
    let hands = Hands::connect().unwrap();
    let seen = through_beside_and_on(&s, &conn, &hands).await;
    // The outline is the model's silhouette: cells, not the canvas's box.
    assert!(seen.rects.len() > 3, "a silhouette: {:?}", seen.rects);
    s.delete().await.ok();
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_card_picture_takes_clicks_where_it_is_opaque_only() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().to_path_buf();
    seed(dir.path(), |st| {
        settings::set(st, settings::FIRST_RUN, &json!({"done": true})).unwrap();
        // A figure on a transparent ground (looks.rs), as a PNG card without an expression pack.
        let bytes = super::looks::png_card(&super::looks::figure(false), "Seraphina");
        let card = CardImport {
            bytes: &bytes,
            open: true,
            card_dir: None,
            sprites: None,
        };
        assert!(looks::import_card(st, &data_dir, &card).unwrap().picture);
        presets::set_main(st, "seraphina").unwrap();
    });
    let (conn, _below) = open_below();
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return document.querySelector('#character .yui-char')?.dataset.sprite === 'picture'",
        Duration::from_secs(20),
    )
    .await
    .expect("the card's picture shows");
    let hands = Hands::connect().unwrap();
    let seen = through_beside_and_on(&s, &conn, &hands).await;
    assert!(
        seen.rects.len() > 3,
        "the figure's outline: {:?}",
        seen.rects
    );
    s.delete().await.ok();
}
