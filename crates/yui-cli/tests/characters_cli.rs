//! `yui preset add/edit/remove/import/main` and `yui transcript`, run as the real binary against
//! a temp `--data-dir` (card fixtures in `tests/fixtures/`: a PNG card with `chara`, a V3 JSON
//! card, a truncated PNG).

use crate::support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;
use support::{json_ok, yui_command};
use yui_core::transcript::{self, Role};

fn yui(dir: &Path, args: &[&str]) -> Output {
    yui_command(dir).args(args).output().expect("run yui")
}

fn ok(dir: &Path, args: &[&str]) -> Value {
    json_ok(args, &yui(dir, args))
}

fn err(dir: &Path, args: &[&str]) -> Value {
    let out = yui(dir, args);
    assert_eq!(out.status.code(), Some(1), "yui {args:?}");
    assert!(out.stdout.is_empty(), "yui {args:?} printed on stdout");
    serde_json::from_slice(&out.stderr).expect("stderr is {code, message}")
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn names(dir: &Path) -> Vec<String> {
    ok(dir, &["preset", "list"])
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn preset_add_with_fields_and_edit() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let mio = ok(
        dir,
        &[
            "preset",
            "add",
            "Mio",
            "--persona",
            "You are Mio.",
            "--palette",
            "mint",
            "--voice-type",
            "female2",
            "--rate",
            "-20",
            "--open",
        ],
    );
    assert_eq!(mio["id"], "mio");
    assert_eq!(mio["persona"], "You are Mio.");
    assert_eq!(mio["avatar"], json!({"kind": "builtin", "palette": "mint"}));
    assert_eq!(mio["voice"], json!({"voice_type": "female2", "rate": -20}));
    assert_eq!(mio["is_open"], true);

    // Edit keeps the voice fields it is not told about.
    let sprites = tempfile::tempdir().unwrap();
    let edited = ok(
        dir,
        &[
            "preset",
            "edit",
            "mio",
            "--name",
            "Mio-chan",
            "--pitch",
            "15",
            "--sprites",
            sprites.path().to_str().unwrap(),
        ],
    );
    assert_eq!(edited["name"], "Mio-chan");
    assert_eq!(
        edited["voice"],
        json!({"voice_type": "female2", "rate": -20, "pitch": 15})
    );
    assert_eq!(edited["avatar"]["kind"], "sprites");
    let edited = ok(dir, &["preset", "edit", "mio", "--voice-type", "default"]);
    assert_eq!(edited["voice"], json!({"rate": -20, "pitch": 15}));

    let e = err(dir, &["preset", "add", "KAI"]);
    assert_eq!(e["code"], "invalid_input");
    assert!(e["message"].as_str().unwrap().contains("already exists"));
    let e = err(dir, &["preset", "edit", "kai", "--name", "mio-chan"]);
    assert!(e["message"].as_str().unwrap().contains("already exists"));
    assert_eq!(
        err(dir, &["preset", "add", "Sol", "--palette", "neon"])["code"],
        "invalid_input"
    );
    assert_eq!(
        err(dir, &["preset", "edit", "nobody", "--persona", "x"])["code"],
        "not_found"
    );
    assert_eq!(names(dir), ["Yui", "Kai", "Mio-chan"]);

    let main = ok(dir, &["preset", "main", "mio"]);
    assert_eq!(main["is_main"], true);
}

#[test]
fn preset_remove_needs_yes_and_takes_the_history() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    ok(dir, &["preset", "list"]); // creates the database
    let store = yui_core::Store::open(dir.join(yui_core::paths::DB_FILE)).unwrap();
    transcript::append(&store, "kai", Role::User, "hi Kai", None, chrono_now()).unwrap();
    drop(store);

    let e = err(dir, &["preset", "remove", "kai"]);
    assert!(e["message"].as_str().unwrap().contains("--yes"), "{e}");
    assert_eq!(names(dir), ["Yui", "Kai"], "nothing removed without --yes");
    let gone = ok(dir, &["preset", "remove", "kai", "--yes"]);
    assert_eq!(gone["preset"]["id"], "kai");
    assert_eq!(gone["transcript_lines"], 1);
    assert_eq!(names(dir), ["Yui"]);
    assert_eq!(
        err(dir, &["preset", "remove", "yui", "--yes"])["code"],
        "invalid_input"
    );
    assert_eq!(
        err(dir, &["transcript", "--preset", "kai"])["code"],
        "not_found"
    );
}

fn chrono_now() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339("2026-12-01T09:30:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc)
}

#[test]
fn preset_import_png_and_json_cards() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let akari = ok(dir, &["preset", "import", &fixture("akari.png")]);
    assert_eq!(akari["name"], "Akari");
    assert_eq!(akari["is_open"], false);
    let persona = akari["persona"].as_str().unwrap();
    assert!(
        persona.contains("Akari is a lantern spirit who lights the user's desk"),
        "{persona}"
    );
    assert!(persona.contains("Akari's personality: warm, curious, a little shy"));

    let ren = ok(
        dir,
        &["preset", "import", &fixture("ren.v3.json"), "--open"],
    );
    assert_eq!(ren["name"], "Ren");
    assert_eq!(ren["is_open"], true);

    let e = err(dir, &["preset", "import", &fixture("akari.png")]);
    assert!(
        e["message"].as_str().unwrap().contains("already exists"),
        "{e}"
    );
    let e = err(dir, &["preset", "import", &fixture("broken.png")]);
    assert_eq!(e["code"], "invalid_input");
    assert!(
        e["message"].as_str().unwrap().contains("PNG is damaged"),
        "{e}"
    );
    let e = err(dir, &["preset", "import", "/no/such/card.png"]);
    assert_eq!(e["code"], "not_found");
    assert_eq!(names(dir), ["Yui", "Kai", "Akari", "Ren"]);
}

/// A PNG card's picture becomes the look; a SillyTavern pack in the folder beside the card,
/// named as the card, comes with it; `yui vocab sprites` shows the mapping it made.
#[test]
fn preset_import_keeps_the_picture_and_the_pack_beside_the_card() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let cards = tempfile::tempdir().unwrap();
    let card = cards.path().join("akari.png");
    std::fs::copy(fixture("akari.png"), &card).unwrap();
    let pack = cards.path().join("akari");
    std::fs::create_dir(&pack).unwrap();
    for (label, rgb) in [("joy", [250, 200, 0]), ("sadness", [0, 0, 250])] {
        image::RgbaImage::from_pixel(400, 600, image::Rgba([rgb[0], rgb[1], rgb[2], 255]))
            .save(pack.join(format!("{label}.png")))
            .unwrap();
    }
    let akari = ok(dir, &["preset", "import", card.to_str().unwrap()]);
    assert_eq!(akari["picture"], true, "{akari}");
    assert_eq!(akari["pack"]["images"], 2, "{akari}");
    let look = dir.join("looks").join("akari");
    assert_eq!(akari["avatar"]["kind"], "sprites");
    assert_eq!(
        akari["avatar"]["dir"],
        look.join("sprites").display().to_string()
    );
    assert_eq!(
        akari["avatar"]["picture"],
        look.join("picture.png").display().to_string()
    );
    let mapping = ok(
        dir,
        &["vocab", "sprites", look.join("sprites").to_str().unwrap()],
    );
    assert_eq!(mapping["mapping"]["happy"], "joy.png", "{mapping}");
    assert_eq!(mapping["mapping"]["sad"], "sadness.png");
    assert!(mapping["missing"]
        .as_array()
        .unwrap()
        .contains(&json!("neutral")));

    // --no-sprites: the picture only; removing the character removes its look folder.
    ok(dir, &["preset", "remove", "akari", "--yes"]);
    assert!(!look.exists());
    let again = ok(
        dir,
        &["preset", "import", card.to_str().unwrap(), "--no-sprites"],
    );
    assert_eq!(again["avatar"]["kind"], "picture", "{again}");
    assert!(again["pack"].is_null());
}

#[test]
fn transcript_prints_json_lines_in_pages() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    ok(dir, &["preset", "list"]);
    let store = yui_core::Store::open(dir.join(yui_core::paths::DB_FILE)).unwrap();
    for i in 0..5 {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        transcript::append(
            &store,
            "kai",
            role,
            &format!("line {i}"),
            Some("t"),
            chrono_now(),
        )
        .unwrap();
    }
    transcript::append(&store, "yui", Role::User, "not Kai's", None, chrono_now()).unwrap();
    drop(store);

    let lines = |args: &[&str]| -> Vec<Value> {
        let out = yui(dir, args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).expect("each line is JSON"))
            .collect()
    };
    let all = lines(&["transcript", "--preset", "kai"]);
    assert_eq!(all.len(), 5);
    assert_eq!(all[0]["text"], "line 0");
    assert_eq!(all[0]["role"], "user");
    assert_eq!(all[1]["role"], "assistant");
    assert_eq!(all[0]["preset_id"], "kai");
    assert!(all[0]["at"]
        .as_str()
        .unwrap()
        .starts_with("2026-12-01T09:30:00"));

    let last2 = lines(&["transcript", "--preset", "kai", "--limit", "2"]);
    let texts = |v: &[Value]| {
        v.iter()
            .map(|e| e["text"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(texts(&last2), ["line 3", "line 4"]);
    let before = last2[0]["id"].to_string();
    let older = lines(&[
        "transcript",
        "--preset",
        "kai",
        "--limit",
        "2",
        "--before",
        &before,
    ]);
    assert_eq!(texts(&older), ["line 1", "line 2"]);
    assert!(lines(&[
        "transcript",
        "--preset",
        "kai",
        "--before",
        &all[0]["id"].to_string()
    ])
    .is_empty());

    let out = yui(dir, &["transcript", "--preset", "kai", "--limit", "0"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
}

#[test]
fn preset_choices_prints_what_a_character_may_be_given() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let c = ok(dir, &["preset", "choices"]);
    assert_eq!(
        c["voice_types"],
        serde_json::json!(yui_core::presets::VOICE_TYPES)
    );
    assert_eq!(
        c["palettes"],
        serde_json::json!(yui_core::presets::PALETTES)
    );
    // The next character is the third (after Yui and Kai): `preset add` without a palette gives it
    // the palette `choices` named.
    let next = c["next_palette"].clone();
    let mio = ok(dir, &["preset", "add", "Mio"]);
    assert_eq!(mio["avatar"]["palette"], next);
}
