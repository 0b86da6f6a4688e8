//! Characters look like themselves: a card's picture kept at import (PNG V2 and V3 cards made
//! here, JSON cards that embed or name a picture), scaled once into the data dir; SillyTavern
//! expression packs mapped onto the vocabulary's emotions; the looks offered to the picker.
//! Real image files in temp dirs, a real SQLite store.

use base64::Engine as _;
use serde_json::{json, Value};
use std::path::Path;
use yui_core::looks::{self, CardImport};
use yui_core::presets;
use yui_core::sprite_labels::SILLYTAVERN_LABELS;
use yui_core::sprites::{self, load_sprite_set, MAX_FILE_BYTES};
use yui_core::vocab::Vocab;
use yui_core::Store;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("yui.db")).expect("open");
    (dir, store)
}

/// CRC-32 as PNG uses it (written out here so the test does not trust the code under test).
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

fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    out.extend_from_slice(&crc(&body).to_be_bytes());
    out
}

/// A real `w`×`h` PNG, pink on top and black below (a portrait), encoded by the `image` crate.
fn portrait(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbaImage::from_fn(w, h, |_, y| {
        if y < h / 2 {
            image::Rgba([240, 130, 180, 255])
        } else {
            image::Rgba([10, 10, 10, 255])
        }
    });
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    png
}

fn card(spec: &str, name: &str) -> Value {
    json!({"spec": spec, "spec_version": "2.0", "data": {
        "name": name, "description": "{{char}} tends a forest glade.", "personality": "kind"}})
}

/// A PNG card as SillyTavern writes it: the picture with the card's JSON in a text chunk.
fn png_card(picture: &[u8], key: &str, card: &Value) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(card.to_string());
    let text = chunk(b"tEXt", format!("{key}\0{b64}").as_bytes());
    let iend = picture.len() - 12;
    let mut out = picture[..iend].to_vec();
    out.extend_from_slice(&text);
    out.extend_from_slice(&picture[iend..]);
    out
}

fn import(store: &Store, data: &Path, bytes: &[u8]) -> looks::Imported {
    looks::import_card(
        store,
        data,
        &CardImport {
            bytes,
            open: false,
            card_dir: None,
            sprites: None,
        },
    )
    .unwrap()
}

/// The picture look's file: in the data dir, scaled into the look's box, still a portrait.
fn assert_kept_picture(data: &Path, p: &presets::Preset) {
    assert_eq!(p.avatar["kind"], "picture", "{}", p.avatar);
    let file = Path::new(p.avatar["file"].as_str().unwrap());
    assert_eq!(file, looks::dir_for(data, &p.id).join("picture.png"));
    let img = image::open(file).expect("a real PNG in the data dir");
    assert!(img.width() <= looks::LOOK_WIDTH && img.height() <= looks::LOOK_HEIGHT);
    assert_eq!(
        img.height(),
        looks::LOOK_HEIGHT,
        "a tall picture fills the height"
    );
    assert_eq!(img.width(), 160, "in proportion (600×900 → 160×240)");
    let top = img.to_rgba8().get_pixel(80, 10).0;
    assert!(
        top[0] > 200 && top[2] > 150,
        "the top is still pink: {top:?}"
    );
    // The window's set: the picture, no emotion of its own.
    let set = sprites::for_avatar(&p.avatar, &Vocab::default())
        .unwrap()
        .unwrap();
    assert!(set
        .picture
        .as_deref()
        .unwrap()
        .starts_with("data:image/png;base64,iVBORw0KGgo"));
    assert!(set.emotions.is_empty());
    assert!(set.skipped.is_empty(), "{:?}", set.skipped);
}

#[test]
fn a_png_v2_card_keeps_its_picture_scaled_into_the_data_dir() {
    let (dir, store) = store();
    let big = portrait(600, 900);
    let bytes = png_card(&big, "chara", &card("chara_card_v2", "Seraphina"));
    let imported = import(&store, dir.path(), &bytes);
    assert!(imported.picture, "{:?}", imported.notes);
    assert!(imported.notes.is_empty(), "{:?}", imported.notes);
    assert_eq!(imported.preset.name, "Seraphina");
    assert_kept_picture(dir.path(), &imported.preset);
    let stored = presets::get(&store, "seraphina").unwrap();
    assert_eq!(stored.avatar, imported.preset.avatar);
    let kept = std::fs::metadata(stored.avatar["file"].as_str().unwrap()).unwrap();
    assert!(
        kept.len() < (big.len() as u64),
        "scaled: {} bytes",
        kept.len()
    );
    // Flattened for the CLI and the settings window: the preset's fields at the top.
    let v = serde_json::to_value(&imported).unwrap();
    assert_eq!(v["name"], "Seraphina");
    assert_eq!(v["picture"], true);

    // Back to a built-in palette at any time; the picture stays on offer.
    let offer = looks::offer(dir.path(), &stored);
    assert!(offer.iter().any(|o| o.id == "picture" && o.current));
    let rose = offer.iter().find(|o| o.id == "palette:rose").unwrap();
    assert!(!rose.current);
    let p = presets::update(
        &store,
        "seraphina",
        &presets::PresetUpdate {
            avatar: Some(rose.avatar.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(p.avatar, json!({"kind": "builtin", "palette": "rose"}));
    let offer = looks::offer(dir.path(), &p);
    assert!(offer.iter().any(|o| o.id == "palette:rose" && o.current));
    assert!(offer.iter().any(|o| o.id == "picture" && !o.current));
    assert_eq!(offer.len(), presets::PALETTES.len() + 1);

    // Deleting the character removes its look folder.
    presets::delete(&store, "seraphina").unwrap();
    looks::remove(dir.path(), "seraphina");
    assert!(!looks::dir_for(dir.path(), "seraphina").exists());
}

#[test]
fn a_png_v3_card_keeps_its_picture() {
    let (dir, store) = store();
    let bytes = png_card(&portrait(600, 900), "ccv3", &card("chara_card_v3", "Sora"));
    let imported = import(&store, dir.path(), &bytes);
    assert!(imported.picture);
    assert_kept_picture(dir.path(), &imported.preset);
}

#[test]
fn a_json_card_with_an_embedded_picture_keeps_it() {
    let (dir, store) = store();
    let mut c = card("chara_card_v3", "Ren");
    let url = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(portrait(600, 900))
    );
    c["data"]["assets"] = json!([
        {"type": "background", "uri": "data:image/png;base64,AAAA", "name": "bg", "ext": "png"},
        {"type": "icon", "uri": "https://example.invalid/ren.png", "name": "alt", "ext": "png"},
        {"type": "icon", "uri": url, "name": "main", "ext": "png"}
    ]);
    let imported = import(&store, dir.path(), c.to_string().as_bytes());
    assert!(imported.picture, "{:?}", imported.notes);
    assert_kept_picture(dir.path(), &imported.preset);
}

#[test]
fn a_json_card_naming_a_picture_beside_it_keeps_it_when_its_folder_is_known() {
    let (dir, store) = store();
    let cards_dir = tempfile::tempdir().unwrap();
    std::fs::write(cards_dir.path().join("mio.png"), portrait(600, 900)).unwrap();
    let mut c = card("chara_card_v2", "Mio");
    c["avatar"] = json!("mio.png");
    let bytes = c.to_string();
    let imported = looks::import_card(
        &store,
        dir.path(),
        &CardImport {
            bytes: bytes.as_bytes(),
            open: false,
            card_dir: Some(cards_dir.path()),
            sprites: None,
        },
    )
    .unwrap();
    assert!(imported.picture, "{:?}", imported.notes);
    assert_kept_picture(dir.path(), &imported.preset);

    // Without the folder (the settings window gets no path) the character is still made, with
    // a palette, and the note says why.
    let mut c = card("chara_card_v2", "Mio Two");
    c["data"]["avatar"] = json!("mio.png");
    let imported = import(&store, dir.path(), c.to_string().as_bytes());
    assert!(!imported.picture);
    assert_eq!(imported.preset.avatar["kind"], "builtin");
    assert!(
        imported.notes[0].contains("names its picture mio.png"),
        "{:?}",
        imported.notes
    );

    // A path that leaves the folder is not followed.
    c["name"] = json!("Mio Three");
    c["data"]["name"] = json!("Mio Three");
    c["data"]["avatar"] = json!("../../etc/secret.png");
    assert!(yui_core::cards::picture_of(c.to_string().as_bytes()).is_none());
}

#[test]
fn a_broken_or_huge_picture_is_a_note_and_the_character_is_still_made() {
    let (dir, store) = store();
    let mut c = card("chara_card_v3", "Glitch");
    c["data"]["assets"] = json!([{"type": "icon", "name": "main",
        "uri": format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\nnot really"))}]);
    let imported = import(&store, dir.path(), c.to_string().as_bytes());
    assert!(!imported.picture);
    assert_eq!(imported.preset.avatar["kind"], "builtin");
    assert!(
        imported.notes[0].contains("not used"),
        "{:?}",
        imported.notes
    );
    assert!(!looks::dir_for(dir.path(), "glitch")
        .join("picture.png")
        .exists());

    // A picture whose header claims 20000×20000 pixels is refused before it is decoded.
    let mut huge = portrait(4, 4);
    huge[16..20].copy_from_slice(&20_000u32.to_be_bytes());
    huge[20..24].copy_from_slice(&20_000u32.to_be_bytes());
    let ihdr_crc = crc(&huge[12..29]);
    huge[29..33].copy_from_slice(&ihdr_crc.to_be_bytes());
    assert!(looks::scale(&huge).is_err());
}

fn write_png(path: &Path, w: u32, h: u32, rgb: [u8; 3]) {
    image::RgbaImage::from_pixel(w, h, image::Rgba([rgb[0], rgb[1], rgb[2], 255]))
        .save_with_format(path, image::ImageFormat::Png)
        .unwrap();
}

/// The colour a label's file is drawn in, so a test can tell which file an emotion took.
fn colour(i: usize) -> [u8; 3] {
    [i as u8 * 9, 255 - i as u8 * 9, 100]
}

#[test]
fn a_sillytavern_pack_maps_onto_every_emotion_and_loads_the_rest_as_extra_ids() {
    let pack = tempfile::tempdir().unwrap();
    for (i, label) in SILLYTAVERN_LABELS.iter().enumerate() {
        write_png(&pack.path().join(format!("{label}.png")), 6, 6, colour(i));
    }
    let vocab = Vocab::default();
    let set = load_sprite_set(pack.path(), &vocab).unwrap();
    assert!(
        set.missing.is_empty(),
        "every emotion has an image: {:?}",
        set.missing
    );
    for e in &vocab.emotions {
        assert!(set.emotions.contains_key(&e.id), "{}", e.id);
    }
    let expect = [
        ("neutral", "neutral.png"),
        ("happy", "joy.png"),
        ("sad", "sadness.png"),
        ("angry", "anger.png"),
        ("surprised", "surprise.png"),
        ("shy", "embarrassment.png"),
        ("sleepy", "relief.png"),
        ("thinking", "curiosity.png"),
    ];
    for (id, file) in expect {
        assert_eq!(set.sources[id], file, "{id}");
    }
    // The labels that stood in are not loaded twice; the others are extra ids.
    for taken in [
        "joy",
        "sadness",
        "anger",
        "surprise",
        "embarrassment",
        "relief",
        "curiosity",
    ] {
        assert!(!set.emotions.contains_key(taken), "{taken}");
    }
    for extra in [
        "admiration",
        "amusement",
        "grief",
        "nervousness",
        "pride",
        "love",
    ] {
        assert_eq!(set.extra[extra], format!("{extra}.png"));
        assert!(
            !set.emotions.contains_key(extra),
            "named, not loaded: {extra}"
        );
    }
    assert_eq!(
        set.emotions.len(),
        8,
        "only the vocabulary's ids are loaded"
    );
    assert_eq!(set.extra.len(), 28 - 8, "the labels no id took");
    // Once the vocabulary has an extra id, its image loads.
    let mut more = Vocab::default();
    let mut pride = more.emotions[0].clone();
    pride.id = "pride".into();
    more.emotions.push(pride);
    let set = load_sprite_set(pack.path(), &more).unwrap();
    assert_eq!(set.sources["pride"], "pride.png");
    assert!(set.emotions["pride"].starts_with("data:image/png;base64,"));
    assert!(set.skipped.is_empty());
}

#[test]
fn own_names_come_first_and_missing_labels_fall_back_to_the_built_in_face() {
    let pack = tempfile::tempdir().unwrap();
    write_png(&pack.path().join("happy.png"), 6, 6, [1, 2, 3]);
    write_png(&pack.path().join("joy.png"), 6, 6, [4, 5, 6]);
    write_png(&pack.path().join("grief.png"), 6, 6, [7, 8, 9]);
    let set = load_sprite_set(pack.path(), &Vocab::default()).unwrap();
    assert_eq!(set.sources["happy"], "happy.png", "YUI's own name wins");
    assert_eq!(set.extra["joy"], "joy.png", "then joy is an extra id");
    assert_eq!(
        set.sources["sad"], "grief.png",
        "a later stand-in when the first is missing"
    );
    assert_eq!(
        set.missing,
        vec!["neutral", "angry", "surprised", "shy", "sleepy", "thinking"],
        "no label for these: the built-in face"
    );
    assert!(set.picture.is_none());
}

#[test]
fn a_card_with_a_pack_copies_it_scaled_skipping_broken_and_oversized_files() {
    let (dir, store) = store();
    let pack = tempfile::tempdir().unwrap();
    write_png(&pack.path().join("joy.png"), 800, 1200, [250, 200, 0]);
    write_png(&pack.path().join("neutral.png"), 50, 60, [0, 0, 250]);
    std::fs::write(pack.path().join("anger.png"), b"not a picture").unwrap();
    std::fs::write(
        pack.path().join("sadness.png"),
        vec![0u8; MAX_FILE_BYTES as usize + 1],
    )
    .unwrap();
    std::fs::write(pack.path().join("motion-wave.webp"), {
        let mut b = Vec::new();
        image::RgbaImage::from_pixel(300, 300, image::Rgba([1, 1, 1, 255]))
            .write_to(&mut std::io::Cursor::new(&mut b), image::ImageFormat::WebP)
            .unwrap();
        b
    })
    .unwrap();
    let bytes = png_card(
        &portrait(600, 900),
        "chara",
        &card("chara_card_v2", "Seraphina"),
    );
    let imported = looks::import_card(
        &store,
        dir.path(),
        &CardImport {
            bytes: &bytes,
            open: false,
            card_dir: None,
            sprites: Some(pack.path()),
        },
    )
    .unwrap();
    let p = &imported.preset;
    let pack_dir = looks::dir_for(dir.path(), &p.id).join("sprites");
    assert_eq!(
        p.avatar,
        json!({"kind": "sprites", "dir": pack_dir,
               "picture": looks::dir_for(dir.path(), &p.id).join("picture.png")})
    );
    let report = imported.pack.as_ref().unwrap();
    assert_eq!(report.images, 3);
    let skipped: Vec<&str> = report.skipped.iter().map(|s| s.file.as_str()).collect();
    assert_eq!(skipped, vec!["anger.png", "sadness.png"]);
    let joy = image::open(pack_dir.join("joy.png")).unwrap();
    assert_eq!(
        (joy.width(), joy.height()),
        (160, 240),
        "scaled once, at import"
    );
    let small = image::open(pack_dir.join("neutral.png")).unwrap();
    assert_eq!(
        (small.width(), small.height()),
        (50, 60),
        "small images stay as they are"
    );
    assert_eq!(
        std::fs::read(pack_dir.join("motion-wave.webp")).unwrap(),
        std::fs::read(pack.path().join("motion-wave.webp")).unwrap(),
        "motion images are copied as they are"
    );

    // The window's set: the pack's images, and the card's picture for the rest.
    let set = sprites::for_avatar(&p.avatar, &Vocab::default())
        .unwrap()
        .unwrap();
    assert_eq!(set.sources["happy"], "joy.png");
    assert_eq!(set.sources["neutral"], "neutral.png");
    assert_eq!(
        set.sources["sleepy"], "neutral.png",
        "relief missing: neutral"
    );
    assert!(set.picture.is_some());
    assert!(set.motions.contains_key("wave"));
    assert!(set.missing.contains(&"angry".to_string()));
    let offer = looks::offer(dir.path(), p);
    let ids: Vec<&str> = offer.iter().map(|o| o.id.as_str()).collect();
    assert!(ids.ends_with(&["picture", "pack"]), "{ids:?}");
    assert!(offer.iter().any(|o| o.id == "pack" && o.current));
}

#[test]
fn a_folder_beside_the_card_named_as_the_card_is_found() {
    let cards = tempfile::tempdir().unwrap();
    let file = cards.path().join("Seraphina.png");
    std::fs::write(&file, b"x").unwrap();
    assert_eq!(looks::pack_beside(&file, "Seraphina"), None);
    std::fs::create_dir(cards.path().join("Seraphina")).unwrap();
    assert_eq!(
        looks::pack_beside(&file, "Seraphina"),
        Some(cards.path().join("Seraphina"))
    );
}
