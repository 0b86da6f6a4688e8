//! Expression commands on the mock runtime with the real `capabilities/`: the settings window
//! edits the vocabulary and reads the voice status; character windows cannot, but get their preset's
//! sprite set.

use crate::support;

use serde_json::{json, Value};
use support::{assert_refused, harness, invoke, window};
use yui_core::presets::{self, PresetUpdate};
use yui_core::settings;
use yui_core::vocab::{self, Vocab};

/// A valid 1×1 red PNG.
const RED_PIXEL_PNG: &[u8] = &[
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0,
    0, 0, 31, 21, 196, 137, 0, 0, 0, 13, 73, 68, 65, 84, 120, 156, 99, 248, 207, 192, 240, 31, 0,
    5, 0, 1, 255, 137, 153, 61, 29, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

#[test]
fn settings_window_edits_the_vocabulary_and_the_next_schema_follows() {
    let h = harness();
    let w = window(&h, "settings");
    let got = invoke(&w, "vocab_get", json!({})).unwrap();
    assert_eq!(got, serde_json::to_value(Vocab::default()).unwrap());

    let v = Vocab {
        motion_selection: vec!["wave".into()],
        ..Vocab::default()
    };
    let saved = invoke(&w, "vocab_set", json!({ "vocab": v })).unwrap();
    assert_eq!(saved["motion_selection"], json!(["wave"]));
    let stored = vocab::load(&h.store).unwrap();
    assert_eq!(stored.motion_selection, vec!["wave"]);
    let params = vocab::parameters(&stored);
    assert_eq!(params["properties"]["motion_id"]["enum"], json!(["wave"]));

    let mut dup = Vocab::default();
    dup.emotions.push(dup.emotions[0].clone());
    let err = invoke(&w, "vocab_set", json!({ "vocab": dup })).unwrap_err();
    assert_eq!(err["code"], "invalid_input");
    assert_eq!(err["message"], "vocabulary: duplicate emotion id neutral");

    let reset = invoke(&w, "vocab_reset", json!({})).unwrap();
    assert_eq!(reset, serde_json::to_value(Vocab::default()).unwrap());
    assert_eq!(vocab::load(&h.store).unwrap(), Vocab::default());
}

#[test]
fn settings_window_reads_the_voice_status_and_cannot_switch_it_here() {
    let h = harness();
    let w = window(&h, "settings");
    let st = invoke(&w, "voice_get", json!({})).unwrap();
    assert_eq!(st["enabled"], false);
    assert_eq!(st["engine"], "speech-dispatcher");
    assert_eq!(st["engines"], json!(["speech-dispatcher", "openai"]));
    assert!(st["status"]
        .as_str()
        .unwrap()
        .starts_with("speech-dispatcher: "));
    // The one voice switch is Settings → Voice's (voice_panel_set): the older command is gone.
    let err = invoke(&w, "voice_set", json!({"enabled": true})).unwrap_err();
    assert!(err.to_string().contains("voice_set"), "{err}");
    assert!(!settings::switch_on(&h.store, settings::VOICE).unwrap());
}

#[test]
fn character_windows_cannot_edit_expression_but_get_their_sprites() {
    let h = harness();
    let sprite_dir = h.dir.path().join("kai-sprites");
    std::fs::create_dir(&sprite_dir).unwrap();
    std::fs::write(sprite_dir.join("happy.png"), RED_PIXEL_PNG).unwrap();
    presets::update(
        &h.store,
        "kai",
        &PresetUpdate {
            avatar: Some(json!({"kind": "sprites", "dir": sprite_dir.to_str().unwrap()})),
            ..Default::default()
        },
    )
    .unwrap();

    let pet = window(&h, "pet-kai");
    let main = window(&h, "main");
    let quick = window(&h, "quick");
    for (label, w) in [("pet-kai", &pet), ("main", &main), ("quick", &quick)] {
        for (cmd, args) in [
            ("vocab_set", json!({"vocab": Vocab::default()})),
            ("vocab_reset", json!({})),
            ("voice_panel_set", json!({"edit": {"enabled": true}})),
        ] {
            let err = invoke(w, cmd, args).expect_err(&format!("{label} must not call {cmd}"));
            assert!(
                err.to_string().contains("not allowed"),
                "{label} {cmd}: {err}"
            );
        }
    }
    let set = invoke(&pet, "sprites_get", json!({})).unwrap();
    assert!(set["emotions"]["happy"]
        .as_str()
        .unwrap()
        .starts_with("data:image/png;base64,"));
    assert_eq!(set["missing"].as_array().unwrap().len(), 7);
    // The main preset uses the built-in character.
    assert_eq!(
        invoke(&main, "sprites_get", json!({})).unwrap(),
        Value::Null
    );
    // The settings window is no character: refused by the ACL.
    let settings_win = window(&h, "settings");
    assert_refused(&settings_win, "sprites_get", json!({}));
}

#[test]
fn character_windows_read_the_vocabulary_ids_and_flags_only() {
    let h = harness();
    let want = json!({
        "emotions": Vocab::default().emotions.iter().map(|e| json!({"id": e.id})).collect::<Vec<_>>(),
        "motions": Vocab::default().motions.iter().map(|m| {
            let mut v = json!({
                "id": m.id, "reactive": m.reactive, "ambient": m.ambient,
                "broker_publish": m.broker_publish,
            });
            if let Some(t) = &m.trigger {
                v["trigger"] = json!(t);
            }
            v
        }).collect::<Vec<_>>(),
    });
    for label in ["main", "pet-kai"] {
        let got = invoke(&window(&h, label), "vocab_for_character", json!({})).unwrap();
        assert_eq!(got, want, "{label}");
    }
    // Some defaults are ambient, some reactive with a trigger: the drawing needs both flags.
    let motions = want["motions"].as_array().unwrap();
    assert!(motions.iter().any(|m| m["ambient"] == true));
    assert!(motions
        .iter()
        .any(|m| m["reactive"] == true && m["trigger"].is_string()));
    // An edit shows at once (read from the store, no cache).
    let mut v = Vocab::default();
    v.emotions.truncate(1);
    vocab::save(&h.store, &v).unwrap();
    let got = invoke(&window(&h, "pet-x"), "vocab_for_character", json!({})).unwrap();
    assert_eq!(got["emotions"], json!([{"id": "neutral"}]));
    // Not granted to the tool windows (they have vocab_get or nothing).
    for label in ["settings", "quick"] {
        let err = invoke(&window(&h, label), "vocab_for_character", json!({})).unwrap_err();
        assert!(err.to_string().contains("not allowed"), "{label}: {err}");
    }
}

#[test]
fn saving_or_resetting_the_vocabulary_tells_every_window() {
    use std::time::Duration;
    use tauri::Listener;
    let h = harness();
    let (tx, rx) = std::sync::mpsc::channel();
    h.app.listen_any("yui://vocab-changed", move |e| {
        let _ = tx.send(serde_json::from_str::<Value>(e.payload()).unwrap());
    });
    let settings_win = window(&h, "settings");
    let mut v = Vocab::default();
    v.motions.retain(|m| m.id != "wave");
    invoke(&settings_win, "vocab_set", json!({ "vocab": v })).unwrap();
    let got = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("event on vocab_set");
    let ids: Vec<_> = got["motions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    assert!(!ids.contains(&json!("wave")), "{ids:?}");
    assert_eq!(ids.len(), Vocab::default().motions.len() - 1);
    assert!(
        got.get("voice").is_none() && got.get("motion_selection").is_none(),
        "{got}"
    );

    invoke(&settings_win, "vocab_reset", json!({})).unwrap();
    let got = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("event on vocab_reset");
    assert_eq!(
        got,
        invoke(&window(&h, "main"), "vocab_for_character", json!({})).unwrap()
    );

    // A refused save changes nothing and announces nothing.
    let mut dup = Vocab::default();
    dup.emotions.push(dup.emotions[0].clone());
    invoke(&settings_win, "vocab_set", json!({ "vocab": dup })).unwrap_err();
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
}

mod playback {
    //! Playback and voice run in the core's stage (crates/yui-core/tests/stage.rs tests them with
    //! a fake spd-say); here, who may report and stop.
    use super::*;

    #[test]
    fn character_windows_report_the_bubble_and_stop_their_own_voice_only() {
        let h = harness();
        let pet = window(&h, "pet-kai");
        invoke(&pet, "playback_bubble_done", json!({"turnId": "turn-1"})).unwrap();
        // Nothing is speaking: nothing to stop.
        assert_eq!(invoke(&pet, "voice_stop", json!({})).unwrap(), json!(false));
        // The settings window is not a character: no such report or stop from it.
        let settings_win = window(&h, "settings");
        assert_refused(
            &settings_win,
            "playback_bubble_done",
            json!({"turnId": "x"}),
        );
        assert_refused(&settings_win, "voice_stop", json!({}));
    }
}

#[test]
fn the_settings_editor_asks_the_core_which_motions_may_be_offered() {
    let h = harness();
    let settings_win = window(&h, "settings");
    let motions = json!([
        {"id": "nod"},
        {"id": "blink", "ambient": true},
        {"id": "flinch", "reactive": true, "trigger": "clicked"},
        {"id": "poke", "broker_publish": false},
        {"id": ""},
        {"id": "clap", "label": "Clap"}
    ]);
    let ids = invoke(
        &settings_win,
        "vocab_offerable",
        json!({ "motions": motions }),
    )
    .unwrap();
    assert_eq!(ids, json!(["nod", "clap"]));
    // A character window edits no vocabulary.
    assert_refused(
        &window(&h, "main"),
        "vocab_offerable",
        json!({ "motions": [] }),
    );
}
