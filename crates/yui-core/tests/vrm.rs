//! VRM looks: models of both versions read (meta, licence, expressions), each emotion's face
//! and its fallbacks, mouth shapes and blink; refusals that change nothing (not a VRM, too big,
//! textures too big for memory); textures scaled once at import; a new character from a model,
//! a model for a character, deleting it. Generated humanoid fixtures (yui-testkit's `vrm`), the
//! VRM specification's sample, real files in temp dirs, a real SQLite store.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use yui_core::looks;
use yui_core::presets::{self, NewPreset};
use yui_core::vocab::Vocab;
use yui_core::vrm::expressions::{self, Source};
use yui_core::vrm::meta::VrmVersion;
use yui_core::vrm::{self, look};
use yui_core::Store;
use yui_testkit::vrm::{Fixture, Version, ALL_PRESETS};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("yui.db")).expect("open");
    (dir, store)
}

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/vrm/expressions_isBinary_Overrides.vrm")
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn names(model: &vrm::Model) -> Vec<String> {
    model.expressions.iter().map(|e| e.name.clone()).collect()
}

/// The face of `emotion` as (expression, weight) pairs and its source.
fn face(model: &vrm::Model, emotion: &str) -> (Vec<(String, f64)>, Source) {
    let f = expressions::face_for(emotion, &model.expressions);
    (
        f.expressions
            .into_iter()
            .map(|w| (w.name, w.weight))
            .collect(),
        f.source,
    )
}

fn pairs(items: &[(&str, f64)]) -> Vec<(String, f64)> {
    items.iter().map(|(n, w)| (n.to_string(), *w)).collect()
}

#[test]
fn generated_fixtures_are_small_humanoids_with_every_expression_on_both_versions() {
    for version in [Version::V1, Version::V0] {
        let bytes = Fixture::full(version).build();
        assert!(
            bytes.len() < 16 * 1024,
            "{version:?}: {} bytes",
            bytes.len()
        );
        let (_, model) = vrm::read(&bytes, "fixture.vrm").unwrap();
        assert_eq!(model.bones, 20);
        assert!(model.textures.is_empty());
        let mut got = names(&model);
        got.sort();
        let mut want: Vec<String> = ALL_PRESETS.iter().map(|s| s.to_string()).collect();
        if version == Version::V0 {
            // 0.x has no `surprised` preset: VRoid Studio's custom "Surprised" stands in.
            want.retain(|n| n != "surprised");
            want.push("Surprised".into());
        }
        want.sort();
        assert_eq!(got, want, "{version:?}");
    }
}

#[test]
fn vrm_1_meta_and_licence_come_in_plain_words() {
    let (_, model) = vrm::read(&std::fs::read(sample()).unwrap(), "sample").unwrap();
    let meta = &model.meta;
    assert_eq!(meta.vrm, VrmVersion::V1);
    assert_eq!(meta.name, "isBinary overrides");
    assert_eq!(meta.authors, vec!["pixiv Inc.".to_string()]);
    assert_eq!(meta.version.as_deref(), Some("v1.0.0"));
    assert_eq!(names(&model), vec!["happy", "blink"]);
    assert_eq!(model.textures.len(), 3);
    let lines = meta.licence.lines();
    for want in [
        "Licence: VRM Public License 1.0",
        "Avatar use: everyone",
        "Commercial use: allowed, companies included",
        "Redistribution: allowed",
        "Modification: allowed, and changed copies may be passed on",
        "Credit: not needed",
        "Excessively violent use: allowed",
        "Licence page: https://vrm.dev/licenses/1.0/",
    ] {
        assert!(lines.contains(&want.to_string()), "{want} not in {lines:?}");
    }
    // The specification's defaults: a 1.0 meta that says little allows little.
    let strict = vrm::meta::v1(&json!({"name": "x", "authors": ["a"], "licenseUrl": "u"}));
    assert_eq!(strict.licence.avatar_use, "only the author");
    assert_eq!(
        strict.licence.commercial,
        "not allowed (personal, non-profit use only)"
    );
    assert_eq!(strict.licence.redistribution, "not allowed");
    assert_eq!(strict.licence.credit, "required");
}

#[test]
fn vrm_0_meta_and_licence_names_become_the_same_plain_words() {
    let mut f = Fixture::full(Version::V0);
    f.meta = Some(json!({"title": "Mika", "author": "Aoi", "version": "2.1",
        "allowedUserName": "ExplicitlyLicensedPerson", "commercialUssageName": "Allow",
        "violentUssageName": "Disallow", "sexualUssageName": "Disallow",
        "licenseName": "CC_BY_NC_ND", "otherPermissionUrl": "https://example.org/terms"}));
    let (_, model) = vrm::read(&f.build(), "mika.vrm").unwrap();
    let m = &model.meta;
    assert_eq!(m.vrm, VrmVersion::V0);
    assert_eq!(
        (m.name.as_str(), m.authors.clone()),
        ("Mika", vec!["Aoi".to_string()])
    );
    let l = &m.licence;
    assert_eq!(l.name, "CC BY-NC-ND");
    assert_eq!(l.avatar_use, "only people the author licenses separately");
    // NC wins over the usage field.
    assert_eq!(l.commercial, "not allowed");
    assert_eq!(l.modification, "not allowed");
    assert_eq!(l.credit, "required");
    assert_eq!(l.violent_use, "not allowed");
    assert_eq!(l.other_terms.as_deref(), Some("https://example.org/terms"));
    let cc0 = vrm::meta::v0(&json!({"licenseName": "CC0", "allowedUserName": "Everyone"}));
    assert_eq!(
        (
            cc0.licence.credit.as_str(),
            cc0.licence.redistribution.as_str()
        ),
        ("not needed", "allowed")
    );
}

#[test]
fn every_emotion_maps_to_the_models_own_expression_on_both_versions() {
    for version in [Version::V1, Version::V0] {
        let (_, model) = vrm::read(&Fixture::full(version).build(), "f").unwrap();
        for emotion in ["neutral", "happy", "sad", "angry", "surprised"] {
            let (set, source) = face(&model, emotion);
            assert_eq!(source, Source::Own, "{version:?} {emotion}");
            assert_eq!(set.len(), 1);
            assert!(
                set[0].0.eq_ignore_ascii_case(emotion),
                "{version:?} {emotion}: {set:?}"
            );
        }
        // The vocabulary's emotions no VRM preset names: the nearest faces.
        assert_eq!(
            face(&model, "shy"),
            (pairs(&[("relaxed", 0.6)]), Source::Nearest)
        );
        assert_eq!(
            face(&model, "sleepy"),
            (pairs(&[("relaxed", 0.5), ("blink", 0.5)]), Source::Nearest)
        );
        assert_eq!(
            face(&model, "thinking"),
            (pairs(&[("neutral", 1.0)]), Source::Nearest)
        );
    }
    // VRM 0.x names are the renderer's, and the look picker says where they come from.
    let (_, v0) = vrm::read(&Fixture::full(Version::V0).build(), "f").unwrap();
    let happy = expressions::face_for("happy", &v0.expressions);
    assert_eq!(happy.expressions[0].name, "happy");
    assert_eq!(happy.from, "the model's happy (VRM 0.x \"joy\") expression");
    let sad = expressions::face_for("sad", &v0.expressions);
    assert_eq!(sad.from, "the model's sad (VRM 0.x \"sorrow\") expression");
    let surprised = expressions::face_for("surprised", &v0.expressions);
    assert_eq!(surprised.expressions[0].name, "Surprised");
    assert_eq!(surprised.from, "the model's Surprised (custom) expression");
}

#[test]
fn a_missing_emotion_falls_back_to_the_nearest_expression_the_model_has() {
    for version in [Version::V1, Version::V0] {
        let few = Fixture::with(version, &["happy", "blink", "aa", "oh"]).build();
        let (_, m) = vrm::read(&few, "few").unwrap();
        assert_eq!(face(&m, "happy"), (pairs(&[("happy", 1.0)]), Source::Own));
        assert_eq!(
            face(&m, "surprised"),
            (pairs(&[("oh", 0.8)]), Source::Nearest),
            "{version:?}"
        );
        assert_eq!(face(&m, "shy"), (pairs(&[("happy", 0.5)]), Source::Nearest));
        assert_eq!(
            face(&m, "sleepy"),
            (pairs(&[("blink", 0.6)]), Source::Nearest)
        );
        for rest in ["neutral", "sad", "angry", "thinking"] {
            assert_eq!(face(&m, rest), (vec![], Source::Rest), "{version:?} {rest}");
        }
        let relaxed = Fixture::with(version, &["relaxed", "sad", "neutral"]).build();
        let (_, m) = vrm::read(&relaxed, "relaxed").unwrap();
        assert_eq!(
            face(&m, "happy"),
            (pairs(&[("relaxed", 1.0)]), Source::Nearest)
        );
        assert_eq!(face(&m, "angry"), (pairs(&[("sad", 0.5)]), Source::Nearest));
        assert_eq!(
            face(&m, "sleepy"),
            (pairs(&[("relaxed", 1.0)]), Source::Nearest)
        );
        assert_eq!(face(&m, "surprised"), (vec![], Source::Rest));
    }
    // A custom expression named as an emotion is that emotion's own face (any case); an
    // emotion the user added to the vocabulary falls back to neutral.
    let mut f = Fixture::with(Version::V1, &["neutral"]);
    f.custom = vec!["Shy".into(), "blush".into()];
    let (_, m) = vrm::read(&f.build(), "custom").unwrap();
    assert_eq!(face(&m, "shy"), (pairs(&[("Shy", 1.0)]), Source::Own));
    assert_eq!(face(&m, "blush"), (pairs(&[("blush", 1.0)]), Source::Own));
    assert_eq!(
        face(&m, "excited"),
        (pairs(&[("neutral", 1.0)]), Source::Nearest)
    );
}

#[test]
fn lip_sync_uses_the_mouth_shapes_the_model_has_and_blink_both_eyes_or_each() {
    for version in [Version::V1, Version::V0] {
        let (_, full) = vrm::read(&Fixture::full(version).build(), "f").unwrap();
        assert_eq!(
            expressions::visemes(&full.expressions),
            ["aa", "ih", "ou", "ee", "oh"]
        );
        assert_eq!(expressions::blink(&full.expressions), ["blink"]);
        let few = Fixture::with(version, &["oh", "aa", "blinkLeft", "blinkRight"]).build();
        let (_, few) = vrm::read(&few, "few").unwrap();
        assert_eq!(expressions::visemes(&few.expressions), ["aa", "oh"]);
        assert_eq!(
            expressions::blink(&few.expressions),
            ["blinkLeft", "blinkRight"]
        );
        let (_, none) = vrm::read(&Fixture::with(version, &["happy"]).build(), "n").unwrap();
        assert!(expressions::visemes(&none.expressions).is_empty());
        assert!(expressions::blink(&none.expressions).is_empty());
    }
}

/// A PNG file that is only its header: `w`×`h` as IHDR says, an empty IDAT and IEND. Enough for
/// a size check that must not decode.
fn png_header(w: u32, h: u32) -> Vec<u8> {
    fn crc(bytes: &[u8]) -> u32 {
        let mut c = !0u32;
        for &b in bytes {
            c ^= b as u32;
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    (c >> 1) ^ 0xEDB8_8320
                } else {
                    c >> 1
                };
            }
        }
        !c
    }
    let chunk = |kind: &[u8; 4], data: &[u8]| {
        let mut out = (data.len() as u32).to_be_bytes().to_vec();
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc(&body).to_be_bytes());
        out
    };
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &ihdr));
    png.extend(chunk(b"IDAT", &[]));
    png.extend(chunk(b"IEND", &[]));
    png
}

fn real_png(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbaImage::from_fn(w, h, |x, y| {
        image::Rgba([(x % 256) as u8, (y % 256) as u8, 90, 255])
    });
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

/// Import `file` as a new character, expecting a refusal; nothing is created.
fn refused(store: &Store, data: &Path, file: &Path) -> String {
    let before = presets::list(store).unwrap().len();
    let e = look::import_new(store, data, file, None, false).unwrap_err();
    assert_eq!(
        presets::list(store).unwrap().len(),
        before,
        "a character was made"
    );
    assert!(
        !data.join("looks").exists()
            || std::fs::read_dir(data.join("looks"))
                .unwrap()
                .next()
                .is_none()
    );
    assert!(!e.message.contains('\n'), "one sentence: {}", e.message);
    e.message
}

#[test]
fn a_file_that_is_not_a_usable_vrm_is_refused_in_one_sentence_and_changes_nothing() {
    let (dir, store) = store();
    let data = dir.path().join("data");
    let d = dir.path();
    let m = refused(&store, &data, &write(d, "notes.vrm", b"hello, not a model"));
    assert_eq!(
        m,
        "notes.vrm is not a VRM model: it does not start like a glTF binary file"
    );
    let vrma = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vrm/test.vrma");
    let m = refused(&store, &data, &vrma);
    assert_eq!(
        m,
        "test.vrma is a glTF model but not a VRM model (it has no VRM extension)"
    );
    let cut = Fixture::full(Version::V1).build();
    let m = refused(&store, &data, &write(d, "cut.vrm", &cut[..cut.len() / 2]));
    assert_eq!(
        m,
        "cut.vrm is not a VRM model: it is cut short or its chunks do not add up"
    );
    let m = refused(&store, &data, &d.join("missing.vrm"));
    assert!(m.starts_with("cannot read "), "{m}");

    // Over 100 MB: refused from its size, before it is read (a sparse file).
    let big = d.join("big.vrm");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(vrm::MAX_FILE_BYTES + 1)
        .unwrap();
    let m = refused(&store, &data, &big);
    assert!(
        m.ends_with("is 100.0 MB; a VRM model may be at most 100 MB"),
        "{m}"
    );

    // Textures too big for memory: one over 8192 px a side, or all of them over 1 GB decoded;
    // measured from their headers, nothing decoded.
    let mut f = Fixture::full(Version::V1);
    f.images = vec![png_header(9000, 16)];
    let m = refused(&store, &data, &write(d, "wide.vrm", &f.build()));
    assert_eq!(
        m,
        "wide.vrm has a texture of 9000×16 pixels, too big to load (at most 8192 a side)"
    );
    f.images = vec![png_header(8192, 8192); 5];
    let m = refused(&store, &data, &write(d, "heavy.vrm", &f.build()));
    assert_eq!(m, "heavy.vrm has textures that need 1280 MB of memory once decoded, more than the 1024 MB YUI allows");

    // Giving an existing character a bad model leaves its look as it was.
    let p = presets::create(
        &store,
        &NewPreset {
            name: "Aya".into(),
            persona: None,
            avatar: None,
            voice: None,
            open: false,
        },
    )
    .unwrap();
    let e = look::set_for(&store, &data, &p.id, &d.join("notes.vrm")).unwrap_err();
    assert!(e.message.contains("not a VRM model"));
    assert_eq!(presets::get(&store, &p.id).unwrap().avatar, p.avatar);
    assert!(!look::file_for(&data, &p.id).exists());
}

#[test]
fn textures_larger_than_a_window_can_show_are_scaled_once_at_import() {
    let (dir, store) = store();
    let data = dir.path().join("data");
    let mut f = Fixture::full(Version::V0);
    f.images = vec![real_png(2048, 1024), real_png(256, 256)];
    let src = write(dir.path(), "big-textures.vrm", &f.build());
    let made = look::import_new(&store, &data, &src, None, false).unwrap();
    let t = &made.model.textures;
    assert_eq!(
        (t[0].width, t[0].height, t[0].scaled_to),
        (2048, 1024, Some((1024, 512)))
    );
    assert_eq!((t[1].width, t[1].height, t[1].scaled_to), (256, 256, None));
    // The kept file is a valid VRM with the smaller texture and everything else as it was.
    let kept = std::fs::read(look::file_for(&data, &made.preset.id)).unwrap();
    assert!(kept.len() < std::fs::metadata(&src).unwrap().len() as usize);
    let (glb, model) = vrm::read(&kept, "kept").unwrap();
    let dims: Vec<(u32, u32)> = model.textures.iter().map(|t| (t.width, t.height)).collect();
    assert_eq!(dims, [(1024, 512), (256, 256)]);
    assert_eq!(
        model.expressions,
        vrm::read(&f.build(), "src").unwrap().1.expressions
    );
    let views = glb.json["bufferViews"].as_array().unwrap();
    for v in views {
        let end = v["byteOffset"].as_u64().unwrap() + v["byteLength"].as_u64().unwrap();
        assert!(end as usize <= glb.bin.len());
        assert_eq!(v["byteOffset"].as_u64().unwrap() % 4, 0);
    }
    // The BIN chunk is the buffer padded to 4 bytes.
    let declared = glb.json["buffers"][0]["byteLength"].as_u64().unwrap() as usize;
    assert!(declared <= glb.bin.len() && glb.bin.len() - declared < 4);
    // The geometry survived the rebuild: the face's first position is the generator's.
    let pos = glb.json["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
        .as_u64()
        .unwrap() as usize;
    let view = glb.json["accessors"][pos]["bufferView"].as_u64().unwrap() as usize;
    let bytes = vrm::glb::view(&glb.json, &glb.bin, view).unwrap();
    let x = f32::from_le_bytes(bytes[..4].try_into().unwrap());
    assert_eq!(x, 0.1); // the box's first corner, mirrored for 0.x
}

#[test]
fn a_model_becomes_a_new_character_with_its_licence_and_goes_with_it() {
    let (dir, store) = store();
    let data = dir.path().join("data");
    let made = look::import_new(&store, &data, &sample(), None, false).unwrap();
    assert_eq!(made.preset.name, "isBinary overrides");
    let file = look::file_for(&data, &made.preset.id);
    assert!(file.is_file());
    assert_eq!(made.preset.avatar["kind"], "vrm");
    assert_eq!(made.preset.avatar["file"], json!(file));
    assert_eq!(made.preset.avatar["fallback"]["kind"], "builtin");
    assert!(made.licence.contains(&"Avatar use: everyone".to_string()));
    // The look picker offers the model, current, with its name.
    let offered = looks::offer(&data, &made.preset);
    let vrm_option = offered.iter().find(|o| o.id == "vrm").expect("vrm offered");
    assert!(vrm_option.current);
    assert_eq!(vrm_option.label, "VRM model: isBinary overrides");
    // What a window draws: one face per emotion of the vocabulary.
    let look = vrm::look_of(&file, &Vocab::default()).unwrap();
    assert_eq!(look.faces.len(), 8);
    assert_eq!(look.blink, ["blink"]);
    // A second import of the same model needs another name; `name` gives one.
    let again = look::import_new(&store, &data, &sample(), None, false).unwrap_err();
    assert!(
        again.message.contains("already exists"),
        "{}",
        again.message
    );
    let named = look::import_new(&store, &data, &sample(), Some("Sample Two"), false).unwrap();
    assert_eq!(named.preset.name, "Sample Two");
    // Deleting the character deletes its model.
    looks::delete_character(&store, &data, &made.preset.id).unwrap();
    assert!(!file.exists());
    assert!(look::file_for(&data, &named.preset.id).is_file());
}

#[test]
fn a_character_given_a_model_keeps_its_previous_look_as_the_fallback() {
    let (dir, store) = store();
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
    let src = write(dir.path(), "ren.vrm", &Fixture::full(Version::V1).build());
    let set = look::set_for(&store, &data, &p.id, &src).unwrap();
    assert_eq!(set.preset.name, "Ren");
    assert_eq!(
        set.preset.avatar["fallback"],
        json!({"kind": "builtin", "palette": "mint"})
    );
    assert_eq!(set.model.meta.name, "Fixture One");
    // Another model replaces it and keeps the same fallback (never a VRM inside a VRM).
    let other = write(dir.path(), "zero.vrm", &Fixture::full(Version::V0).build());
    let set = look::set_for(&store, &data, &p.id, &other).unwrap();
    assert_eq!(
        set.preset.avatar["fallback"],
        json!({"kind": "builtin", "palette": "mint"})
    );
    assert_eq!(
        vrm::meta_of(&look::file_for(&data, &p.id)).unwrap().name,
        "Fixture Zero"
    );
    // The stored avatar is checked like every look.
    let bad: Value = json!({"kind": "vrm", "file": "relative.vrm"});
    assert!(presets::check_avatar(&bad).is_err());
    let nested = json!({"kind": "vrm", "file": set.preset.avatar["file"], "fallback": {"kind": "vrm", "file": set.preset.avatar["file"]}});
    assert!(presets::check_avatar(&nested).is_err());
    presets::check_avatar(&set.preset.avatar).unwrap();
}
