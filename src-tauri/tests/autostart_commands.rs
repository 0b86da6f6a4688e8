//! Start with the desktop on the mock runtime with the real capabilities: the settings window
//! reads the switch (off by default, with the entry's path); no other window may read or flip it.
//! (Flipping it writes the real autostart folder: the core's tests do that in a temporary one.)

use crate::support;

use serde_json::json;
use support::{assert_refused, harness, invoke, window};

#[test]
fn autostart_is_for_the_settings_window() {
    let h = harness();
    let s = window(&h, "settings");
    let status = invoke(&s, "autostart_get", json!({})).unwrap();
    assert_eq!(status["enabled"], false, "{status}");
    assert!(
        status["entry"]
            .as_str()
            .is_some_and(|p| p.ends_with("autostart/yui.desktop")),
        "{status}"
    );
    for label in ["main", "pet-kai"] {
        let w = window(&h, label);
        assert_refused(&w, "autostart_get", json!({}));
        assert_refused(&w, "autostart_set", json!({"enabled": true}));
    }
}
