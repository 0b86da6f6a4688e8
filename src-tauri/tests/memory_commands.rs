//! Settings → Memory's commands on the mock runtime with the real capabilities: the settings
//! window lists, searches, edits, pins, forgets, exports and pauses; no other window may.

use crate::support;

use serde_json::json;
use support::{assert_refused, harness, invoke, window};
use yui_core::longterm::{self, Kind, NewMemory};

#[test]
fn settings_sees_edits_and_forgets_memories() {
    let h = harness();
    let now = chrono::Utc::now();
    let m = longterm::add(
        &h.store,
        now,
        "yui",
        &NewMemory::new(Kind::Fact, "The user's cat is named Mochi."),
    )
    .expect("add");
    longterm::add(
        &h.store,
        now,
        "kai",
        &NewMemory::new(Kind::Fact, "Kai's own."),
    )
    .expect("add");
    let settings = window(&h, "settings");
    let o = invoke(&settings, "memory_overview", json!({"preset": "yui"})).expect("overview");
    assert_eq!(o["memories"].as_array().unwrap().len(), 1);
    assert_eq!(
        (o["paused"].clone(), o["enabled"].clone()),
        (json!(false), json!(true))
    );
    let found = invoke(
        &settings,
        "memory_search",
        json!({"preset": "yui", "query": "cat"}),
    )
    .expect("search");
    assert_eq!(found[0]["id"], json!(m.id));
    let e = invoke(
        &settings,
        "memory_edit",
        json!({"id": m.id, "edit": {"text": "The user's cat is Tama.", "pinned": true}}),
    )
    .expect("edit");
    assert_eq!(
        (e["text"].clone(), e["pinned"].clone()),
        (json!("The user's cat is Tama."), json!(true))
    );
    let to = h.dir.path().join("out.json");
    let x = invoke(
        &settings,
        "memory_export",
        json!({"preset": "yui", "path": to.to_str().unwrap()}),
    )
    .expect("export");
    assert_eq!(
        (x["path"].as_str(), x["memories"].clone()),
        (to.to_str(), json!(1))
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&to).unwrap()).unwrap();
    assert_eq!(doc["memories"][0]["text"], json!("The user's cat is Tama."));
    let p = invoke(
        &settings,
        "memory_pause",
        json!({"preset": "yui", "paused": true}),
    )
    .expect("pause");
    assert_eq!(p["paused"], json!(true));
    let err = invoke(
        &settings,
        "memory_edit",
        json!({"id": m.id, "edit": {"text": "  "}}),
    )
    .expect_err("empty");
    assert_eq!(err["code"], json!("invalid_input"));
    invoke(&settings, "memory_forget", json!({"id": m.id})).expect("forget");
    assert!(longterm::list(&h.store, "yui").unwrap().is_empty());
    assert_eq!(
        invoke(&settings, "memory_forget_all", json!({"preset": "kai"})).expect("all"),
        json!(1)
    );
    let err =
        invoke(&settings, "memory_overview", json!({"preset": "nobody"})).expect_err("unknown");
    assert_eq!(err["code"], json!("not_found"));
}

#[test]
fn only_the_settings_window_reaches_memory() {
    let h = harness();
    for w in [
        window(&h, "main"),
        window(&h, "pet-kai"),
        window(&h, "quick"),
    ] {
        for cmd in [
            "memory_overview",
            "memory_search",
            "memory_edit",
            "memory_forget",
            "memory_forget_all",
            "memory_export",
            "memory_pause",
        ] {
            assert_refused(
                &w,
                cmd,
                json!({"preset": "yui", "id": 1, "query": "x", "paused": true, "edit": {}}),
            );
        }
    }
}
