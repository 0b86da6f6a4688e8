//! `yui preset import MODEL.vrm`, `yui look set/show/inspect`: the real binary against a temp
//! `--data-dir`, with generated VRM fixtures (yui-testkit) of both versions.

use crate::support::{json_ok, yui_command};
use serde_json::Value;
use std::path::Path;
use std::process::Output;
use yui_testkit::vrm::{Fixture, Version};

fn yui(dir: &Path, args: &[&str]) -> Output {
    yui_command(dir).args(args).output().expect("run yui")
}

fn ok(dir: &Path, args: &[&str]) -> Value {
    json_ok(args, &yui(dir, args))
}

fn err(dir: &Path, args: &[&str]) -> Value {
    let out = yui(dir, args);
    assert_eq!(out.status.code(), Some(1), "yui {args:?}");
    serde_json::from_slice(&out.stderr).expect("stderr is {code, message}")
}

#[test]
fn a_vrm_model_becomes_a_character_shows_its_licence_and_goes_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let model = dir.join("zero.vrm");
    std::fs::write(&model, Fixture::full(Version::V0).build()).unwrap();
    let made = ok(dir, &["preset", "import", model.to_str().unwrap()]);
    assert_eq!(made["name"], "Fixture Zero");
    assert_eq!(made["avatar"]["kind"], "vrm");
    assert_eq!(made["model"]["meta"]["vrm"], "0.x");
    assert_eq!(made["model"]["meta"]["authors"][0], "YUI tests");
    let licence: Vec<&str> = made["licence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(licence.contains(&"Licence: CC0"), "{licence:?}");
    assert!(licence.contains(&"Avatar use: everyone"));
    let file = made["avatar"]["file"].as_str().unwrap().to_string();
    assert!(file.starts_with(dir.to_str().unwrap()) && Path::new(&file).is_file());
    let id = made["id"].as_str().unwrap().to_string();

    // `look show`: each emotion's face and where it comes from.
    let shown = ok(dir, &["look", "show", &id]);
    let faces = shown["faces"].as_array().unwrap();
    assert_eq!(faces.len(), 8);
    assert_eq!(faces[1]["emotion"], "happy");
    assert_eq!(
        faces[1]["from"],
        "the model's happy (VRM 0.x \"joy\") expression"
    );
    assert_eq!(shown["visemes"].as_array().unwrap().len(), 5);

    // Removing the character removes the copied model.
    ok(dir, &["preset", "remove", &id, "--yes"]);
    assert!(!Path::new(&file).exists());
}

#[test]
fn look_set_gives_a_character_a_model_and_a_bad_file_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let ren = ok(dir, &["preset", "add", "Ren", "--palette", "mint"]);
    let id = ren["id"].as_str().unwrap();
    let model = dir.join("one.vrm");
    std::fs::write(&model, Fixture::full(Version::V1).build()).unwrap();
    let bad = dir.join("bad.vrm");
    std::fs::write(&bad, b"not a model").unwrap();
    let e = err(
        dir,
        &[
            "look",
            "set",
            "--preset",
            id,
            "--vrm",
            bad.to_str().unwrap(),
        ],
    );
    assert_eq!(e["code"], "invalid_input");
    assert_eq!(
        e["message"],
        "bad.vrm is not a VRM model: it does not start like a glTF binary file"
    );
    let list = ok(dir, &["preset", "list"]);
    let now = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == ren["id"])
        .unwrap();
    assert_eq!(now["avatar"], ren["avatar"]);
    let e = err(dir, &["look", "show", id]);
    assert!(e["message"]
        .as_str()
        .unwrap()
        .contains("is not drawn with a VRM model"));

    let set = ok(
        dir,
        &[
            "look",
            "set",
            "--preset",
            id,
            "--vrm",
            model.to_str().unwrap(),
        ],
    );
    assert_eq!(set["name"], "Ren");
    assert_eq!(set["avatar"]["kind"], "vrm");
    assert_eq!(set["avatar"]["fallback"], ren["avatar"]);
    let inspected = ok(dir, &["look", "inspect", model.to_str().unwrap()]);
    assert_eq!(inspected["meta"]["name"], "Fixture One");
    assert_eq!(inspected["expressions"].as_array().unwrap().len(), 18);
}

#[test]
fn look_set_maps_a_motion_to_a_vrma_and_a_bad_one_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let model = dir.join("one.vrm");
    std::fs::write(&model, Fixture::full(Version::V1).build()).unwrap();
    let vrma =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../yui-core/tests/fixtures/vrm/test.vrma");
    let bad = dir.join("bad.vrma");
    std::fs::write(&bad, b"not an animation").unwrap();
    let ren = ok(dir, &["preset", "add", "Ren", "--palette", "mint"]);
    let id = ren["id"].as_str().unwrap();
    let (model, vrma, bad) = (
        model.to_str().unwrap(),
        vrma.to_str().unwrap(),
        bad.to_str().unwrap(),
    );
    // A bad .vrma beside a model: one sentence, neither the model nor the motion is kept.
    let wave_bad = format!("wave={bad}");
    let e = err(
        dir,
        &[
            "look",
            "set",
            "--preset",
            id,
            "--vrm",
            model,
            "--vrm-motion",
            &wave_bad,
        ],
    );
    assert_eq!(
        e["message"],
        "bad.vrma is not a VRM animation: it does not start like a glTF binary file"
    );
    let shown = err(dir, &["look", "show", id]);
    assert!(shown["message"]
        .as_str()
        .unwrap()
        .contains("is not drawn with a VRM model"));
    // The model and a motion at once.
    let wave = format!("wave={vrma}");
    let set = ok(
        dir,
        &[
            "look",
            "set",
            "--preset",
            id,
            "--vrm",
            model,
            "--vrm-motion",
            &wave,
        ],
    );
    assert_eq!(set["avatar"]["kind"], "vrm");
    assert_eq!(set["motions"][0]["motion"], "wave");
    assert_eq!(set["motions"][0]["animation"]["seconds"], 3.0);
    let kept = set["motions"][0]["file"].as_str().unwrap();
    assert!(kept.starts_with(dir.to_str().unwrap()) && kept.ends_with("motions/wave.vrma"));
    assert_eq!(
        ok(dir, &["look", "show", id])["motions"],
        serde_json::json!(["wave"])
    );
    // A motion the vocabulary does not have.
    let e = err(
        dir,
        &["look", "set", "--preset", id, "--vrm-motion", "hop=x.vrma"],
    );
    assert!(e["message"]
        .as_str()
        .unwrap()
        .starts_with("there is no motion \"hop\" in the vocabulary"));
    // `wave=`: the procedural wave again.
    let set = ok(
        dir,
        &["look", "set", "--preset", id, "--vrm-motion", "wave="],
    );
    assert_eq!(set["motions"][0]["file"], Value::Null);
    assert_eq!(
        ok(dir, &["look", "show", id])["motions"],
        serde_json::json!([])
    );
    assert!(!Path::new(kept).exists());
}
