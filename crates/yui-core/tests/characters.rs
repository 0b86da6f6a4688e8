//! Characters the user makes: create, edit and delete (one transaction, rolled back whole on a
//! failure mid-way), unique names, character card import (V2/V3 JSON, PNG with `chara`/`ccv3`,
//! malformed cards, duplicate names), the shared target-name helper as both tool enums see it,
//! and transcript paging. All on real SQLite files in temp dirs.

use base64::Engine as _;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use yui_core::cards;
use yui_core::clock::ManualClock;
use yui_core::presets::{self, NewPreset, PresetUpdate};
use yui_core::relations::{self, Target};
use yui_core::tools::registry::{RegistryEnv, ToolRegistry};
use yui_core::transcript::{self, Role};
use yui_core::turn::chain;
use yui_core::{ErrorCode, Store, WindowKind};

fn at() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-01T12:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("yui.db")).expect("open");
    (dir, store)
}

fn names(store: &Store) -> Vec<String> {
    presets::list(store)
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect()
}

fn count(dir: &tempfile::TempDir, sql: &str) -> i64 {
    let c = rusqlite::Connection::open(dir.path().join("yui.db")).unwrap();
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

// ---- create / edit ----

#[test]
fn create_with_look_and_voice_and_edit_it() {
    let (_d, store) = store();
    let mio = presets::create(
        &store,
        &NewPreset {
            name: "Mio".into(),
            persona: Some("You are Mio, a sleepy cat.".into()),
            avatar: Some(json!({"kind": "builtin", "palette": "mint"})),
            voice: Some(json!({"voice_type": "female2", "rate": -20, "pitch": 10})),
            open: true,
        },
    )
    .unwrap();
    assert_eq!(mio.id, "mio");
    assert!(mio.is_open && !mio.is_main);
    assert_eq!(mio.persona, "You are Mio, a sleepy cat.");
    assert_eq!(mio.avatar["palette"], "mint");
    assert_eq!(mio.voice["voice_type"], "female2");

    let sprites = tempfile::tempdir().unwrap();
    let dir = sprites.path().to_str().unwrap().to_string();
    let edited = presets::update(
        &store,
        "mio",
        &PresetUpdate {
            name: Some("Mio-chan".into()),
            avatar: Some(json!({"kind": "sprites", "dir": dir})),
            voice: Some(json!({})),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(edited.name, "Mio-chan");
    assert_eq!(edited.id, "mio", "the id stays when the name changes");
    assert_eq!(edited.avatar["kind"], "sprites");
    assert_eq!(edited.voice, json!({}));
    // Renaming to its own name in another case is not a clash with itself.
    presets::update(
        &store,
        "mio",
        &PresetUpdate {
            name: Some("MIO-CHAN".into()),
            ..Default::default()
        },
    )
    .unwrap();
}

#[test]
fn names_are_unique_ignoring_case_and_bad_fields_write_nothing() {
    let (_d, store) = store();
    for name in ["yui", "KAI", "  Kai "] {
        let e = presets::add(&store, name).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(e.message.contains("already exists"), "{}", e.message);
    }
    let e = presets::update(
        &store,
        "kai",
        &PresetUpdate {
            name: Some("YUI".into()),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.message.contains("already exists"), "{}", e.message);

    let bad = [
        (json!({"kind": "builtin", "palette": "neon"}), json!({})),
        (json!({"kind": "sprites", "dir": "relative/dir"}), json!({})),
        (
            json!({"kind": "sprites", "dir": "/no/such/folder"}),
            json!({}),
        ),
        (json!({"kind": "photo"}), json!({})),
        (
            json!({"kind": "builtin", "palette": "rose"}),
            json!({"voice_type": "robot"}),
        ),
        (
            json!({"kind": "builtin", "palette": "rose"}),
            json!({"rate": 300}),
        ),
        (
            json!({"kind": "builtin", "palette": "rose"}),
            json!({"engine": "x"}),
        ),
    ];
    for (avatar, voice) in bad {
        let e = presets::create(
            &store,
            &NewPreset {
                name: "Mio".into(),
                avatar: Some(avatar.clone()),
                voice: Some(voice.clone()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput, "{avatar} {voice}");
    }
    assert_eq!(names(&store), ["Yui", "Kai"], "nothing was created");
    // A preset named `user` is allowed: the tool enums list it as `user (character)`.
    assert_eq!(presets::add(&store, "user").unwrap().id, "user");
}

// ---- the shared name helper, as both enums see it ----

fn enum_of(schema: &Value, prop: &str) -> Value {
    schema["properties"][prop]["enum"].clone()
}

#[test]
fn both_tool_enums_list_a_preset_named_user_as_user_character() {
    let (_d, store) = store();
    let u = presets::add(&store, "user").unwrap();
    presets::open(&store, &u.id).unwrap();
    let env = RegistryEnv::load(&store, "yui", WindowKind::Main).unwrap();
    let reg = ToolRegistry::for_window(&env).unwrap();
    let toward = enum_of(&reg.get("rate_relation").unwrap().parameters(), "toward");
    let to = enum_of(&reg.get("address_character").unwrap().parameters(), "to");
    assert_eq!(toward, json!(["user", "Kai", "user (character)"]));
    assert_eq!(
        to,
        json!(["Kai", "user (character)"]),
        "the human is never a target"
    );
}

// ---- delete ----

/// Give `id` a transcript, relations both ways and a Responses chain.
fn history_for(store: &Store, id: &str) {
    transcript::append(store, id, Role::User, "hi", Some("t1"), at()).unwrap();
    transcript::append(store, id, Role::Assistant, "hello", Some("t1"), at()).unwrap();
    let clock = ManualClock::new(at(), 0);
    relations::set_by_hand(store, &clock, id, &Target::User, 5).unwrap();
    relations::set_by_hand(store, &clock, "yui", &Target::Preset(id.into()), -3).unwrap();
    relations::rate(
        store,
        &clock,
        id,
        &Target::Preset("yui".into()),
        1,
        "kind words",
        "t1",
    )
    .unwrap();
    chain::save(store, id, "resp_1", &[], at()).unwrap();
}

const KAI_ROWS: &str = "SELECT (SELECT COUNT(*) FROM transcript WHERE preset_id = 'kai')
  + (SELECT COUNT(*) FROM relations WHERE preset_id = 'kai' OR target_id = 'kai')
  + (SELECT COUNT(*) FROM relation_log WHERE preset_id = 'kai' OR target_id = 'kai')
  + (SELECT COUNT(*) FROM relation_turns WHERE preset_id = 'kai' OR target_id = 'kai')
  + (SELECT COUNT(*) FROM response_chain WHERE preset_id = 'kai')
  + (SELECT COUNT(*) FROM presets WHERE id = 'kai')";

#[test]
fn delete_removes_transcript_relations_and_chain() {
    let (dir, store) = store();
    history_for(&store, "kai");
    transcript::append(&store, "yui", Role::User, "mine", None, at()).unwrap();
    assert!(count(&dir, KAI_ROWS) >= 8);

    let gone = presets::delete(&store, "kai").unwrap();
    assert_eq!(gone.preset.id, "kai");
    assert_eq!(gone.transcript_lines, 2);
    assert_eq!(gone.chain_rows, 1);
    assert!(gone.relation_rows >= 4);
    assert_eq!(count(&dir, KAI_ROWS), 0);
    assert!(chain::load(&store, "kai").unwrap().is_none());
    // Yui's own history stays.
    assert_eq!(transcript::recent(&store, "yui", 10).unwrap().len(), 1);
    assert_eq!(names(&store), ["Yui"]);

    let e = presets::delete(&store, "kai").unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    let e = presets::delete(&store, "yui").unwrap_err();
    assert_eq!(
        e.code,
        ErrorCode::InvalidInput,
        "the main character is not deleted"
    );
    assert!(e.message.contains("main"), "{}", e.message);
}

#[test]
fn a_delete_that_fails_mid_way_leaves_everything() {
    let (dir, store) = store();
    history_for(&store, "kai");
    let before = count(&dir, KAI_ROWS);
    // A real failure after the transcript and relations were deleted inside the transaction:
    // the last statement (the preset row) aborts.
    let c = rusqlite::Connection::open(dir.path().join("yui.db")).unwrap();
    c.execute_batch(
        "CREATE TRIGGER no_delete BEFORE DELETE ON presets BEGIN SELECT RAISE(ABORT, 'disk says no'); END;",
    )
    .unwrap();
    let e = presets::delete(&store, "kai").unwrap_err();
    assert!(e.message.contains("disk says no"), "{}", e.message);
    assert_eq!(count(&dir, KAI_ROWS), before, "nothing half-done");
    assert_eq!(transcript::recent(&store, "kai", 10).unwrap().len(), 2);
    assert!(chain::load(&store, "kai").unwrap().is_some());
    assert_eq!(relations::value(&store, "kai", &Target::User).unwrap(), 5);
}

// ---- transcript paging ----

#[test]
fn transcript_pages_back_by_id_cursor() {
    let (_d, store) = store();
    let mut ids = Vec::new();
    for i in 0..7 {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        ids.push(
            transcript::append(&store, "kai", role, &format!("line {i}"), None, at()).unwrap(),
        );
    }
    transcript::append(&store, "yui", Role::User, "other preset", None, at()).unwrap();

    let p1 = transcript::page(&store, "kai", 3, None).unwrap();
    let texts = |p: &transcript::Page| p.entries.iter().map(|e| e.text.clone()).collect::<Vec<_>>();
    assert_eq!(texts(&p1), ["line 4", "line 5", "line 6"]);
    assert!(p1.more);
    // A line appended meanwhile does not shift the next page.
    transcript::append(&store, "kai", Role::User, "late", None, at()).unwrap();
    let p2 = transcript::page(&store, "kai", 3, Some(p1.entries[0].id)).unwrap();
    assert_eq!(texts(&p2), ["line 1", "line 2", "line 3"]);
    assert!(p2.more);
    let p3 = transcript::page(&store, "kai", 3, Some(p2.entries[0].id)).unwrap();
    assert_eq!(texts(&p3), ["line 0"]);
    assert!(!p3.more);
    let exact = transcript::page(&store, "kai", 1, Some(ids[1])).unwrap();
    assert_eq!(texts(&exact), ["line 0"]);
    assert!(!exact.more, "no line before the first");
    assert!(transcript::page(&store, "nobody", 5, None)
        .unwrap()
        .entries
        .is_empty());
}

// ---- card import ----

fn v2_card(name: &str) -> Value {
    json!({
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": name,
            "description": "{{char}} is a fox spirit who keeps {{user}} company.",
            "personality": "mischievous, loyal",
            "scenario": "A quiet evening at <USER>'s desk.",
            "first_mes": "*yawns* Oh, you're back, {{user}}!",
            "mes_example": "<START>\n{{char}}: hi",
            "system_prompt": "",
            "creator_notes": "not imported",
            "tags": ["fox"],
            "extensions": {}
        }
    })
}

#[test]
fn a_v2_json_card_maps_to_a_persona() {
    let (_d, store) = store();
    let bytes = serde_json::to_vec(&v2_card("Kitsune")).unwrap();
    let p = cards::import(&store, &bytes, false).unwrap();
    assert_eq!(p.name, "Kitsune");
    assert_eq!(p.id, "kitsune");
    assert!(!p.is_open);
    assert_eq!(
        p.persona,
        "You are Kitsune.\n\n\
         Kitsune is a fox spirit who keeps the user company.\n\n\
         Kitsune's personality: mischievous, loyal\n\n\
         Scenario: A quiet evening at the user's desk.\n\n\
         You opened the conversation with:\n*yawns* Oh, you're back, the user!\n\n\
         You now live on the user's desktop as a small character in YUI; keep replies brief."
    );
    assert!(!p.persona.contains("not imported"));
}

#[test]
fn a_v3_json_card_uses_its_system_prompt() {
    let (_d, store) = store();
    let card = json!({
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {
            "name": "Ren",
            "description": "A robot librarian.",
            "personality": "",
            "scenario": "",
            "first_mes": "",
            "system_prompt": "Stay in character as {{char}}.",
            "nickname": "Ren-bot",
            "group_only_greetings": [],
            "assets": []
        }
    });
    let p = cards::import(&store, card.to_string().as_bytes(), true).unwrap();
    assert_eq!(p.name, "Ren");
    assert!(p.is_open);
    assert!(
        p.persona
            .starts_with("Stay in character as Ren.\n\nA robot librarian.\n\n"),
        "{}",
        p.persona
    );
    assert!(
        !p.persona.contains("personality:"),
        "empty fields are left out"
    );
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

/// A real 4×4 PNG (encoded by the `image` crate) with `extra` chunks inserted before IEND, as
/// SillyTavern writes its cards.
fn png_with(extra: &[Vec<u8>]) -> Vec<u8> {
    let img = image::RgbaImage::from_pixel(4, 4, image::Rgba([200, 80, 120, 255]));
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let iend = png.len() - 12;
    let mut out = png[..iend].to_vec();
    for c in extra {
        out.extend_from_slice(c);
    }
    out.extend_from_slice(&png[iend..]);
    out
}

fn text_chunk(key: &str, card: &Value) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(card.to_string());
    chunk(b"tEXt", format!("{key}\0{b64}").as_bytes())
}

#[test]
fn a_png_card_with_chara_is_read() {
    let (_d, store) = store();
    let png = png_with(&[
        chunk(b"tEXt", b"Software\0paint"),
        text_chunk("chara", &v2_card("Akari")),
    ]);
    let p = cards::import(&store, &png, false).unwrap();
    assert_eq!(p.name, "Akari");
    assert!(p.persona.contains("Akari is a fox spirit"));
}

#[test]
fn a_png_card_prefers_ccv3_and_reads_itxt() {
    let mut v3 = v2_card("Sora V3");
    v3["spec"] = json!("chara_card_v3");
    let b64 = base64::engine::general_purpose::STANDARD.encode(v3.to_string());
    let itxt = chunk(b"iTXt", format!("ccv3\0\0\0en\0\0{b64}").as_bytes());
    let png = png_with(&[text_chunk("chara", &v2_card("Sora V2")), itxt]);
    let card = cards::parse(&png).unwrap();
    assert_eq!(card.name, "Sora V3");
    assert_eq!(card.spec, cards::Spec::V3);
}

fn import_err(store: &Store, bytes: &[u8]) -> String {
    let e = cards::import(store, bytes, false).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput, "{}", e.message);
    e.message
}

#[test]
fn malformed_json_cards_get_a_clear_error_and_create_nothing() {
    let (_d, store) = store();
    let cases: [(&[u8], &str); 7] = [
        (
            b"{\"spec\": \"chara_card_v2\", \"data\": {\"name\": ",
            "not valid JSON",
        ),
        (b"[1, 2]", "JSON object"),
        (br#"{"spec":"chara_card_v2"}"#, "no \"data\" object"),
        (
            br#"{"spec":"chara_card_v9","data":{"name":"X"}}"#,
            "unknown card spec",
        ),
        (
            br#"{"spec":"chara_card_v2","data":{"name":"  "}}"#,
            "no name",
        ),
        (
            br#"{"spec":"chara_card_v2","data":{"name":"X","description":7}}"#,
            "description must be text",
        ),
        (b"\xff\xfe binary", "neither a PNG nor UTF-8"),
    ];
    for (bytes, want) in cases {
        let msg = import_err(&store, bytes);
        assert!(msg.contains(want), "{want:?} not in {msg:?}");
    }
    assert_eq!(names(&store), ["Yui", "Kai"]);
}

#[test]
fn malformed_png_cards_get_a_clear_error_and_create_nothing() {
    let (_d, store) = store();
    let good = png_with(&[text_chunk("chara", &v2_card("Akari"))]);
    // A flipped byte inside the card chunk: its CRC no longer matches.
    let mut flipped = good.clone();
    let at = flipped.len() - 30;
    flipped[at] ^= 0x01;
    let truncated = good[..good.len() - 20].to_vec();
    let no_card = png_with(&[chunk(b"tEXt", b"Comment\0just a picture")]);
    let not_b64 = png_with(&[chunk(b"tEXt", b"chara\0***not base64***")]);
    let b64_not_json = png_with(&[chunk(
        b"tEXt",
        format!(
            "chara\0{}",
            base64::engine::general_purpose::STANDARD.encode("hello")
        )
        .as_bytes(),
    )]);
    let cases = [
        (flipped, "fails its CRC check"),
        (truncated, "damaged"),
        (no_card, "no chara or ccv3 text chunk"),
        (not_b64, "not base64"),
        (b64_not_json, "not valid JSON"),
    ];
    for (bytes, want) in cases {
        let msg = import_err(&store, &bytes);
        assert!(msg.contains(want), "{want:?} not in {msg:?}");
    }
    assert_eq!(names(&store), ["Yui", "Kai"]);
}

#[test]
fn a_card_whose_name_is_taken_creates_nothing() {
    let (dir, store) = store();
    let msg = import_err(
        &store,
        serde_json::to_vec(&v2_card("KAI")).unwrap().as_slice(),
    );
    assert!(msg.contains("already exists"), "{msg}");
    cards::import(
        &store,
        serde_json::to_vec(&v2_card("Akari")).unwrap().as_slice(),
        false,
    )
    .unwrap();
    let png = png_with(&[text_chunk("chara", &v2_card("akari"))]);
    let msg = import_err(&store, &png);
    assert!(msg.contains("already exists"), "{msg}");
    assert_eq!(names(&store), ["Yui", "Kai", "Akari"]);
    assert_eq!(count(&dir, "SELECT COUNT(*) FROM presets"), 3);
}
