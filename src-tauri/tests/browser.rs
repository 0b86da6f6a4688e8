//! The smallest IPC surface for the browser: no window may run the user's browser directly. The
//! browser tool runs only inside turns (yui-core `tools::browser`, tested against the fake ego lite
//! CLI in crates/yui-core/tests/browser.rs and end to end in tests/e2e/browser.rs); a webview that
//! shows model text must not be able to run JavaScript in the user's signed-in browser.

use crate::support;

use serde_json::json;
use support::{invoke, window};
use yui_core::settings;

#[test]
fn no_window_can_invoke_the_browser_even_with_the_switch_on() {
    let h = support::harness();
    settings::set(&h.store, settings::BROWSER, &json!({"enabled": true})).expect("switch on");
    for label in ["main", "pet-kai", "phone-kai", "settings", "quick"] {
        let w = window(&h, label);
        for (cmd, args) in [
            ("browser_run", json!({"code": "console.log(1)"})),
            ("browser_guide", json!({})),
        ] {
            let err = invoke(&w, cmd, args).expect_err(&format!("{label} must not call {cmd}"));
            let text = err.to_string();
            assert!(
                text.contains("not allowed") || text.contains("not found"),
                "{label} {cmd}: {text}"
            );
        }
    }
}
