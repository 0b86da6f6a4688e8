//! End-to-end tests of the real app, driven through `tauri-driver` + WebKitWebDriver (W3C
//! WebDriver) under Xvfb. Run them with `tests/e2e/run.sh`, which starts the display, a window
//! manager and tauri-driver, builds the app and runs `cargo test --test e2e -- --ignored`.
//!
//! Each test starts the app on its own temporary data dir (`--data-dir`), seeded through
//! `yui-core` before launch, and checks the store after the UI acted.

mod autostart;
mod avatar;
mod browser;
mod character_size;
mod characters;
mod click_through;
mod conversation;
mod crash;
mod cue_latency;
mod expression;
mod fake_backend;
mod firstrun;
mod ipc_surface;
mod long_memory;
mod looks;
mod mcp;
mod memory;
mod presence;
#[allow(dead_code)]
mod procstat;
mod realtime;
mod realtime_voice;
mod relations;
mod reminders;
mod single_instance;
mod soak;
mod typing;
mod voice;
mod voice_listen;
mod vrm;
mod vrm_motion;
mod webdriver;
mod windows;
mod xinput;

use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;
use webdriver::{Driver, Session};
use yui_core::backend::Transport;
use yui_core::{settings, Store};
use yui_testkit::sse::{self, ScriptServer, Seen};

fn app_binary() -> PathBuf {
    // Cargo builds the package's binary for its integration tests and says where it is.
    std::env::var_os("YUI_APP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_yui-app")))
}

/// The settings a test's launch starts from unless the test set them: no falling asleep (nobody
/// types on the e2e display, so past `yui.sleep`'s 10 minutes into the suite the characters
/// would fall asleep mid-test; presence.rs sets it) and no time-of-day rules
/// ([`procstat::no_time_of_day`]). browser.rs, which starts the app its own way, calls it too.
fn calm_defaults(data_dir: &Path) {
    procstat::no_time_of_day(data_dir);
    if let Ok(store) = Store::open(data_dir.join(yui_core::paths::DB_FILE)) {
        if procstat::unset(&store, settings::SLEEP) {
            settings::set(&store, settings::SLEEP, &json!({"after_minutes": 0})).unwrap();
        }
    }
}

async fn launch(data_dir: &Path) -> Session {
    calm_defaults(data_dir);
    let driver = Driver::from_env();
    let app = app_binary();
    assert!(
        app.exists(),
        "build the app first: {} is missing",
        app.display()
    );
    driver
        .new_session(&app, &["--data-dir".into(), data_dir.display().to_string()])
        .await
        .expect("new WebDriver session (is tauri-driver running?)")
}

/// Launch the app and wait until the windows `labels` are all there.
async fn launch_showing(data_dir: &Path, labels: &[&str]) -> Session {
    let s = launch(data_dir).await;
    s.wait_for_labels(labels, Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("the app's windows: {e}"));
    s
}

/// Seed the store before the app starts, as a user's earlier session would have left it.
fn seed(dir: &Path, f: impl FnOnce(&Store)) {
    let store = Store::open(dir.join(yui_core::paths::DB_FILE)).expect("open store");
    f(&store);
}

fn read_store(dir: &Path) -> Store {
    Store::open(dir.join(yui_core::paths::DB_FILE)).expect("open store")
}

/// Open the settings window from the main window (its right-click menu calls the same command)
/// and switch to it once its switches are loaded.
async fn open_settings(s: &Session) {
    s.switch_to_label("main").await.expect("main window");
    let r = s
        .invoke("window_open", json!({"which": "settings"}))
        .await
        .expect("script ran");
    assert!(
        r["ok"].as_bool().unwrap_or(false),
        "window_open failed: {r}"
    );
    s.wait_for_label("settings", Duration::from_secs(20))
        .await
        .expect("settings window appears");
    s.wait_script(
        "return document.body && document.body.dataset.switchesLoaded === 'true'",
        Duration::from_secs(20),
    )
    .await
    .expect("settings loaded its switches");
}

/// Show settings section `id` as a user does: its entry in the section list (ui/js/settings-nav.js
/// shows one section at a time; WebDriver clicks only what is shown).
async fn settings_section(s: &Session, id: &str) {
    let entry = s
        .find(&format!("#settings-nav a[data-section=\"{id}\"]"))
        .await
        .unwrap_or_else(|e| panic!("settings has no {id} entry: {e}"));
    s.click(&entry).await.expect("click the section's entry");
    s.wait_script(
        &format!("return document.body.dataset.section === '{id}'"),
        Duration::from_secs(5),
    )
    .await
    .unwrap_or_else(|e| panic!("the {id} section shows: {e}"));
}

/// Open the quick controls from the main window.
async fn open_quick(s: &Session) {
    s.switch_to_label("main").await.unwrap();
    let r = s
        .invoke("window_open", json!({"which": "quick"}))
        .await
        .unwrap();
    assert_eq!(r["ok"], true, "{r}");
    s.wait_for_label("quick", Duration::from_secs(20))
        .await
        .unwrap();
}

/// In the current (character) window: wait until `drawn` matches (the character is drawn), click
/// the character to open the chat input, type `text` and press Enter.
async fn say_in_chat(s: &Session, drawn: &str, text: &str) {
    s.wait_script(
        &format!("return !!document.querySelector(\"{drawn}\")"),
        Duration::from_secs(20),
    )
    .await
    .expect("character drawn");
    s.click(&s.find("#character").await.unwrap()).await.unwrap();
    s.wait_script(
        "return !document.getElementById('chat').hidden",
        Duration::from_secs(5),
    )
    .await
    .expect("chat opens on click");
    let input = s.find("#chat-input").await.unwrap();
    s.send_keys(&input, &format!("{text}\u{E007}"))
        .await
        .unwrap();
}

async fn checked(s: &Session, css: &str) -> bool {
    let el = s.find(css).await.expect(css);
    s.property(&el, "checked")
        .await
        .expect("checked")
        .as_bool()
        .expect("checked is a bool")
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn main_and_pet_windows_exist_with_the_character() {
    let dir = tempfile::tempdir().unwrap();
    let s = launch(dir.path()).await;
    let labels = s
        .wait_for_labels(&["main", "pet-kai"], Duration::from_secs(30))
        .await
        .expect("main and pet-kai windows");
    assert!(labels.contains(&"main".to_string()), "{labels:?}");
    assert!(labels.contains(&"pet-kai".to_string()), "{labels:?}");

    for (label, name) in [("main", "Yui"), ("pet-kai", "Kai")] {
        s.switch_to_label(label).await.unwrap();
        s.wait_script(
            &format!("return document.title === 'YUI — {name}'"),
            Duration::from_secs(20),
        )
        .await
        .unwrap_or_else(|e| panic!("{label} shows {name}: {e}"));
        // The character is drawn (the built-in SVG/CSS character, or its sprites).
        let drawn = s
            .exec(
                "return document.getElementById('character').children.length",
                json!([]),
            )
            .await
            .unwrap();
        assert!(
            drawn.as_u64().unwrap_or(0) > 0,
            "{label}: no character drawn"
        );
    }
    s.delete().await.ok();
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn settings_shows_stored_switches_and_a_toggle_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path(), |st| {
        settings::set(st, settings::SCREEN, &json!({"enabled": true})).unwrap();
        settings::set(st, settings::RELATIONS, &json!({"enabled": false})).unwrap();
    });

    let s = launch_showing(dir.path(), &["main"]).await;
    open_settings(&s).await;
    assert!(checked(&s, "#switch-screen").await, "screen seeded on");
    assert!(
        !checked(&s, "#switch-relations").await,
        "relations seeded off"
    );
    assert!(
        !checked(&s, "#switch-browser").await,
        "browser off by default"
    );

    settings_section(&s, "character").await;
    let browser = s.find("#switch-browser").await.unwrap();
    s.click(&browser).await.unwrap();
    s.wait_script(
        "return document.getElementById('switch-browser').checked === true && !document.getElementById('switch-browser').disabled",
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    assert!(
        settings::switch_on(&read_store(dir.path()), settings::BROWSER).unwrap(),
        "the click reached the store"
    );
    s.delete().await.ok();

    // Restart: the same data dir, a new app process.
    let s = launch_showing(dir.path(), &["main"]).await;
    open_settings(&s).await;
    assert!(
        checked(&s, "#switch-browser").await,
        "browser still on after restart"
    );
    assert!(checked(&s, "#switch-screen").await);
    assert!(!checked(&s, "#switch-relations").await);
    s.delete().await.ok();
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn pet_window_cannot_invoke_a_settings_only_command() {
    let dir = tempfile::tempdir().unwrap();
    let s = launch_showing(dir.path(), &["pet-kai"]).await;
    s.switch_to_label("pet-kai").await.unwrap();

    let refused = s
        .invoke("switch_set", json!({"key": "yui.browser", "enabled": true}))
        .await
        .unwrap();
    assert_eq!(refused["ok"], false, "pet must be refused: {refused}");
    let msg = refused["error"].to_string();
    assert!(msg.contains("not allowed"), "refusal is the ACL's: {msg}");

    let refused = s
        .invoke("backend_set_key", json!({"key": "sk-from-a-pet"}))
        .await
        .unwrap();
    assert_eq!(refused["ok"], false, "{refused}");

    // The pet's IPC works for what it is granted: the refusal above is the capability.
    let allowed = s.invoke("window_context", json!({})).await.unwrap();
    assert_eq!(allowed["ok"], true, "{allowed}");
    assert_eq!(allowed["value"]["label"], "pet-kai");

    s.delete().await.ok();
    assert!(!settings::switch_on(&read_store(dir.path()), settings::BROWSER).unwrap());
}

/// A fake backend that answers every request with a Chat Completions stream (speech, a
/// generate_express call, more speech) and hands back the request bodies.
async fn greeting_backend() -> (ScriptServer, tokio::sync::mpsc::UnboundedReceiver<Seen>) {
    fake_backend::serve(|_| {
        sse::chat_stream(
            &[
                json!({"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello! "},"finish_reason":null}]}),
                json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"generate_express","arguments":"{\"emotion_id\":\"happy\"}"}}]},"finish_reason":null}]}),
                json!({"choices":[{"index":0,"delta":{"content":"Nice to see you."},"finish_reason":null}]}),
                json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
            ],
        )
    })
    .await
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn chat_in_the_main_window_streams_the_reply_into_the_bubble_and_plays_the_cue() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, mut requests) = greeting_backend().await;
    let base_url = srv.base_url.clone();
    fake_backend::seed_backend(dir.path(), &base_url, Transport::ChatCompletions);
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    s.switch_to_label("main").await.unwrap();
    say_in_chat(&s, "#character [data-emotion]", "Hi Yui").await;

    s.wait_script(
        "return document.getElementById('bubble').textContent === 'Hello! Nice to see you.' && !document.getElementById('bubble').hidden",
        Duration::from_secs(20),
    )
    .await
    .expect("the reply streams into the bubble");
    s.wait_script(
        "return document.querySelector('#character [data-emotion]').dataset.emotion === 'happy'",
        Duration::from_secs(5),
    )
    .await
    .expect("the generate_express cue reached the character");

    let body: serde_json::Value = requests.recv().await.expect("one request").body;
    assert_eq!(body["model"], "fake-model");
    assert_eq!(body["stream"], true);
    let text = body["messages"].to_string();
    assert!(
        text.contains("Hi Yui"),
        "the user's message went out: {text}"
    );
    assert!(
        text.contains("You are Yui"),
        "the preset's persona went out: {text}"
    );

    if let Some(path) = std::env::var_os("YUI_E2E_SCREENSHOT") {
        // Let the compositor catch up with the last frames before capturing the screen.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let st = std::process::Command::new("import")
            .args(["-window", "root"])
            .arg(&path)
            .status()
            .expect("run import (imagemagick)");
        assert!(st.success(), "screenshot failed");
    }
    s.delete().await.ok();
    // The exchange was kept: memory survives a restart.
    let stored = yui_core::transcript::recent(&read_store(dir.path()), "yui", 10).unwrap();
    let said: Vec<_> = stored.iter().map(|e| e.text.as_str()).collect();
    assert!(said.contains(&"Hi Yui"), "{said:?}");
    assert!(said.contains(&"Hello! Nice to see you."), "{said:?}");
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn quick_controls_close_and_open_a_pet_and_open_presets_are_restored() {
    let dir = tempfile::tempdir().unwrap();
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    open_quick(&s).await;
    let toggle = "li[data-preset-id='kai'] button.toggle-open";
    s.wait_script(
        &format!("return document.querySelector(\"{toggle}\")?.textContent === 'Close'"),
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    s.click(&s.find(toggle).await.unwrap()).await.unwrap();

    // The pet window goes away and the store says kai is closed.
    let start = std::time::Instant::now();
    loop {
        let labels = s.label_names().await.unwrap();
        if !labels.iter().any(|l| l == "pet-kai") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "pet-kai still open: {labels:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let kai = yui_core::presets::get(&read_store(dir.path()), "kai").unwrap();
    assert!(!kai.is_open);
    s.delete().await.ok();

    // Restart: kai stays closed.
    let s = launch_showing(dir.path(), &["main"]).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let labels = s.label_names().await.unwrap();
    assert!(!labels.iter().any(|l| l == "pet-kai"), "{labels:?}");

    // Open it again from quick controls: its window comes back.
    open_quick(&s).await;
    s.wait_script(
        &format!("return document.querySelector(\"{toggle}\")?.textContent === 'Open'"),
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    s.click(&s.find(toggle).await.unwrap()).await.unwrap();
    s.wait_for_labels(&["pet-kai"], Duration::from_secs(20))
        .await
        .expect("pet-kai reopened");
    assert!(
        yui_core::presets::get(&read_store(dir.path()), "kai")
            .unwrap()
            .is_open
    );
    s.delete().await.ok();
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_moved_pet_window_comes_back_where_it_was_left() {
    let dir = tempfile::tempdir().unwrap();
    let s = launch(dir.path()).await;
    s.wait_for_label("pet-kai", Duration::from_secs(30))
        .await
        .unwrap();
    s.set_position(123, 234).await.expect("move the pet window");
    // Positions are written once the window rests (debounced).
    let start = std::time::Instant::now();
    loop {
        let kai = yui_core::presets::get(&read_store(dir.path()), "kai").unwrap();
        if kai.pos_x == Some(123) && kai.pos_y == Some(234) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "position not saved: {:?},{:?}",
            kai.pos_x,
            kai.pos_y
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    s.delete().await.ok();

    let s = launch(dir.path()).await;
    s.wait_for_label("pet-kai", Duration::from_secs(30))
        .await
        .unwrap();
    let rect = s.rect().await.unwrap();
    assert_eq!(
        (rect["x"].as_i64(), rect["y"].as_i64()),
        (Some(123), Some(234)),
        "{rect}"
    );
    s.delete().await.ok();
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn the_csp_blocks_eval_and_remote_connections() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, _requests) = greeting_backend().await;
    let base_url = srv.base_url.clone();
    let s = launch(dir.path()).await;
    s.wait_for_label("main", Duration::from_secs(30))
        .await
        .unwrap();
    let r = s
        .exec_async(
            "const done = arguments[arguments.length - 1];
             let evalResult;
             try { evalResult = eval('1 + 1') === 2 ? 'allowed' : 'odd'; } catch (e) { evalResult = 'blocked'; }
             fetch(arguments[0] + '/models')
               .then(() => done({evalResult, fetch: 'allowed'}))
               .catch(() => done({evalResult, fetch: 'blocked'}));",
            json!([base_url]),
        )
        .await
        .unwrap();
    assert_eq!(r["evalResult"], "blocked", "{r}");
    assert_eq!(r["fetch"], "blocked", "{r}");
    s.delete().await.ok();
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_damaged_database_is_reported_in_a_window_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join(yui_core::paths::DB_FILE);
    let junk: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&db, &junk).unwrap();

    let s = launch(dir.path()).await;
    s.wait_for_label("error", Duration::from_secs(30))
        .await
        .expect("the error window");
    s.wait_script(
        "return document.getElementById('message').textContent.includes('is damaged or not a YUI database')",
        Duration::from_secs(10),
    )
    .await
    .expect("the message names the problem");
    let text = s
        .exec(
            "return document.getElementById('message').textContent",
            json!([]),
        )
        .await
        .unwrap();
    assert!(
        text.as_str()
            .unwrap_or("")
            .contains(&dir.path().display().to_string()),
        "{text}"
    );
    s.delete().await.ok();
    assert_eq!(
        std::fs::read(&db).unwrap(),
        junk,
        "the file was left untouched"
    );
}
