//! Tauri commands on the mock runtime, with the real `tauri.conf.json` and `capabilities/`:
//! settings round trips through the settings window, the per-window capability boundary
//! (a pet or the main window cannot call settings-only commands), and preset commands.

use crate::support;

use serde_json::json;
use support::{assert_refused, harness, invoke, window};
use yui_core::settings;

#[test]
fn settings_window_flips_a_switch_into_the_store() {
    let h = harness();
    let settings_win = window(&h, "settings");
    let before = invoke(&settings_win, "switches_get", json!({})).unwrap();
    assert_eq!(before["screen"], false);
    let now = invoke(
        &settings_win,
        "switch_set",
        json!({"key": "yui.screen", "enabled": true}),
    )
    .unwrap();
    assert_eq!(now["screen"], true);
    let after = invoke(&settings_win, "switches_get", json!({})).unwrap();
    assert_eq!(after, now);
    // It reached the store, not a cache in the shell.
    assert!(settings::switch_on(&h.store, settings::SCREEN).unwrap());
}

#[test]
fn invalid_input_crosses_ipc_as_code_and_message() {
    let h = harness();
    let settings_win = window(&h, "settings");
    let err = invoke(
        &settings_win,
        "switch_set",
        json!({"key": "yui.backend", "enabled": true}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "invalid_input", "{err}");
    let message = err["message"].as_str().expect("a message");
    assert!(message.contains("yui.backend"), "{message}");
    assert_eq!(err.as_object().map(|o| o.len()), Some(2), "{err}");
}

#[test]
fn pet_and_main_windows_cannot_call_settings_only_commands() {
    let h = harness();
    for label in ["pet-kai", "main"] {
        let w = window(&h, label);
        for (cmd, args) in [
            ("switch_set", json!({"key": "yui.browser", "enabled": true})),
            ("backend_get", json!({})),
            (
                "backend_set",
                json!({"change": {"base_url": "http://evil.example/v1"}}),
            ),
            ("backend_set_key", json!({"key": "sk-test"})),
        ] {
            assert_refused(&w, cmd, args);
        }
        // The same window may ask who it is: the refusal above is the ACL, not a broken IPC.
        let ctx = invoke(&w, "window_context", json!({})).unwrap();
        assert_eq!(ctx["label"], label);
    }
    assert!(!settings::switch_on(&h.store, settings::BROWSER).unwrap());
}

#[test]
fn quick_window_flips_switches_but_cannot_write_settings() {
    let h = harness();
    let quick = window(&h, "quick");
    let now = invoke(
        &quick,
        "switch_set",
        json!({"key": "yui.relations", "enabled": false}),
    )
    .unwrap();
    assert_eq!(now["relations"], false);
    assert!(!settings::switch_on(&h.store, settings::RELATIONS).unwrap());
    let err = invoke(
        &quick,
        "switch_set",
        json!({"key": "yui.backend", "enabled": true}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "invalid_input");
    assert_refused(
        &quick,
        "backend_set",
        json!({"change": {"base_url": "http://evil.example/v1"}}),
    );
    assert_refused(&quick, "backend_set_key", json!({"key": "sk-test"}));
}

#[test]
fn settings_window_changes_the_backend_and_never_sees_the_key() {
    let h = harness();
    let settings_win = window(&h, "settings");
    let view = invoke(
        &settings_win,
        "backend_set",
        json!({"change": {"base_url": "http://127.0.0.1:8080/v1", "model": "qwen3", "transport": "responses"}}),
    )
    .unwrap();
    assert_eq!(view["base_url"], "http://127.0.0.1:8080/v1");
    assert_eq!(view["model"], "qwen3");
    assert_eq!(view["transport"], "responses");
    assert_eq!(view["has_api_key"], false);
    let err = invoke(
        &settings_win,
        "backend_set",
        json!({"change": {"transport": "carrier_pigeon"}}),
    )
    .unwrap_err();
    assert!(err.to_string().contains("carrier_pigeon"), "{err}");
    let again = invoke(&settings_win, "backend_get", json!({})).unwrap();
    assert_eq!(again["model"], "qwen3");
    assert!(
        again.get("api_key").is_none(),
        "the key is never returned: {again}"
    );
}

#[test]
fn turns_run_in_character_windows_only() {
    let h = harness();
    // The settings window is not granted turn_stop at all; a character window is, and has no
    // turn running.
    let settings_win = window(&h, "settings");
    assert_refused(&settings_win, "turn_stop", json!({}));
    let main = window(&h, "main");
    assert_eq!(invoke(&main, "turn_stop", json!({})).unwrap(), json!(false));
}

#[test]
fn window_context_names_the_preset_of_a_pet_window() {
    let h = harness();
    let pet = window(&h, "pet-kai");
    let ctx = invoke(&pet, "window_context", json!({})).unwrap();
    assert_eq!(ctx["role"], "pet");
    assert_eq!(ctx["label"], "pet-kai");
    assert_eq!(ctx["preset"]["id"], "kai");
    let main = window(&h, "main");
    let ctx = invoke(&main, "window_context", json!({})).unwrap();
    assert_eq!(ctx["role"], "main");
    assert_eq!(ctx["preset"]["id"], "yui");
    // No WebKit view on the mock runtime: nothing to empty, so the page is told not to try
    // (tests/e2e/typing.rs checks the real views say yes).
    assert_eq!(ctx["forgets_input"], false);
}

#[test]
fn an_unknown_window_has_no_ipc_at_all() {
    let h = harness();
    let stray = window(&h, "stray");
    assert_refused(&stray, "window_context", json!({}));
}

/// Find, the model list and Test connection are the settings window's; the first-run greeting is
/// the main window's, once.
#[test]
fn backend_helpers_are_for_settings_and_the_first_run_greeting_for_main_once() {
    // Probe no port: what runs on this machine must not change the test.
    std::env::set_var(yui_core::discover::PORTS_ENV, "none");
    let h = harness();
    let settings_win = window(&h, "settings");
    assert_eq!(
        invoke(&settings_win, "backend_find", json!({})).unwrap(),
        json!([])
    );
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{dead}/v1");
    let report = invoke(
        &settings_win,
        "backend_test",
        json!({"overrides": {"base_url": base, "model": "m"}}),
    )
    .unwrap();
    assert_eq!(report["checks"][0]["name"], "reachable");
    assert_eq!(report["checks"][0]["ok"], false);
    assert_eq!(report["checks"][1]["skipped"], true);
    assert_eq!(report["transport"], serde_json::Value::Null);
    assert_eq!(
        report["summary"],
        format!("no transport works with this server. I can't reach the model at 127.0.0.1:{dead} — is the model server running, and is the address right? Settings → Backend")
    );
    let err = invoke(&settings_win, "backend_models", json!({"baseUrl": base})).unwrap_err();
    assert_eq!(err["code"], "backend", "{err}");

    let pet = window(&h, "pet-kai");
    for cmd in ["backend_find", "backend_models", "backend_test"] {
        assert_refused(&pet, cmd, json!({}));
    }
    assert_eq!(
        invoke(&pet, "first_run", json!({})).unwrap(),
        serde_json::Value::Null
    );
    let main = window(&h, "main");
    let g = invoke(&main, "first_run", json!({})).unwrap();
    // No server answered: the built-in model is offered (its button starts the download).
    assert_eq!(g["open_backend"], false, "{g}");
    assert_eq!(g["offer"]["action"], "download", "{g}");
    assert!(
        g["text"].as_str().unwrap().starts_with(
            "Hi, I'm Yui! I found no model server here, but I can run my own model: qwen3-"
        ),
        "{g}"
    );
    assert_eq!(
        invoke(&main, "first_run", json!({})).unwrap(),
        serde_json::Value::Null
    );
}

#[test]
fn the_built_in_model_page_is_for_settings_and_its_changes_cross_ipc_as_the_core_says() {
    let h = harness();
    let settings_win = window(&h, "settings");
    let page = invoke(&settings_win, "model_page", json!({})).unwrap();
    let names: Vec<&str> = page["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["source"] == "catalog")
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["qwen3-1.7b", "qwen3-0.6b"], "{page}");
    assert_eq!(page["models"][0]["state"], "available");
    assert_eq!(page["models"][0]["size_text"], "1.1 GB");
    assert_eq!(page["settings"]["yui.model.idle_stop_s"], 600);
    let page = invoke(
        &settings_win,
        "model_set",
        json!({"key": "yui.model.threads", "value": 3}),
    )
    .unwrap();
    assert_eq!(page["settings"]["yui.model.threads"], 3);
    let err = invoke(
        &settings_win,
        "model_set",
        json!({"key": "yui.model.threads", "value": 0}),
    )
    .unwrap_err();
    assert_eq!(
        (err["code"].as_str(), err["message"].as_str()),
        (
            Some("invalid_input"),
            Some("yui.model.threads must be a whole number from 1 to 256 or null")
        )
    );
    let err = invoke(
        &settings_win,
        "model_set",
        json!({"key": "yui.screen", "value": {"enabled": true}}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "invalid_input", "{err}");
    let err = invoke(&settings_win, "model_remove", json!({"name": "qwen3-1.7b"})).unwrap_err();
    assert_eq!(err["message"], "qwen3-1.7b is not installed", "{err}");
    let err = invoke(
        &settings_win,
        "model_use",
        json!({"name": "qwen3-1.7b", "greet": false}),
    )
    .unwrap_err();
    assert_eq!(
        err["message"],
        "qwen3-1.7b is not installed: `yui model pull qwen3-1.7b` or `yui model add FILE.gguf` first"
    );
    // The character windows may start the first run's download, never read or change the page.
    for label in ["main", "pet-kai"] {
        let w = window(&h, label);
        for cmd in ["model_page", "model_set", "model_remove"] {
            assert_refused(&w, cmd, json!({}));
        }
    }
}
