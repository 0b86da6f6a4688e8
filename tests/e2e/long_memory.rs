//! Settings → Memory in the real app: a character's memories (seeded as an earlier session left
//! them, and which the last turn used) are listed; pinning and forgetting through the buttons
//! reach the store; the pause switch writes `yui.memory`; another character's list is its own.
//!
//! `YUI_E2E_MEMORY_SHOT=path.png` saves a screenshot of the section (docs/img/memory.png).

use super::{launch_showing, open_settings, read_store, seed, settings_section};
use base64::Engine as _;
use serde_json::json;
use std::time::Duration;
use yui_core::longterm::{self, Kind, NewMemory};

const T: Duration = Duration::from_secs(20);

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn settings_memory_lists_pins_forgets_and_pauses() {
    let dir = tempfile::tempdir().unwrap();
    let mut ids = Vec::new();
    seed(dir.path(), |store| {
        let now = chrono::Utc::now();
        for (kind, text, pinned) in [
            (Kind::Fact, "The user's name is Aki.", true),
            (Kind::Fact, "The user's cat is named Mochi.", false),
            (Kind::Preference, "The user hates cilantro.", false),
            (Kind::Event, "The user moved to Kyoto in November.", false),
            (
                Kind::Relationship,
                "The user trusts Yui with their plans.",
                false,
            ),
            (
                Kind::Summary,
                "Aki talked with Yui about Mochi, cooking and the move to Kyoto.",
                false,
            ),
        ] {
            let m = NewMemory {
                pinned,
                ..NewMemory::new(kind, text)
            };
            ids.push(longterm::add(store, now, "yui", &m).unwrap().id);
        }
        longterm::add(
            store,
            now,
            "kai",
            &NewMemory::new(Kind::Fact, "Kai's own memory."),
        )
        .unwrap();
        // The last turn recalled the name and the cat.
        longterm::for_turn(store, now, "yui", "turn-1", "how is my cat?", None);
    });
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    open_settings(&s).await;
    settings_section(&s, "memory").await;
    s.wait_script(
        "const m = document.getElementById('memory');
         return m.dataset.memoryLoaded === 'true' && m.querySelectorAll('.memory').length === 6",
        T,
    )
    .await
    .expect("Yui's six memories are listed");
    let mut want: Vec<String> = longterm::last_used(&read_store(dir.path()), "yui")
        .unwrap()
        .memories
        .iter()
        .map(|m| m.id.to_string())
        .collect();
    want.sort();
    assert!(want.contains(&ids[0].to_string()) && want.contains(&ids[1].to_string()));
    let used = s
        .exec("return [...document.querySelectorAll('#memory .memory.used')].map(li => li.dataset.memoryId).sort()", json!([]))
        .await
        .unwrap();
    assert_eq!(used, json!(want), "the last turn's recall is marked");

    if let Some(path) = std::env::var_os("YUI_E2E_MEMORY_SHOT") {
        s.exec(
            "document.getElementById('memory').scrollIntoView(); return true",
            json!([]),
        )
        .await
        .unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let b64 = s.screenshot().await.expect("screenshot");
        let png = base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .unwrap();
        std::fs::write(&path, png).expect("write the memory screenshot");
    }

    // Pin the cat, forget cilantro.
    click(
        &s,
        &format!("#memory li[data-memory-id='{}'] .memory-pin", ids[1]),
    )
    .await;
    s.wait_script(&format!("return !!document.querySelector(\"#memory li[data-memory-id='{}']\")?.textContent.includes('pinned')", ids[1]), T)
        .await
        .expect("shown pinned");
    click(
        &s,
        &format!("#memory li[data-memory-id='{}'] .memory-forget", ids[2]),
    )
    .await;
    s.wait_script(
        "return document.querySelectorAll('#memory .memory').length === 5",
        T,
    )
    .await
    .expect("the forgotten one leaves the list");
    let store = read_store(dir.path());
    assert!(longterm::get(&store, ids[1]).unwrap().pinned);
    assert!(
        longterm::get(&store, ids[2]).is_err(),
        "forgotten in the store"
    );

    // The pause switch.
    click(&s, "#memory-pause").await;
    s.wait_script(
        "return document.getElementById('memory-pause').checked === false",
        T,
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        longterm::config::load(&read_store(dir.path())).paused,
        vec!["yui".to_string()]
    );

    // Kai's list is Kai's.
    s.exec(
        "const p = document.getElementById('memory-preset'); p.value = 'kai';
         p.dispatchEvent(new Event('change')); return true",
        json!([]),
    )
    .await
    .unwrap();
    s.wait_script(
        "const l = [...document.querySelectorAll('#memory .memory-text')].map(e => e.textContent);
         return l.length === 1 && l[0] === \"Kai's own memory.\"",
        T,
    )
    .await
    .expect("Kai's memories alone");
    let _ = s.delete().await;
}

/// Click `css` as a user does, after scrolling it into view (the list scrolls on its own, and
/// WebKitWebDriver refuses an element outside the visible part of it). The styled switch hides
/// its checkbox, so that one is clicked by script, as its label would.
async fn click(s: &super::webdriver::Session, css: &str) {
    let visible = s
        .exec(
            "const e = document.querySelector(arguments[0]); e.scrollIntoView({block: 'center'});
             const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0;",
            json!([css]),
        )
        .await
        .unwrap();
    if visible == json!(true) {
        s.click(&s.find(css).await.unwrap()).await.unwrap();
    } else {
        s.exec(
            "document.querySelector(arguments[0]).click(); return true",
            json!([css]),
        )
        .await
        .unwrap();
    }
}
