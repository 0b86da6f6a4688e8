//! The user's scale of the characters' size (`yui.character.scale`, docs/vrm.md "Size"), end to
//! end: a scale kept from an earlier session gives the main and the pet window their scaled
//! sizes and draws the character at its scaled size; the slider in Settings → Characters
//! rebuilds the windows at the new size and keeps it. The real app under Xvfb.

use super::webdriver::Session;
use super::{launch_showing, open_settings, read_store, seed, settings_section};
use serde_json::json;
use std::time::Duration;
use yui_core::{layout, settings};

const T: Duration = Duration::from_secs(40);

const PROBE: &str = "const c = document.querySelector('#character .yui-char');
    return c ? [window.innerWidth, window.innerHeight, c.getBoundingClientRect().height] : null;";

/// Window `label`'s inner size and its drawn character's height, if it is there and drawn.
async fn probe(s: &Session, label: &str) -> Option<[f64; 3]> {
    s.switch_to_label(label).await.ok()?;
    let got = s.exec(PROBE, json!([])).await.ok()?;
    let n = |i: usize| got.get(i).and_then(serde_json::Value::as_f64);
    Some([n(0)?, n(1)?, n(2)?])
}

/// [`probe`] until `want` (±1 px) or `T`; the last sizes seen.
async fn sizes(s: &Session, label: &str, want: [f64; 3]) -> [f64; 3] {
    let until = std::time::Instant::now() + T;
    let mut last = [0.0; 3];
    while std::time::Instant::now() < until {
        if let Some(got) = probe(s, label).await {
            last = got;
            if near(got, want) {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    last
}

fn near(got: [f64; 3], want: [f64; 3]) -> bool {
    got.iter().zip(want).all(|(g, w)| (g - w).abs() <= 1.0)
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn the_characters_windows_take_the_users_size_kept_and_changed_in_settings() {
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path(), |st| {
        settings::set(st, settings::FIRST_RUN, &json!({"done": true})).unwrap();
        settings::set(st, layout::SCALE_KEY, &json!(1.5)).unwrap();
    });
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    // 150 %: main 220×300 → 330×450 drawing 300 px; pet 170×232 → 255×348 drawing 225 px.
    let main = sizes(&s, "main", [330.0, 450.0, 300.0]).await;
    let pet = sizes(&s, "pet-kai", [255.0, 348.0, 225.0]).await;
    eprintln!("at 150 %: main {main:?}, pet {pet:?}");
    assert!(near(main, [330.0, 450.0, 300.0]), "main at 150 %: {main:?}");
    assert!(near(pet, [255.0, 348.0, 225.0]), "pet at 150 %: {pet:?}");

    // The user sets 120 % with the slider (openbox keeps windows at least 200 px wide, so
    // nothing smaller than the usual size could show the pet's width).
    open_settings(&s).await;
    settings_section(&s, "character").await;
    s.wait_script(
        "return document.querySelector('.character-size')?.dataset.scale === '1.5'",
        T,
    )
    .await
    .expect("the slider shows the kept size");
    s.exec(
        "const r = document.getElementById('character-scale');
         r.value = '120'; r.dispatchEvent(new Event('input')); r.dispatchEvent(new Event('change'));",
        json!([]),
    )
    .await
    .unwrap();
    s.wait_script(
        "return document.querySelector('.character-size')?.dataset.scale === '1.2'",
        T,
    )
    .await
    .expect("the core took 120 %");
    // The windows are built again at the new size.
    let main = sizes(&s, "main", [264.0, 360.0, 240.0]).await;
    let pet = sizes(&s, "pet-kai", [204.0, 278.0, 180.0]).await;
    eprintln!("at 120 %: main {main:?}, pet {pet:?}");
    assert!(near(main, [264.0, 360.0, 240.0]), "main at 120 %: {main:?}");
    assert!(near(pet, [204.0, 278.0, 180.0]), "pet at 120 %: {pet:?}");
    assert_eq!(
        layout::scale(&read_store(dir.path())),
        1.2,
        "kept for the next start"
    );
}
