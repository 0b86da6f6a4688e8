//! Relations in the real app: moving a slider in settings → Character → Relations changes the
//! band word shown in the quick controls' preset row, live, and reaches the store.

use super::{launch, open_settings, read_store};
use serde_json::json;
use std::time::Duration;
use yui_core::relations::{self, Target};

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn moving_a_slider_in_settings_changes_the_band_in_quick_controls() {
    let dir = tempfile::tempdir().unwrap();
    let s = launch(dir.path()).await;
    s.wait_for_labels(&["main", "pet-kai"], Duration::from_secs(30))
        .await
        .unwrap();

    // Quick controls first: kai's row shows the starting band.
    s.switch_to_label("main").await.unwrap();
    let r = s
        .invoke("window_open", json!({"which": "quick"}))
        .await
        .unwrap();
    assert_eq!(r["ok"], true, "{r}");
    s.wait_for_label("quick", Duration::from_secs(20))
        .await
        .unwrap();
    let band = "document.querySelector(\"[data-relations-band='kai']\")?.textContent";
    s.wait_script(
        &format!("return {band} === 'neutral'"),
        Duration::from_secs(10),
    )
    .await
    .expect("quick controls show kai's band");

    // Settings: the Relations section with its switch and a slider per preset and target.
    open_settings(&s).await;
    s.wait_script(
        "return document.getElementById('relations')?.dataset.relationsLoaded === 'true'",
        Duration::from_secs(10),
    )
    .await
    .expect("relations panel loaded");
    let has_switch = s
        .exec(
            "return !!document.querySelector('#relations #switch-relations')",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(has_switch, true, "the Relations switch is in the section");
    let slider = "#relations input[data-relation-preset='kai'][data-relation-target='user']";
    s.find(slider).await.expect("kai → user slider");
    // Move it the way a drag ends: value, then the input and change events.
    s.exec(
        &format!(
            "const el = document.querySelector(\"{slider}\"); el.value = '13';
             el.dispatchEvent(new Event('input', {{bubbles: true}}));
             el.dispatchEvent(new Event('change', {{bubbles: true}}));
             return true;"
        ),
        json!([]),
    )
    .await
    .unwrap();
    s.wait_script(
        "return [...document.querySelectorAll('#relations-history li')].some(li => li.textContent.includes('set by the user'))",
        Duration::from_secs(10),
    )
    .await
    .expect("the jump shows in the history with the user's reason");

    if let Some(path) = std::env::var_os("YUI_E2E_RELATIONS_SCREENSHOT") {
        s.exec(
            "document.getElementById('relations').scrollIntoView(); return true;",
            json!([]),
        )
        .await
        .unwrap();
        tokio::time::sleep(Duration::from_millis(800)).await;
        let st = std::process::Command::new("import")
            .args(["-window", "root"])
            .arg(&path)
            .status()
            .expect("run import (imagemagick)");
        assert!(st.success(), "screenshot failed");
    }

    // Back in quick controls the band changed without a reload.
    s.switch_to_label("quick").await.unwrap();
    s.wait_script(
        &format!("return {band} === 'close'"),
        Duration::from_secs(10),
    )
    .await
    .expect("quick controls' band follows the slider");
    s.delete().await.ok();
    assert_eq!(
        relations::value(&read_store(dir.path()), "kai", &Target::User).unwrap(),
        13
    );
}
