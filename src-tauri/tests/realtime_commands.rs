//! Settings → Backend's realtime panel on the mock runtime with the real capabilities: the
//! settings window reads `yui.realtime` (the defaults and the voices to offer), writes it
//! normalized, and a bad value is refused in plain words with nothing stored; no other window
//! may read or write it.

use crate::support;

use serde_json::json;
use support::{assert_refused, harness, invoke, window};

#[test]
fn realtime_settings_are_for_the_settings_window() {
    let h = harness();
    let s = window(&h, "settings");
    let v = invoke(&s, "realtime_settings_get", json!({})).unwrap();
    assert_eq!(
        v["settings"],
        json!({"voice": "alloy", "turn_detection": "server_vad", "transcription_model": "whisper-1"}),
        "{v}"
    );
    assert!(
        v["voices"].as_array().unwrap().contains(&json!("marin")),
        "{v}"
    );

    let change =
        json!({"voice": " verse ", "turn_detection": "semantic_vad", "transcription_model": ""});
    let v = invoke(&s, "realtime_settings_set", json!({"settings": change})).unwrap();
    let want =
        json!({"voice": "verse", "turn_detection": "semantic_vad", "transcription_model": null});
    assert_eq!(v["settings"], want, "{v}");
    assert_eq!(
        yui_core::settings::get(&h.store, "yui.realtime").unwrap(),
        want
    );

    let err = invoke(
        &s,
        "realtime_settings_set",
        json!({"settings": {"voice": "my voice", "turn_detection": "server_vad"}}),
    )
    .unwrap_err();
    assert_eq!(
        err["message"],
        "\"my voice\" is not a voice name: use letters, digits, - or _ (e.g. alloy).",
        "{err}"
    );
    assert_eq!(
        yui_core::settings::get(&h.store, "yui.realtime").unwrap(),
        want,
        "a refused value stores nothing"
    );

    for label in ["main", "pet-kai", "quick"] {
        let w = window(&h, label);
        assert_refused(&w, "realtime_settings_get", json!({}));
        assert_refused(&w, "realtime_settings_set", json!({"settings": {}}));
    }
}
