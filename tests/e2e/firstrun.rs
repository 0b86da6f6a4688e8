//! First run and errors in the bubble: the greeting with its button to Settings → Backend when
//! no model server is found (run.sh sets `YUI_DISCOVER_PORTS=none` unless told otherwise), and a
//! 2,000-character error that scrolls inside the bubble with its first line in view.

use super::{fake_backend, launch_showing, read_store, say_in_chat, seed};
use serde_json::{json, Value};
use std::time::Duration;
use yui_core::backend::{BackendChange, Transport};
use yui_testkit::sse::Reply;

/// The bubble's box, its first character's box, the window and the scroll state.
const MEASURE: &str = "const b = document.getElementById('bubble');
const r = b.getBoundingClientRect();
const first = document.createRange();
first.setStart(b.firstChild, 0); first.setEnd(b.firstChild, 1);
const f = first.getBoundingClientRect();
return {len: b.textContent.length, error: b.classList.contains('error'), hidden: b.hidden,
  top: r.top, bottom: r.bottom, left: r.left, right: r.right, w: innerWidth, h: innerHeight,
  scrollTop: b.scrollTop, scrollHeight: b.scrollHeight, clientHeight: b.clientHeight,
  scrollWidth: b.scrollWidth, clientWidth: b.clientWidth, firstTop: f.top, firstBottom: f.bottom,
  start: b.textContent.slice(0, 36)};";

fn num(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_2000_character_error_scrolls_in_the_bubble_with_its_first_line_visible() {
    // The server knows no such model: the sentence names the (very long) model the user typed.
    let (srv, _requests) = fake_backend::serve(|_| {
        Reply::Status(404, r#"{"error":{"message":"model not found"}}"#.into())
    })
    .await;
    let base = srv.base_url.clone();
    let model = format!("very-long-model-name-{}", "x".repeat(1950));
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path(), |st| {
        let change = BackendChange {
            base_url: Some(base.clone()),
            model: Some(model.clone()),
            transport: Some(Transport::ChatCompletions),
            ..Default::default()
        };
        yui_core::backend::update(st, &change).unwrap();
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    say_in_chat(&s, "#character [data-emotion]", "hello?").await;
    s.wait_script(
        "const b = document.getElementById('bubble'); return b.classList.contains('error') && !b.hidden",
        Duration::from_secs(20),
    )
    .await
    .expect("the error shows in the bubble");
    let m = s.exec(MEASURE, json!([])).await.unwrap();
    assert!(num(&m, "len") >= 2000.0, "a 2,000-character error: {m}");
    assert_eq!(m["start"], "The model server has no model \"very-", "{m}");
    // Inside the window, on every side.
    assert!(num(&m, "top") >= 0.0 && num(&m, "left") >= 0.0, "{m}");
    assert!(num(&m, "bottom") <= num(&m, "h"), "{m}");
    assert!(num(&m, "right") <= num(&m, "w"), "{m}");
    // It scrolls (vertically only) and starts at its first line.
    assert!(num(&m, "scrollHeight") > num(&m, "clientHeight"), "{m}");
    assert!(num(&m, "scrollWidth") <= num(&m, "clientWidth"), "{m}");
    assert_eq!(num(&m, "scrollTop"), 0.0, "{m}");
    assert!(
        num(&m, "firstTop") >= num(&m, "top") && num(&m, "firstBottom") <= num(&m, "bottom"),
        "the first line is in view: {m}"
    );
    // It stays: no linger timer hides an error before it is read.
    tokio::time::sleep(Duration::from_millis(9500)).await;
    let m2 = s.exec(MEASURE, json!([])).await.unwrap();
    assert_eq!(m2["hidden"], false, "{m2}");
    if let Some(path) = std::env::var_os("YUI_E2E_BUBBLE_SHOT") {
        shoot_window(&s, &path).await;
    }
    s.delete().await.ok();
}

/// Capture the screen (the real X display) and keep the main window's area.
async fn shoot_window(s: &super::webdriver::Session, path: &std::ffi::OsStr) {
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let r = s.rect().await.unwrap();
    let st = std::process::Command::new("import")
        .args(["-window", "root"])
        .arg(path)
        .status()
        .expect("run import (imagemagick)");
    assert!(st.success(), "screenshot failed");
    let (x, y, w, h) = (
        num(&r, "x") as i64,
        num(&r, "y") as i64,
        num(&r, "width") as i64,
        num(&r, "height") as i64,
    );
    let crop = format!(
        "{}x{}+{}+{}",
        w + 40,
        h + 40,
        (x - 20).max(0),
        (y - 20).max(0)
    );
    let st = std::process::Command::new("/usr/bin/convert")
        .arg(path)
        .args(["-crop", &crop, "+repage"])
        .arg(path)
        .status()
        .expect("run convert");
    assert!(st.success(), "crop failed");
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn first_run_without_a_model_server_greets_and_opens_settings_backend() {
    let dir = tempfile::tempdir().unwrap();
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return document.getElementById('stage').dataset.firstRun === 'no-backend'",
        Duration::from_secs(20),
    )
    .await
    .expect("the first-run greeting");
    let text = s
        .exec(
            "return document.getElementById('bubble').firstChild.textContent",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(
        text,
        json!(format!("Hi, I'm Yui! {}", yui_core::firstrun::INSTALL_HINT))
    );
    let button = s.find("#bubble .bubble-action").await.unwrap();
    assert_eq!(
        s.property(&button, "textContent").await.unwrap(),
        "Open Settings → Backend"
    );
    s.click(&button).await.unwrap();
    s.wait_for_label("settings", Duration::from_secs(20))
        .await
        .expect("the button opens settings");
    s.wait_script(
        "return !!document.querySelector('#backend #backend-find')",
        Duration::from_secs(20),
    )
    .await
    .expect("Settings → Backend with Find");
    s.delete().await.ok();
    let done =
        yui_core::settings::get(&read_store(dir.path()), yui_core::settings::FIRST_RUN).unwrap();
    assert_eq!(done, json!({"done": true}));

    // Once only: the next start does not greet again.
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return document.title.startsWith('YUI — ')",
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = s
        .exec(
            "return [document.getElementById('stage').dataset.firstRun ?? null, document.getElementById('bubble').hidden]",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(after, json!([null, true]));
    s.delete().await.ok();
}
