//! Character and quick-controls windows in the real app: a vocabulary saved in settings reaches
//! every character window with no restart, and quick controls behave as a popover (top right,
//! hidden once they lose focus, back on the next open).

use super::{launch_showing, open_quick, open_settings};
use serde_json::json;
use std::time::Duration;
use yui_core::vocab::Vocab;

/// The character window's motion ids as it took them from the vocabulary (space-separated).
const MOTIONS: &str = "document.getElementById('stage')?.dataset.vocabMotions";

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_vocabulary_saved_in_settings_reaches_every_character_window_live() {
    let dir = tempfile::tempdir().unwrap();
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    // At mount each character window reads the vocabulary (the defaults: wave among them).
    for label in ["main", "pet-kai"] {
        s.switch_to_label(label).await.unwrap();
        s.wait_script(
            &format!("return ({MOTIONS} ?? '').split(' ').includes('wave')"),
            Duration::from_secs(20),
        )
        .await
        .unwrap_or_else(|e| panic!("{label} read the vocabulary at mount: {e}"));
    }

    open_settings(&s).await;
    let mut v = Vocab::default();
    v.motions.retain(|m| m.id != "wave");
    v.motion_selection.retain(|id| id != "wave");
    let r = s.invoke("vocab_set", json!({ "vocab": v })).await.unwrap();
    assert_eq!(r["ok"], true, "{r}");

    let want = v
        .motions
        .iter()
        .map(|m| m.id.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    for label in ["main", "pet-kai"] {
        s.switch_to_label(label).await.unwrap();
        s.wait_script(
            &format!("return {MOTIONS} === '{want}'"),
            Duration::from_secs(10),
        )
        .await
        .unwrap_or_else(|e| panic!("{label} took the new vocabulary live: {e}"));
    }
    s.delete().await.ok();
}

/// `Map State` of the X window titled `title` (xwininfo, x11-utils): `IsViewable` when shown.
fn map_state(title: &str) -> String {
    let out = std::process::Command::new("xwininfo")
        .args(["-name", title])
        .output()
        .expect("run xwininfo (x11-utils)");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Map State:")
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| format!("no window {title:?}"))
}

async fn wait_map_state(title: &str, want: &str) {
    let start = std::time::Instant::now();
    loop {
        let got = map_state(title);
        if got == want {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{title}: map state {got}, want {want}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn quick_controls_open_top_right_and_hide_when_they_lose_focus() {
    const QUICK: &str = "YUI quick controls";
    let dir = tempfile::tempdir().unwrap();
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    open_quick(&s).await;
    wait_map_state(QUICK, "IsViewable").await;
    // Top right of the 1280x800 screen (run.sh), a small margin from the edges.
    let r = s.rect().await.unwrap();
    let (x, y, w) = (
        r["x"].as_i64().unwrap(),
        r["y"].as_i64().unwrap(),
        r["width"].as_i64().unwrap(),
    );
    assert!((1280 - (x + w)).abs() <= 24 && (0..=24).contains(&y), "{r}");

    // Focus goes to the settings window: the popover hides.
    open_settings(&s).await;
    wait_map_state(QUICK, "IsUnMapped").await;

    // The next open (the tray item calls the same code) shows it again, still live.
    open_quick(&s).await;
    wait_map_state(QUICK, "IsViewable").await;
    s.wait_script(
        "return document.querySelector(\"li[data-preset-id='kai'] button.toggle-open\")?.textContent === 'Close'",
        Duration::from_secs(10),
    )
    .await
    .expect("preset rows shown");
    s.delete().await.ok();
}
