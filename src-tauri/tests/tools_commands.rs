//! The settings window's "Tools" commands on the mock runtime with the real capabilities: the
//! report, an unknown tool refused, and the tools commands are settings-window only.

use crate::support;

use serde_json::json;
use support::{assert_refused, harness, invoke, window};

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
