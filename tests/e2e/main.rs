//! End-to-end tests of the real app, driven through `tauri-driver` + WebKitWebDriver (W3C
//! WebDriver) under Xvfb. Run them with `tests/e2e/run.sh`, which starts the display, a window
//! manager and tauri-driver, builds the app and runs `cargo test --test e2e -- --ignored`.
//!
//! Each test starts the app on its own temporary data dir (`--data-dir`), seeded through
//! `yui-core` before launch, and checks the store after the UI acted.

mod webdriver;

use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;
use webdriver::{Driver, Session};
use yui_core::{settings, Store};

const NEEDS: &str = "needs Xvfb + tauri-driver: run tests/e2e/run.sh";

fn app_binary() -> PathBuf {
    // Cargo builds the package's binary for its integration tests and says where it is.
    std::env::var_os("YUI_APP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_yui-app")))
}

async fn launch(data_dir: &Path) -> Session {
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
    let _ = NEEDS;
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
        // The character is drawn (the built-in SVG/CSS character, or its placeholder).
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

    let s = launch(dir.path()).await;
    s.wait_for_labels(&["main"], Duration::from_secs(30))
        .await
        .unwrap();
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
    let s = launch(dir.path()).await;
    s.wait_for_labels(&["main"], Duration::from_secs(30))
        .await
        .unwrap();
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
    let s = launch(dir.path()).await;
    s.wait_for_labels(&["pet-kai"], Duration::from_secs(30))
        .await
        .unwrap();
    s.switch_to_label("pet-kai").await.unwrap();

    let refused = s
        .invoke(
            "settings_set",
            json!({"key": "yui.browser", "value": {"enabled": true}}),
        )
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
    let allowed = s.invoke("switches_get", json!({})).await.unwrap();
    assert_eq!(allowed["ok"], true, "{allowed}");
    assert_eq!(allowed["value"]["browser"], false);

    s.delete().await.ok();
    assert!(!settings::switch_on(&read_store(dir.path()), settings::BROWSER).unwrap());
}
