//! Settings → Characters → Look… of a VRM character: every motion of the vocabulary and the
//! `.vrma` it plays (`motions::slots`), a file the settings window read and sent (base64)
//! checked and kept as `yui look set --vrm-motion` keeps one (the same sentences), a motion
//! sent back to its procedural animation, and the avatar's record of them, which an open
//! window hears. Real files in temp dirs, a real SQLite store.

use base64::Engine as _;
use serde_json::json;
use std::path::{Path, PathBuf};
use yui_core::looks;
use yui_core::presets::{self, NewPreset};
use yui_core::vrm::{self, look, motions, motions::MotionChange};
use yui_core::Store;
use yui_testkit::vrm::{Fixture, Version};

fn vrma() -> Vec<u8> {
    std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vrm/test.vrma"))
        .unwrap()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn character(store: &Store, name: &str) -> String {
    let new = NewPreset {
        name: name.into(),
        persona: None,
        avatar: None,
        voice: None,
        open: false,
    };
    presets::create(store, &new).unwrap().id
}

/// A store, its data dir, and a character drawn with a generated VRM 1.0 model.
fn setup() -> (tempfile::TempDir, Store, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("yui.db")).unwrap();
    let data = dir.path().join("data");
    let id = character(&store, "Ren");
    let src = dir.path().join("ren.vrm");
    std::fs::write(&src, Fixture::full(Version::V1).build()).unwrap();
    look::set_for(&store, &data, &id, &src).unwrap();
    (dir, store, data, id)
}

fn set_ones(slots: &[motions::MotionSlot]) -> Vec<&str> {
    slots
        .iter()
        .filter(|s| s.file.is_some())
        .map(|s| s.motion.as_str())
        .collect()
}

#[test]
fn settings_lists_the_motions_keeps_a_chosen_file_and_removes_it() {
    let (dir, store, data, id) = setup();
    let vocab = yui_core::vocab::load(&store).unwrap();
    let slots = motions::slots(&store, &id).unwrap();
    let ids: Vec<&str> = slots.iter().map(|s| s.motion.as_str()).collect();
    let want: Vec<&str> = vocab.motions.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, want, "every motion of the vocabulary, in its order");
    assert!(set_ones(&slots).is_empty());
    let wave = slots.iter().find(|s| s.motion == "wave").unwrap();
    assert!(wave.in_vocab && !wave.label.is_empty());

    let slots =
        motions::set_from_upload(&store, &data, &id, "wave", "Hello.vrma", &b64(&vrma())).unwrap();
    assert_eq!(set_ones(&slots), ["wave"]);
    let kept = looks::dir_for(&data, &id).join("motions/wave.vrma");
    let wave = slots.iter().find(|s| s.motion == "wave").unwrap();
    assert_eq!(wave.file.as_deref(), Some(kept.as_path()));
    assert_eq!(wave.animation.as_ref().unwrap().seconds, 3.0);
    assert_eq!(std::fs::read(&kept).unwrap(), vrma(), "kept byte for byte");
    // The window's look lists it, as after the CLI.
    let model = look::file_for(&data, &id);
    assert_eq!(
        vrm::look_of(&model, &Default::default()).unwrap().motions,
        ["wave"]
    );
    // The avatar records it: an open window hears the character change and draws it again;
    // the look picker still knows the look as the current one.
    let preset = presets::get(&store, &id).unwrap();
    let stamp = preset.avatar["motions"]["wave"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(stamp.len(), 12);
    let offered = looks::offer(&data, &preset);
    assert!(
        offered.iter().any(|o| o.kind == "vrm" && o.current),
        "{offered:?}"
    );
    // The CLI's path and the settings' upload keep the same thing.
    let src = dir.path().join("Nod.vrma");
    std::fs::write(&src, vrma()).unwrap();
    let change = MotionChange {
        motion: "nod".into(),
        file: Some(src),
    };
    motions::set(&store, &data, &id, &[change]).unwrap();
    let slots = motions::slots(&store, &id).unwrap();
    let mut both = set_ones(&slots);
    both.sort_unstable();
    assert_eq!(both, ["nod", "wave"]);
    let after = presets::get(&store, &id).unwrap().avatar;
    assert_eq!(
        after["motions"]["nod"], after["motions"]["wave"],
        "same bytes, same record"
    );
    // Another file for wave: a new record, so the window hears it.
    let g = vrm::glb::parse(&vrma()).unwrap();
    let mut g = g;
    g.json["asset"]["generator"] = json!("YUI test");
    let rewritten = vrm::glb::write(&g);
    motions::set_from_upload(&store, &data, &id, "wave", "Other.vrma", &b64(&rewritten)).unwrap();
    let again = presets::get(&store, &id).unwrap().avatar;
    assert_ne!(again["motions"]["wave"].as_str().unwrap(), stamp);

    // Back to the built-in wave: the file goes, the look and the record forget it.
    let slots = motions::remove(&store, &data, &id, "wave").unwrap();
    assert_eq!(set_ones(&slots), ["nod"]);
    assert!(!kept.exists());
    assert_eq!(
        vrm::look_of(&model, &Default::default()).unwrap().motions,
        ["nod"]
    );
    let slots = motions::remove(&store, &data, &id, "nod").unwrap();
    assert!(set_ones(&slots).is_empty());
    let avatar = presets::get(&store, &id).unwrap().avatar;
    assert!(avatar.get("motions").is_none(), "{avatar}");
    assert_eq!(avatar["kind"], "vrm");
}

/// What is left of the look folder and the avatar, to show nothing changed.
fn state(store: &Store, data: &Path, id: &str) -> (Vec<String>, serde_json::Value) {
    let model = look::file_for(data, id);
    (
        motions::list(&model),
        presets::get(store, id).unwrap().avatar,
    )
}

#[test]
fn a_chosen_file_is_refused_in_the_clis_words_and_changes_nothing() {
    let (dir, store, data, id) = setup();
    let before = state(&store, &data, &id);
    let upload = |motion: &str, name: &str, bytes: &[u8]| {
        motions::set_from_upload(&store, &data, &id, motion, name, &b64(bytes))
            .unwrap_err()
            .message
    };
    // The same sentence as the CLI's for the same file.
    let cli = |motion: &str, name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let change = MotionChange {
            motion: motion.into(),
            file: Some(path),
        };
        motions::check(&store, &[change]).unwrap_err().message
    };
    let notes = b"just some notes".to_vec();
    assert_eq!(
        upload("wave", "w.vrma", &notes),
        "w.vrma is not a VRM animation: it does not start like a glTF binary file"
    );
    assert_eq!(
        upload("wave", "w.vrma", &notes),
        cli("wave", "w.vrma", &notes)
    );
    let model = Fixture::full(Version::V1).build();
    assert_eq!(
        upload("wave", "m.vrma", &model),
        "m.vrma is a VRM model, not a VRM animation (.vrma)"
    );
    assert_eq!(
        upload("wave", "m.vrma", &model),
        cli("wave", "m.vrma", &model)
    );
    let hop = upload("hop", "w.vrma", &vrma());
    assert!(
        hop.starts_with("there is no motion \"hop\" in the vocabulary (it has "),
        "{hop}"
    );
    assert_eq!(hop, cli("hop", "w.vrma", &vrma()));
    let e = motions::set_from_upload(&store, &data, &id, "wave", "w.vrma", "%%%not base64")
        .unwrap_err();
    assert!(
        e.message.starts_with("w.vrma did not arrive intact"),
        "{}",
        e.message
    );
    let e = motions::remove(&store, &data, &id, "hop").unwrap_err();
    assert!(
        e.message.starts_with("there is no motion \"hop\""),
        "{}",
        e.message
    );
    assert_eq!(state(&store, &data, &id), before, "nothing changed");
    // A character drawn without a model has no motions to set.
    let mio = character(&store, "Mio");
    for e in [
        motions::slots(&store, &mio).unwrap_err(),
        motions::set_from_upload(&store, &data, &mio, "wave", "w.vrma", &b64(&vrma())).unwrap_err(),
        motions::remove(&store, &data, &mio, "wave").unwrap_err(),
    ] {
        assert_eq!(
            e.message,
            "\"Mio\" is not drawn with a VRM model; give it one first (`yui look set --preset mio --vrm MODEL.vrm`)"
        );
    }
    assert!(!looks::dir_for(&data, &mio).exists());
}
