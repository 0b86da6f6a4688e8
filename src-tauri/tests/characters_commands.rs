//! The character and phone commands on the mock runtime with the real capabilities: settings
//! edits and deletes characters and gets the core's errors for bad ones; other windows cannot;
//! a phone window reads its own character's history in pages and nobody else's.

use crate::support;

use base64::Engine as _;
use serde_json::json;
use support::{assert_refused, harness, invoke, window};
use tauri::Manager;
use yui_core::presets;
use yui_core::transcript::{self, Role};

// Creating and importing open the new character's window; the mock runtime has no monitor to
// place it on, so those paths are covered end to end (tests/e2e/characters.rs). Here: the checks
// that fail before a window opens, edit, delete and the capability boundary.
#[test]
fn settings_edits_and_deletes_characters_and_refuses_bad_ones() {
    let h = harness();
    let settings = window(&h, "settings");
    let err = invoke(
        &settings,
        "preset_create",
        json!({"preset": {"name": "KAI"}}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "invalid_input");
    assert!(
        err["message"].as_str().unwrap().contains("already exists"),
        "{err}"
    );

    let edited = invoke(
        &settings,
        "preset_update",
        json!({"id": "kai", "change": {"persona": "You are Kai, a cat.", "avatar": {"kind": "builtin", "palette": "slate"}}}),
    )
    .unwrap();
    assert_eq!(edited["persona"], "You are Kai, a cat.");
    assert_eq!(
        presets::get(&h.store, "kai").unwrap().avatar["palette"],
        "slate"
    );

    let bad = base64::engine::general_purpose::STANDARD.encode("{not json");
    let err = invoke(&settings, "preset_import", json!({"data": bad})).unwrap_err();
    assert!(
        err["message"].as_str().unwrap().contains("not valid JSON"),
        "{err}"
    );
    let card = json!({"spec": "chara_card_v2", "data": {"name": "Yui", "description": "again"}});
    let dup = base64::engine::general_purpose::STANDARD.encode(card.to_string());
    let err = invoke(&settings, "preset_import", json!({"data": dup})).unwrap_err();
    assert!(
        err["message"].as_str().unwrap().contains("already exists"),
        "{err}"
    );
    assert_eq!(presets::list(&h.store).unwrap().len(), 2, "nothing created");

    transcript::append(&h.store, "kai", Role::User, "hi", None, chrono::Utc::now()).unwrap();
    let gone = invoke(&settings, "preset_delete", json!({"id": "kai"})).unwrap();
    assert_eq!(gone["transcript_lines"], 1);
    assert!(h.app.get_webview_window("pet-kai").is_none());
    assert!(presets::get(&h.store, "kai").is_err());
    let err = invoke(&settings, "preset_delete", json!({"id": "yui"})).unwrap_err();
    assert_eq!(err["code"], "invalid_input", "the main character stays");

    for label in ["main", "pet-kai", "quick", "phone-yui"] {
        let w = window(&h, label);
        for cmd in [
            "preset_create",
            "preset_update",
            "preset_delete",
            "preset_import",
            "preset_set_main",
        ] {
            assert_refused(
                &w,
                cmd,
                json!({"id": "yui", "preset": {"name": "X"}, "change": {}, "data": ""}),
            );
        }
    }
}

#[test]
fn a_phone_reads_its_own_history_in_pages() {
    let h = harness();
    for i in 0..5 {
        transcript::append(
            &h.store,
            "kai",
            Role::User,
            &format!("k{i}"),
            None,
            chrono::Utc::now(),
        )
        .unwrap();
    }
    transcript::append(&h.store, "yui", Role::User, "y", None, chrono::Utc::now()).unwrap();
    let phone = window(&h, "phone-kai");
    let ctx = invoke(&phone, "window_context", json!({})).unwrap();
    assert_eq!(ctx["role"], "phone");
    assert_eq!(ctx["preset"]["id"], "kai");

    let page = invoke(&phone, "phone_history", json!({"limit": 3})).unwrap();
    let texts = |p: &serde_json::Value| -> Vec<String> {
        p["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["text"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(texts(&page), ["k2", "k3", "k4"]);
    assert_eq!(page["more"], true);
    let older = invoke(
        &phone,
        "phone_history",
        json!({"limit": 3, "before": page["entries"][0]["id"]}),
    )
    .unwrap();
    assert_eq!(texts(&older), ["k0", "k1"]);
    assert_eq!(older["more"], false);

    // Character windows run turns but do not read history; settings neither.
    assert_refused(&window(&h, "pet-kai"), "phone_history", json!({}));
    assert_refused(&window(&h, "settings"), "phone_history", json!({}));
    // A phone may not write settings.
    assert_refused(
        &phone,
        "switch_set",
        json!({"key": "yui.browser", "enabled": true}),
    );
}

/// The look picker's commands: the looks offered (palettes for a new character; a character's
/// own pack once copied), a look's images for the previews, copying a sprite folder (scaled into
/// the data dir), and no other window may call them.
#[test]
fn the_look_picker_offers_previews_and_copies_a_folder() {
    let h = harness();
    let settings = window(&h, "settings");
    let palettes = invoke(&settings, "look_options", json!({"id": null})).unwrap();
    let ids: Vec<&str> = palettes
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        presets::PALETTES
            .iter()
            .map(|p| format!("palette:{p}"))
            .collect::<Vec<_>>()
    );

    let pack = tempfile::tempdir().unwrap();
    image::RgbaImage::from_pixel(400, 600, image::Rgba([250, 200, 0, 255]))
        .save(pack.path().join("joy.png"))
        .unwrap();
    std::fs::write(pack.path().join("anger.png"), b"not a picture").unwrap();
    let r = invoke(
        &settings,
        "look_import_folder",
        json!({"id": "kai", "dir": pack.path()}),
    )
    .unwrap();
    let copied = h.dir.path().join("looks").join("kai").join("sprites");
    assert_eq!(r[0]["avatar"], json!({"kind": "sprites", "dir": copied}));
    assert_eq!(r[1]["images"], 1);
    assert_eq!(r[1]["skipped"][0]["file"], "anger.png");
    let joy = image::open(copied.join("joy.png")).unwrap();
    assert_eq!((joy.width(), joy.height()), (160, 240), "scaled once");
    assert_eq!(
        presets::get(&h.store, "kai").unwrap().avatar["dir"],
        json!(copied)
    );

    let offered = invoke(&settings, "look_options", json!({"id": "kai"})).unwrap();
    let pack_option = offered
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "pack")
        .expect("the copied pack is offered");
    assert_eq!(pack_option["current"], true);
    let preview = invoke(
        &settings,
        "look_preview",
        json!({"avatar": pack_option["avatar"]}),
    )
    .unwrap();
    assert_eq!(preview["sources"]["happy"], "joy.png");
    assert!(preview["missing"]
        .as_array()
        .unwrap()
        .contains(&json!("neutral")));
    let palette = invoke(
        &settings,
        "look_preview",
        json!({"avatar": {"kind": "builtin", "palette": "sky"}}),
    )
    .unwrap();
    assert!(palette.is_null(), "a palette has no images");
    let err = invoke(
        &settings,
        "look_preview",
        json!({"avatar": {"kind": "picture", "file": "relative.png"}}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "invalid_input");

    for label in ["main", "pet-kai", "quick", "phone-yui"] {
        let w = window(&h, label);
        for cmd in ["look_options", "look_preview", "look_import_folder"] {
            assert_refused(&w, cmd, json!({"id": "kai", "avatar": {}, "dir": "/tmp"}));
        }
    }
}

#[test]
fn the_character_form_gets_its_choices_from_the_core() {
    let h = harness();
    let settings = window(&h, "settings");
    let c = invoke(&settings, "preset_choices", json!({})).unwrap();
    assert_eq!(c["voice_types"], json!(yui_core::presets::VOICE_TYPES));
    assert_eq!(c["palettes"], json!(yui_core::presets::PALETTES));
    // Yui and Kai hold sorts 0 and 1: the next character gets the third palette, as create does.
    assert_eq!(c["next_palette"], json!(yui_core::presets::PALETTES[2]));
    // (The mock runtime cannot place a new window: create as preset_create does, in the core.)
    let new = serde_json::from_value(json!({"name": "Mio"})).unwrap();
    let made = presets::create_open(&h.store, new).unwrap();
    assert_eq!(json!(made.avatar["palette"]), c["next_palette"]);
    assert_refused(&window(&h, "main"), "preset_choices", json!({}));
}
