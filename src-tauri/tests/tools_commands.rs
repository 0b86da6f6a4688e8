//! The settings window's "Tools" commands and the generic settings command's events, on the mock
//! runtime with the real capabilities: a switch or the vocabulary written through `settings_set`
//! sends the same events as `switch_set` / `vocab_set`; an unknown key is refused and stores
//! nothing; the tools commands are settings-window only.

mod support;

use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use support::{assert_refused, harness, invoke, window};
use tauri::Listener;
use yui_core::settings;

fn listen(h: &support::Harness, event: &str) -> Arc<Mutex<Vec<Value>>> {
    let seen = Arc::new(Mutex::new(Vec::<Value>::new()));
    let sink = seen.clone();
    h.app.listen_any(event, move |ev| {
        if let Ok(v) = serde_json::from_str(ev.payload()) {
            sink.lock().expect("lock").push(v);
        }
    });
    seen
}

#[test]
fn a_switch_written_through_settings_set_sends_the_switch_event() {
    let h = harness();
    let generic = listen(&h, "yui://switches-changed");
    let s = window(&h, "settings");
    invoke(
        &s,
        "settings_set",
        json!({"key": "yui.browser", "value": {"enabled": true}}),
    )
    .unwrap();
    let via_generic = generic.lock().unwrap().last().cloned();
    invoke(
        &s,
        "switch_set",
        json!({"key": "yui.browser", "enabled": true}),
    )
    .unwrap();
    let via_dedicated = generic.lock().unwrap().last().cloned();
    assert_eq!(
        via_generic,
        Some(json!({"browser": true, "relations": true, "screen": false}))
    );
    assert_eq!(via_generic, via_dedicated);
    assert_eq!(generic.lock().unwrap().len(), 2);
}

#[test]
fn the_vocabulary_written_through_settings_set_sends_the_vocab_event() {
    let h = harness();
    let seen = listen(&h, "yui://vocab-changed");
    let s = window(&h, "settings");
    let vocab = invoke(&s, "vocab_get", json!({})).unwrap();
    invoke(&s, "vocab_set", json!({"vocab": vocab})).unwrap();
    invoke(
        &s,
        "settings_set",
        json!({"key": "yui.vocab", "value": vocab}),
    )
    .unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0], seen[1]);
}

#[test]
fn an_unknown_key_is_refused_and_nothing_is_stored() {
    let h = harness();
    let s = window(&h, "settings");
    let err = invoke(
        &s,
        "settings_set",
        json!({"key": "no.such.key", "value": 1}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "invalid_input");
    assert!(settings::list(&h.store)
        .unwrap()
        .get("no.such.key")
        .is_none());
}

#[test]
fn tools_commands_are_for_the_settings_window() {
    let h = harness();
    let s = window(&h, "settings");
    let report = invoke(&s, "tools_list", json!({})).unwrap();
    assert!(report["definitions"].is_array(), "{report}");
    assert_eq!(report["presets"][0]["id"], "yui");
    let err = invoke(
        &s,
        "tools_enable",
        json!({"preset": "yui", "name": "nope", "enabled": true}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "not_found");
    for label in ["main", "pet-kai"] {
        let w = window(&h, label);
        assert_refused(&w, "tools_list", json!({}));
        assert_refused(&w, "tools_reload", json!({}));
    }
}
