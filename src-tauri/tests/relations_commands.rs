//! Relations commands on the mock runtime with the real capabilities: the settings window lists
//! and sets values (the slider) and a change emits `yui://relations-changed` with the fresh bands;
//! the quick controls read the bands but cannot set; character windows get neither.

use crate::support;

use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use support::{assert_refused, harness, invoke, window};
use tauri::Listener;
use yui_core::relations::{self, Target};

#[test]
fn slider_in_settings_sets_the_value_and_emits_the_new_bands() {
    let h = harness();
    let seen = Arc::new(Mutex::new(Vec::<Value>::new()));
    let sink = seen.clone();
    h.app.listen_any("yui://relations-changed", move |ev| {
        if let Ok(v) = serde_json::from_str(ev.payload()) {
            sink.lock().expect("lock").push(v);
        }
    });
    let settings = window(&h, "settings");
    let out = invoke(
        &settings,
        "relation_set",
        json!({"preset": "kai", "target": {"kind": "user"}, "value": 13}),
    )
    .expect("relation_set");
    assert_eq!(out["band"], json!("close"));
    assert_eq!(
        relations::value(&h.store, "kai", &Target::User).expect("value"),
        13
    );
    // The stage forwards the core's change event from its own task.
    let want = json!({"enabled": true, "bands": {"kai": "close", "yui": "neutral"}});
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while seen.lock().expect("lock").last() != Some(&want) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(seen.lock().expect("lock").last(), Some(&want));
    let list = invoke(&settings, "relations_list", json!({})).expect("relations_list");
    assert_eq!(list["log"][0]["reason"], json!("set by the user"));
    let err = invoke(
        &settings,
        "relation_set",
        json!({"preset": "kai", "target": {"kind": "user"}, "value": 40}),
    )
    .expect_err("out of range");
    assert_eq!(err["code"], json!("invalid_input"));
}

#[test]
fn quick_controls_read_bands_but_only_settings_sets() {
    let h = harness();
    relations::set_by_hand(&h.store, &yui_core::SystemClock, "yui", &Target::User, -5)
        .expect("set");
    let quick = window(&h, "quick");
    let bands = invoke(&quick, "relation_bands", json!({})).expect("relation_bands");
    assert_eq!(bands["bands"]["yui"], json!("cold"));
    for w in [quick, window(&h, "main"), window(&h, "pet-kai")] {
        for (cmd, args) in [
            (
                "relation_set",
                json!({"preset": "yui", "target": {"kind": "user"}, "value": 20}),
            ),
            ("relations_list", json!({})),
        ] {
            assert_refused(&w, cmd, args);
        }
    }
    assert_eq!(
        relations::value(&h.store, "yui", &Target::User).expect("value"),
        -5
    );
}
