//! `.vrma` motions of a VRM character: three-vrm's test.vrma read (length, bones, expression,
//! gaze); a motion mapped to a file copied beside the model, listed in the window's look and
//! handed to the window; each bad file, an unknown motion and a character without a model
//! refused in one sentence that changes nothing; a new model keeps the motions, `MOTION=` goes
//! back to the procedural motion, deleting the character deletes them. Real files in temp
//! dirs, a real SQLite store.

use serde_json::Value;
use std::path::{Path, PathBuf};
use yui_core::looks;
use yui_core::presets::{self, NewPreset};
use yui_core::vrm::{self, animation, look, motions::MotionChange};
use yui_core::Store;
use yui_testkit::vrm::{Fixture, Version};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("yui.db")).expect("open");
    (dir, store)
}

fn vrma() -> Vec<u8> {
    std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vrm/test.vrma"))
        .unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// test.vrma with its JSON changed by `edit`.
fn edited(edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut g = vrm::glb::parse(&vrma()).unwrap();
    edit(&mut g.json);
    vrm::glb::write(&g)
}

fn change(motion: &str, file: Option<&Path>) -> MotionChange {
    MotionChange {
        motion: motion.into(),
        file: file.map(Path::to_path_buf),
    }
}

/// A character drawn with a generated VRM 1.0 model.
fn vrm_character(store: &Store, data: &Path, dir: &Path) -> String {
    let p = presets::create(
        store,
        &NewPreset {
            name: "Ren".into(),
            persona: None,
            avatar: None,
            voice: None,
            open: false,
        },
    )
    .unwrap();
    let src = write(dir, "ren.vrm", &Fixture::full(Version::V1).build());
    look::set_for(store, data, &p.id, &src).unwrap();
    p.id
}

#[test]
fn the_sample_vrma_is_read_for_its_length_bones_expressions_and_gaze() {
    let a = animation::read(&vrma(), "test.vrma").unwrap();
    assert_eq!(a.seconds, 3.0);
    assert_eq!(a.bones, ["rightUpperArm"]);
    assert_eq!(a.expressions, ["happy"]);
    assert!(a.look_at);
    assert_eq!(a.bytes, vrma().len() as u64);
}

#[test]
fn a_file_that_is_not_a_usable_vrma_gets_one_sentence() {
    let model = Fixture::full(Version::V1).build();
    let no_ext = edited(|j| {
        j.as_object_mut().unwrap().remove("extensions");
    });
    let no_tracks = edited(|j| {
        j.as_object_mut().unwrap().remove("animations");
    });
    let too_long = edited(|j| {
        for a in j["accessors"].as_array_mut().unwrap() {
            if a.get("max").is_some() && a["type"] == "SCALAR" {
                a["max"] = serde_json::json!([75.0]);
            }
        }
    });
    let dangling = edited(|j| j["animations"][0]["channels"][0]["sampler"] = 99.into());
    let cases: [(&[u8], &str); 6] = [
        (
            b"just some notes",
            "w.vrma is not a VRM animation: it does not start like a glTF binary file",
        ),
        (
            &vrma()[..200],
            "w.vrma is not a VRM animation: it is cut short or its chunks do not add up",
        ),
        (&model, "w.vrma is a VRM model, not a VRM animation (.vrma)"),
        (
            &no_ext,
            "w.vrma is a glTF file but not a VRM animation (it has no VRMC_vrm_animation extension)",
        ),
        (
            &no_tracks,
            "w.vrma is a VRM animation with nothing to play (no track moves a bone, an expression or the eyes)",
        ),
        (
            &too_long,
            "w.vrma lasts 75.0 s; a motion plays once and may last at most 60 s",
        ),
    ];
    for (bytes, want) in cases {
        let e = animation::read(bytes, "w.vrma").unwrap_err();
        assert_eq!(e.message, want);
    }
    let e = animation::read(&dangling, "w.vrma").unwrap_err();
    assert_eq!(
        e.message,
        "w.vrma is not a usable VRM animation: its tracks point at data it does not have"
    );
}

#[test]
fn a_motion_plays_a_vrma_kept_beside_the_model_and_handed_to_the_window() {
    let (dir, store) = store();
    let data = dir.path().join("data");
    let id = vrm_character(&store, &data, dir.path());
    let src = write(dir.path(), "wave-hello.vrma", &vrma());
    let set = vrm::motions::set(&store, &data, &id, &[change("wave", Some(&src))]).unwrap();
    let kept = looks::dir_for(&data, &id).join("motions/wave.vrma");
    assert_eq!(set[0].motion, "wave");
    assert_eq!(set[0].file.as_deref(), Some(kept.as_path()));
    assert_eq!(set[0].animation.as_ref().unwrap().seconds, 3.0);
    assert_eq!(std::fs::read(&kept).unwrap(), vrma());
    // The window's look lists it; the window gets its bytes, and the model's without a motion.
    let avatar = presets::get(&store, &id).unwrap().avatar;
    let model = look::file_for(&data, &id);
    assert_eq!(
        vrm::look_of(&model, &Default::default()).unwrap().motions,
        ["wave"]
    );
    assert_eq!(look::window_bytes(&avatar, Some("wave")).unwrap(), vrma());
    assert_eq!(
        look::window_bytes(&avatar, None).unwrap(),
        std::fs::read(&model).unwrap()
    );
    let e = look::window_bytes(&avatar, Some("nod")).unwrap_err();
    assert_eq!(e.message, "this character has no VRM animation for \"nod\"");
    let e = look::window_bytes(&avatar, Some("../model")).unwrap_err();
    assert!(e.message.contains("only letters, digits"), "{}", e.message);
    // A new model keeps the motions.
    let other = write(dir.path(), "zero.vrm", &Fixture::full(Version::V0).build());
    look::set_for(&store, &data, &id, &other).unwrap();
    assert_eq!(vrm::motions::list(&model), ["wave"]);
    // `wave=` plays the procedural wave again.
    let MotionChange { motion, file } = MotionChange::parse("wave=").unwrap();
    assert_eq!((motion.as_str(), file), ("wave", None));
    vrm::motions::set(&store, &data, &id, &[MotionChange::parse("wave=").unwrap()]).unwrap();
    assert!(!kept.exists());
    assert!(vrm::motions::list(&model).is_empty());
    // Deleting the character deletes them.
    vrm::motions::set(&store, &data, &id, &[change("nod", Some(&src))]).unwrap();
    looks::delete_character(&store, &data, &id).unwrap();
    assert!(!looks::dir_for(&data, &id).exists());
}

#[test]
fn a_bad_file_an_unknown_motion_or_no_model_changes_nothing() {
    let (dir, store) = store();
    let data = dir.path().join("data");
    let id = vrm_character(&store, &data, dir.path());
    let good = write(dir.path(), "good.vrma", &vrma());
    let bad = write(dir.path(), "broken.vrma", b"not an animation");
    let motions = looks::dir_for(&data, &id).join("motions");
    // One bad file among good ones: nothing is kept.
    let e = vrm::motions::set(
        &store,
        &data,
        &id,
        &[change("wave", Some(&good)), change("nod", Some(&bad))],
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        "broken.vrma is not a VRM animation: it does not start like a glTF binary file"
    );
    assert!(!motions.exists());
    let e = vrm::motions::set(&store, &data, &id, &[change("hopp", Some(&good))]).unwrap_err();
    assert!(
        e.message.starts_with(
            "there is no motion \"hopp\" in the vocabulary (it has nod, shake_head, wave"
        ),
        "{}",
        e.message
    );
    let e = vrm::motions::set(
        &store,
        &data,
        &id,
        &[change("wave", Some(&dir.path().join("missing.vrma")))],
    )
    .unwrap_err();
    assert!(e.message.starts_with("cannot read "), "{}", e.message);
    assert!(!motions.exists());
    // A character drawn without a model gets no motion file.
    let plain = presets::create(
        &store,
        &NewPreset {
            name: "Mio".into(),
            persona: None,
            avatar: None,
            voice: None,
            open: false,
        },
    )
    .unwrap();
    let e =
        vrm::motions::set(&store, &data, &plain.id, &[change("wave", Some(&good))]).unwrap_err();
    assert_eq!(
        e.message,
        format!("\"Mio\" is not drawn with a VRM model; give it one first (`yui look set --preset {} --vrm MODEL.vrm`)", plain.id)
    );
    assert!(!looks::dir_for(&data, &plain.id).join("motions").exists());
    assert!(MotionChange::parse("wave").is_err());
}
