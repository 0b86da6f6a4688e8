//! Framing a VRM model: the head and upper body from the humanoid's rest pose and the meshes'
//! bounds, the same on both VRM versions; the window's width follows the model's proportions
//! (wider shoulders, a wider window; taller hair, a narrower one) and keeps its height; a
//! drawn character keeps the drawn size. Generated fixtures and the VRM specification's sample.

use serde_json::{json, Value};
use std::path::PathBuf;
use yui_core::layout;
use yui_core::presets::{self, NewPreset};
use yui_core::vrm::{self, framing, look};
use yui_core::Store;
use yui_testkit::vrm::{Fixture, Version};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-4
}

/// The fixture with its JSON changed by `edit`.
fn edited(version: Version, edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut g = vrm::glb::parse(&Fixture::full(version).build()).unwrap();
    edit(&mut g.json);
    vrm::glb::write(&g)
}

fn framing_of(bytes: &[u8]) -> framing::Framing {
    vrm::read(bytes, "m.vrm")
        .unwrap()
        .1
        .framing
        .expect("framed")
}

fn node_named<'a>(json: &'a mut Value, name: &str) -> &'a mut Value {
    json["nodes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|n| n["name"] == name)
        .unwrap()
}

#[test]
fn the_head_and_upper_body_are_framed_alike_on_both_versions() {
    // The fixture: head bone at 1.43 m, its face 0.22 m above it, upper chest at 1.2 m, upper
    // arms 0.3 m apart.
    let one = framing_of(&Fixture::full(Version::V1).build());
    assert!(close(one.top, 1.65), "{one:?}");
    assert!(close(one.bottom, 1.2 - 0.23 * 0.9), "{one:?}");
    assert!(close(one.width, 0.48), "{one:?}");
    assert!(close(one.aspect, 0.48 / (1.65 - 0.993)), "{one:?}");
    let zero = framing_of(&Fixture::full(Version::V0).build());
    assert!(close(zero.top, one.top) && close(zero.bottom, one.bottom));
    assert!(close(zero.width, one.width) && close(zero.aspect, one.aspect));
    // The window: the main character's height, the width in the model's proportions.
    let (w, h) = framing::window_size(layout::character_size(true), one.aspect);
    assert_eq!(h, layout::MAIN_SIZE.1);
    assert_eq!(
        w,
        (layout::MAIN_SIZE.0 * one.aspect / framing::DEFAULT_ASPECT).round()
    );
    assert!(w < layout::MAIN_SIZE.0);
}

#[test]
fn the_window_follows_the_proportions_within_bounds() {
    let base = framing_of(&Fixture::full(Version::V1).build());
    // Shoulders twice as wide: a wider framing and window.
    let wide = framing_of(&edited(Version::V1, |j| {
        for side in ["leftShoulder", "rightShoulder"] {
            let t = &mut node_named(j, side)["translation"];
            t[0] = json!(t[0].as_f64().unwrap() * 4.0);
        }
    }));
    assert!(wide.aspect > base.aspect, "{wide:?} vs {base:?}");
    // Tall hair (the face mesh's node lifted): a taller framing, a narrower window.
    let tall = framing_of(&edited(Version::V1, |j| {
        node_named(j, "Face")["scale"] = json!([1.0, 2.5, 1.0]);
    }));
    assert!(
        tall.top > base.top + 0.3 && tall.aspect < base.aspect,
        "{tall:?}"
    );
    let pet = layout::character_size(false);
    let sizes: Vec<(f64, f64)> = [tall, base, wide]
        .iter()
        .map(|f| framing::window_size(pet, f.aspect))
        .collect();
    assert!(
        sizes[0].0 < sizes[1].0 && sizes[1].0 < sizes[2].0,
        "{sizes:?}"
    );
    assert!(sizes.iter().all(|s| s.1 == pet.1));
    // Never narrower than a fifth less nor a third wider than the drawn window.
    for aspect in [0.1, 0.6, 1.1, 5.0] {
        let (w, _) = framing::window_size(pet, aspect);
        assert!(
            w >= (pet.0 * 0.8).round() && w <= (pet.0 * 1.3).round(),
            "{aspect}: {w}"
        );
    }
}

#[test]
fn a_vrm_character_window_takes_its_models_size_and_a_drawn_one_keeps_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("yui.db")).unwrap();
    let data = dir.path().join("data");
    let p = presets::create(
        &store,
        &NewPreset {
            name: "Ren".into(),
            persona: None,
            avatar: Some(json!({"kind": "builtin", "palette": "mint"})),
            voice: None,
            open: false,
        },
    )
    .unwrap();
    assert_eq!(
        look::window_size(&p, 1.0),
        layout::character_size(p.is_main)
    );
    let src = dir.path().join("ren.vrm");
    std::fs::write(&src, Fixture::full(Version::V1).build()).unwrap();
    let set = look::set_for(&store, &data, &p.id, &src).unwrap();
    let aspect = set.model.framing.unwrap().aspect;
    let want = framing::window_size(layout::character_size(p.is_main), aspect);
    assert_eq!(look::window_size(&set.preset, 1.0), want);
    assert_ne!(want, layout::character_size(p.is_main));
    // The user's scale (Settings → Characters) grows every look's window; a VRM window keeps
    // its model's proportions; it is kept in the store, so it holds after a restart.
    assert_eq!(look::window_size_in(&store, &set.preset), want, "unset: 1");
    layout::set_scale(&store, 1.5).unwrap();
    let reopened = Store::open(dir.path().join("yui.db")).unwrap();
    assert_eq!(layout::scale(&reopened), 1.5);
    let big = look::window_size_in(&reopened, &set.preset);
    assert_eq!(big, ((want.0 * 1.5).round(), (want.1 * 1.5).round()));
    assert!(
        (big.0 / big.1 - want.0 / want.1).abs() < 0.01,
        "{big:?} vs {want:?}"
    );
    assert_eq!(
        look::window_size_in(&reopened, &p),
        (255.0, 348.0),
        "a drawn pet's window (170×232) at 150 %"
    );
    let refused = layout::set_scale(&store, 2.5).unwrap_err();
    assert_eq!(
        refused.message,
        "a character can be shown from 50 % to 200 % of its usual size, not 250 %"
    );
    assert_eq!(
        layout::scale(&store),
        1.5,
        "a refused scale changes nothing"
    );
    assert!(yui_core::settings::set(&store, layout::SCALE_KEY, &json!("huge")).is_err());
    yui_core::settings::set(&store, layout::SCALE_KEY, &json!(1)).unwrap();
    assert_eq!(look::window_size_in(&store, &set.preset), want);
    // The window's look carries the framing its camera uses.
    let shown = vrm::look_of(&look::file_for(&data, &p.id), &Default::default()).unwrap();
    assert_eq!(shown.framing, set.model.framing);
    // A model file gone: the drawn size, no panic.
    std::fs::remove_file(look::file_for(&data, &p.id)).unwrap();
    assert_eq!(
        look::window_size(&set.preset, 1.0),
        layout::character_size(p.is_main)
    );
    // The VRM specification's sample is framed too.
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/vrm/expressions_isBinary_Overrides.vrm");
    let f = vrm::framing_of(&sample)
        .unwrap()
        .expect("the sample is framed");
    assert!(f.top > f.bottom && f.width > 0.0, "{f:?}");
}
