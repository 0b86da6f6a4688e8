//! Settings → Characters on the mock runtime with the real capabilities: a VRM character's
//! motions and the `.vrma` files they play (`vrm_motions`, `vrm_motion_set`,
//! `vrm_motion_remove`: the core's refusals as `{code, message}`), the size of every character
//! (`character_scale_get`/`_set`, and the drawn size each character window is told), and no
//! other window may call them.

use crate::support;

use base64::Engine as _;
use serde_json::json;
use std::path::PathBuf;
use support::{assert_refused, harness, invoke, window};
use yui_core::{layout, vrm};
use yui_testkit::vrm::{Fixture, Version};

fn vrma() -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("crates/yui-core/tests/fixtures/vrm/test.vrma"),
    )
    .unwrap()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn settings_chooses_a_vrma_for_a_motion_sees_it_and_removes_it() {
    let h = harness();
    let src = h.dir.path().join("kai.vrm");
    std::fs::write(&src, Fixture::full(Version::V1).build()).unwrap();
    vrm::look::set_for(&h.store, h.dir.path(), "kai", &src).unwrap();
    let settings = window(&h, "settings");
    let set_of = |list: &serde_json::Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .filter(|s| !s["file"].is_null())
            .map(|s| s["motion"].as_str().unwrap().to_string())
            .collect()
    };
    let list = invoke(&settings, "vrm_motions", json!({"id": "kai"})).unwrap();
    assert!(list
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["motion"] == "wave"));
    assert!(set_of(&list).is_empty());

    let list = invoke(
        &settings,
        "vrm_motion_set",
        json!({"id": "kai", "motion": "wave", "name": "Wave.vrma", "data": b64(&vrma())}),
    )
    .unwrap();
    assert_eq!(set_of(&list), ["wave"]);
    let wave = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["motion"] == "wave")
        .unwrap();
    assert_eq!(wave["animation"]["seconds"], 3.0);
    let kept = h.dir.path().join("looks/kai/motions/wave.vrma");
    assert_eq!(std::fs::read(&kept).unwrap(), vrma());

    let err = invoke(
        &settings,
        "vrm_motion_set",
        json!({"id": "kai", "motion": "wave", "name": "w.vrma", "data": b64(b"notes")}),
    )
    .unwrap_err();
    assert_eq!(
        err,
        json!({"code": "invalid_input", "message": "w.vrma is not a VRM animation: it does not start like a glTF binary file"})
    );
    assert_eq!(
        std::fs::read(&kept).unwrap(),
        vrma(),
        "a refused file changes nothing"
    );
    let err = invoke(&settings, "vrm_motions", json!({"id": "yui"})).unwrap_err();
    assert_eq!(err["code"], "invalid_input");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("is not drawn with a VRM model"),
        "{err}"
    );

    let list = invoke(
        &settings,
        "vrm_motion_remove",
        json!({"id": "kai", "motion": "wave"}),
    )
    .unwrap();
    assert!(set_of(&list).is_empty());
    assert!(!kept.exists());

    for label in ["main", "pet-kai", "quick", "phone-yui"] {
        let w = window(&h, label);
        for cmd in ["vrm_motions", "vrm_motion_set", "vrm_motion_remove"] {
            assert_refused(
                &w,
                cmd,
                json!({"id": "kai", "motion": "wave", "name": "w.vrma", "data": ""}),
            );
        }
    }
}

#[test]
fn settings_reads_and_bounds_the_characters_size_and_windows_draw_at_it() {
    let h = harness();
    let settings = window(&h, "settings");
    assert_eq!(
        invoke(&settings, "character_scale_get", json!({})).unwrap(),
        json!(1.0)
    );
    let err = invoke(&settings, "character_scale_set", json!({"scale": 3.0})).unwrap_err();
    assert_eq!(
        err,
        json!({"code": "invalid_input", "message": "a character can be shown from 50 % to 200 % of its usual size, not 300 %"})
    );
    assert_eq!(
        layout::scale(&h.store),
        1.0,
        "a refused size changes nothing"
    );
    let main = window(&h, "main");
    let pet = window(&h, "pet-kai");
    let px = |w| invoke(w, "window_context", json!({})).unwrap()["character_px"].clone();
    assert_eq!((px(&main), px(&pet)), (json!(200.0), json!(150.0)));
    // Kept in the store (the rebuilt windows are the e2e test's: the mock runtime has no
    // monitor to place them on).
    layout::set_scale(&h.store, 1.5).unwrap();
    assert_eq!(
        invoke(&settings, "character_scale_get", json!({})).unwrap(),
        json!(1.5)
    );
    assert_eq!((px(&main), px(&pet)), (json!(300.0), json!(225.0)));
    let phone = window(&h, "phone-yui");
    let ctx = invoke(&phone, "window_context", json!({})).unwrap();
    assert!(
        ctx["character_px"].is_null(),
        "a phone draws no character: {ctx}"
    );
    for w in [main, pet, phone, window(&h, "quick")] {
        for cmd in ["character_scale_get", "character_scale_set"] {
            assert_refused(&w, cmd, json!({"scale": 1.0}));
        }
    }
}
