//! The global push-to-talk shortcut on the host's X connection, on a real X server (Xvfb): the
//! key grabbed, a hold (XTest stands in for the user) read by the event thread as one press and
//! one release, a combination another program holds refused in words, and the key given back.

mod support;

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;
use support::*;
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{ConnectionExt as _, GrabMode, ModMask};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;
use yui_x11::X11Desktop;

/// The first keycode that makes `keysym`.
fn keycode(conn: &RustConnection, keysym: u32) -> u8 {
    let (min, max) = (conn.setup().min_keycode, conn.setup().max_keycode);
    let map = conn
        .get_keyboard_mapping(min, max - min + 1)
        .unwrap()
        .reply()
        .unwrap();
    let per = usize::from(map.keysyms_per_keycode);
    let i = map
        .keysyms
        .chunks(per)
        .position(|s| s.contains(&keysym))
        .expect("a key for it");
    min + i as u8
}

/// Press (`true`) or release each key, in order, as the user would.
fn keys(conn: &RustConnection, codes: &[u8], down: bool) {
    let root = conn.setup().roots[0].root;
    // KeyPress (2), KeyRelease (3).
    let kind = if down { 2 } else { 3 };
    for &c in codes {
        conn.xtest_fake_input(kind, c, x11rb::CURRENT_TIME, root, 0, 0, 0)
            .unwrap();
    }
    x11rb::wrapper::ConnectionExt::sync(conn).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x11_shortcut_is_one_press_and_one_release_and_is_given_back() {
    let _g = lock().await;
    let s = Session::xvfb();
    let conn = s.conn();
    let host = X11Desktop::connect(Some(&s.display), None).unwrap();
    let (tx, rx) = mpsc::channel();
    let on: yui_x11::hotkey::OnKey = Arc::new(move |down| {
        let _ = tx.send(down);
    });
    assert_eq!(
        host.take_shortcut("Ctrl+Nope", on.clone())
            .unwrap_err()
            .to_string(),
        "\"Ctrl+Nope\" is not a key combination such as Ctrl+Alt+Space"
    );
    host.take_shortcut("Ctrl+Alt+Space", on.clone()).unwrap();
    assert!(host.has_shortcut());
    let (ctrl, alt, space) = (
        keycode(&conn, 0xffe3),
        keycode(&conn, 0xffe9),
        keycode(&conn, 0x20),
    );
    // Held past the server's auto-repeat delay: still one press.
    keys(&conn, &[ctrl, alt, space], true);
    std::thread::sleep(Duration::from_millis(900));
    keys(&conn, &[space, alt, ctrl], false);
    let wait = Duration::from_secs(5);
    assert_eq!(rx.recv_timeout(wait), Ok(true));
    assert_eq!(rx.recv_timeout(wait), Ok(false));
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
    // Space alone is not the shortcut.
    keys(&conn, &[space], true);
    keys(&conn, &[space], false);
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());

    // Another program holds Ctrl+Alt+F5.
    let f5 = keycode(&conn, 0xffc2);
    let root = conn.setup().roots[0].root;
    let mods = ModMask::CONTROL | ModMask::M1;
    conn.grab_key(false, root, mods, f5, GrabMode::ASYNC, GrabMode::ASYNC)
        .unwrap()
        .check()
        .unwrap();
    assert_eq!(
        host.take_shortcut("Ctrl+Alt+F5", on.clone())
            .unwrap_err()
            .to_string(),
        "another program holds Ctrl+Alt+F5"
    );
    assert!(!host.has_shortcut(), "the earlier one was given back");

    // Given back: another program can take Ctrl+Alt+Space, and a hold reaches YUI no more.
    host.take_shortcut("Ctrl+Alt+Space", on).unwrap();
    host.give_back_shortcut();
    conn.grab_key(false, root, mods, space, GrabMode::ASYNC, GrabMode::ASYNC)
        .unwrap()
        .check()
        .expect("free after it was given back");
    keys(&conn, &[ctrl, alt, space], true);
    keys(&conn, &[space, alt, ctrl], false);
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
}
