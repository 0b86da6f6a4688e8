//! How YUI shows its windows, on the mock runtime with the real capabilities: the settings window
//! reads the choice and the setting, stores a new setting (read at the next start) and is refused
//! a word that is not one; no other window may read or change it.

use crate::support;

use serde_json::json;
use support::{assert_refused, harness, invoke, window};

#[test]
fn the_display_choice_is_for_the_settings_window() {
    let h = harness();
    let s = window(&h, "settings");
    let v = invoke(&s, "display_get", json!({})).unwrap();
    assert_eq!(v["setting"], "auto", "{v}");
    assert!(v["reason"].as_str().is_some_and(|r| !r.is_empty()), "{v}");
    let v = invoke(&s, "display_set", json!({"backend": "x11"})).unwrap();
    assert_eq!(v["setting"], "x11", "{v}");
    assert_eq!(
        invoke(&s, "display_get", json!({})).unwrap()["setting"],
        "x11"
    );
    let e = invoke(&s, "display_set", json!({"backend": "gnome"})).unwrap_err();
    assert_eq!(
        e["message"], "yui.display.backend must be \"auto\", \"x11\" or \"wayland\"",
        "{e}"
    );
    assert_eq!(
        invoke(&s, "display_get", json!({})).unwrap()["setting"],
        "x11"
    );
    for label in ["main", "pet-kai"] {
        let w = window(&h, label);
        assert_refused(&w, "display_get", json!({}));
        assert_refused(&w, "display_set", json!({"backend": "auto"}));
    }
}
