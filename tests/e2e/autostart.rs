//! Start with the desktop in the real app: Settings → General's switch writes the XDG autostart
//! entry for the running program and removes it again, and the store follows. tests/e2e/run.sh
//! points XDG_CONFIG_HOME at a folder of its own, so the user's real autostart folder is never
//! touched.

use super::{app_binary, launch_showing, open_settings, read_store};
use serde_json::json;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use yui_core::{autostart, settings};

fn entry() -> PathBuf {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .expect("XDG_CONFIG_HOME (run through tests/e2e/run.sh, which sets a folder of its own)");
    config.join("autostart").join(autostart::ENTRY_FILE)
}

async fn wait_for(what: &str, f: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn the_settings_switch_writes_and_removes_the_autostart_entry() {
    let dir = tempfile::tempdir().unwrap();
    let entry = entry();
    let _ = std::fs::remove_file(&entry);
    let s = launch_showing(dir.path(), &["main"]).await;
    open_settings(&s).await;
    super::settings_section(&s, "autostart").await;
    s.wait_script(
        "return document.getElementById('autostart')?.dataset.autostartLoaded === 'true'",
        Duration::from_secs(10),
    )
    .await
    .expect("the General section loaded");
    let checked = "return document.getElementById('switch-autostart').checked";
    assert_eq!(
        s.exec(checked, json!([])).await.unwrap(),
        false,
        "off by default"
    );
    assert!(!entry.exists());

    let box_ = s.find("#switch-autostart").await.unwrap();
    s.click(&box_).await.unwrap();
    wait_for("the autostart entry", || entry.is_file()).await;
    let text = std::fs::read_to_string(&entry).unwrap();
    let app = std::fs::canonicalize(app_binary()).unwrap();
    let exec = format!("Exec={}", autostart::exec_arg(&app.to_string_lossy()));
    assert!(text.lines().any(|l| l == exec), "{exec:?} in {text}");
    s.wait_script(
        "return document.getElementById('autostart-entry').textContent.includes('starts when you log in')",
        Duration::from_secs(5),
    )
    .await
    .expect("the section says it starts at login");
    assert_eq!(
        settings::get(&read_store(dir.path()), autostart::KEY).unwrap(),
        json!({"enabled": true})
    );

    s.click(&box_).await.unwrap();
    wait_for("the entry's removal", || !entry.exists()).await;
    assert_eq!(
        settings::get(&read_store(dir.path()), autostart::KEY).unwrap(),
        json!({"enabled": false})
    );
}
