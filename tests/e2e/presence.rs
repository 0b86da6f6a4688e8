//! The characters' sleep, end to end (docs/characters.md, "Asleep"): with `yui.sleep` at one
//! minute and nobody touching the display for longer, every character window shows its sleeping
//! face and plays no ambient motion; a pointer move (XTest, as the X server counts a user's)
//! wakes them all within a couple of seconds. The X server's idle time is the display's own, so
//! this waits only when the display has seen input in the last minute.

use super::{launch_showing, seed};
use serde_json::json;
use std::time::Duration;
use x11rb::connection::Connection as _;
use x11rb::protocol::screensaver::ConnectionExt as _;
use x11rb::protocol::xtest::ConnectionExt as _;
use yui_core::settings;

fn display_idle(conn: &x11rb::rust_connection::RustConnection) -> Duration {
    let root = conn.setup().roots[0].root;
    let info = conn.screensaver_query_info(root).unwrap().reply().unwrap();
    Duration::from_millis(u64::from(info.ms_since_user_input))
}

/// The character's sleep, emotion, motion and frame, in the current window.
const LOOK: &str = "const c = document.querySelector('#character .yui-char');
  return JSON.stringify({asleep: c?.dataset.asleep ?? null, emotion: c?.dataset.emotion, motion: c?.dataset.motion, frame: c?.dataset.frame});";

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn characters_fall_asleep_when_the_user_is_away_and_wake_at_the_next_input() {
    let (conn, _) = x11rb::connect(None).expect("the e2e display");
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path(), |store| {
        settings::set(store, settings::SLEEP, &json!({"after_minutes": 1})).unwrap();
        // No first-run greeting: a character speaking is awake.
        settings::set(store, settings::FIRST_RUN, &json!({"done": true})).unwrap();
    });
    // The threshold is a minute of no input on this display.
    let idle = display_idle(&conn);
    if idle < Duration::from_secs(61) {
        tokio::time::sleep(Duration::from_secs(61) - idle).await;
    }
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    for label in ["main", "pet-kai"] {
        s.switch_to_label(label).await.unwrap();
        s.wait_script(
            "return document.querySelector('#character .yui-char')?.dataset.asleep === 'true'",
            Duration::from_secs(30),
        )
        .await
        .unwrap_or_else(|e| panic!("{label} did not fall asleep: {e}"));
    }
    // Asleep for a while: the sleeping face, and no motion or frame in 4 s (awake, the two
    // share the ambient budget: a blink every 7–16 s each, so this alone proves little; the
    // face and data-asleep are the check).
    s.switch_to_label("main").await.unwrap();
    let seen = s
        .exec_async(
            "const done = arguments[arguments.length - 1]; const c = document.querySelector('#character .yui-char');
             const seen = []; const mo = new MutationObserver(() => seen.push(c.dataset.motion + '/' + c.dataset.frame));
             mo.observe(c, {attributes: true, attributeFilter: ['data-motion', 'data-frame']});
             setTimeout(() => { mo.disconnect(); done(JSON.stringify({seen, emotion: c.dataset.emotion})); }, 4000);",
            json!([]),
        )
        .await
        .unwrap();
    let seen: serde_json::Value = serde_json::from_str(seen.as_str().unwrap()).unwrap();
    assert_eq!(seen["emotion"], "sleepy", "{seen}");
    assert_eq!(seen["seen"], json!([]), "something played asleep: {seen}");

    // The user moves the pointer: everyone wakes.
    let root = conn.setup().roots[0].root;
    conn.xtest_fake_input(6, 0, x11rb::CURRENT_TIME, root, 640, 400, 0)
        .unwrap();
    conn.flush().unwrap();
    for label in ["main", "pet-kai"] {
        s.switch_to_label(label).await.unwrap();
        s.wait_script(
            "return document.querySelector('#character .yui-char')?.dataset.asleep === 'false'",
            Duration::from_secs(5),
        )
        .await
        .unwrap_or_else(|e| panic!("{label} did not wake after a pointer move: {e}"));
        let look: serde_json::Value =
            serde_json::from_str(s.exec(LOOK, json!([])).await.unwrap().as_str().unwrap()).unwrap();
        assert_ne!(
            look["emotion"], "sleepy",
            "{label} woke with the sleeping face: {look}"
        );
    }
    s.delete().await.ok();
}

/// A character window that the window manager iconifies is told so by the stage
/// (`yui://visibility` `{hidden: true}`, to that window only) and stops its ambient motions;
/// shown again, it is told `{hidden: false}`.
#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn an_iconified_window_is_told_it_is_hidden_and_shown_again() {
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path(), |store| {
        settings::set(store, settings::FIRST_RUN, &json!({"done": true})).unwrap();
    });
    let (s, pid) = super::procstat::launch(&super::app_binary(), dir.path()).await;
    const HIDDEN: &str = "return document.getElementById('stage').dataset.hidden ?? null";
    assert_eq!(s.exec(HIDDEN, json!([])).await.unwrap(), json!(null));
    let asked = yui_x11::minimize::set_iconic(pid, true).expect("the window manager asked");
    assert!(asked >= 1, "no window of the app found");
    s.wait_script(
        "return document.getElementById('stage').dataset.hidden === 'true'",
        Duration::from_secs(10),
    )
    .await
    .expect("the iconified window was told it is hidden");
    yui_x11::minimize::set_iconic(pid, false).unwrap();
    s.wait_script(
        "return document.getElementById('stage').dataset.hidden === 'false'",
        Duration::from_secs(10),
    )
    .await
    .expect("the window shown again was told so");
    s.delete().await.ok();
}
