//! The expression vocabulary and the generate_express schema built from it: one test per rule of
//! the contract's "Declared schema", over a real SQLite store.

use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use yui_core::backend::Transport;
use yui_core::clock::ManualClock;
use yui_core::settings;
use yui_core::tools::express::ExpressTool;
use yui_core::tools::{ClientTool, ToolContext};
use yui_core::vocab::{
    self, declared_tool, parameters, tool_description, vocab_is_empty, Emotion, Motion, Vocab,
    Voice, VoiceMode, VoiceTag,
};
use yui_core::{Store, WindowKind};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("yui.db")).unwrap();
    (dir, store)
}

fn motion(id: &str) -> Motion {
    Motion {
        id: id.into(),
        label: id.into(),
        description: format!("{id} meaning"),
        reactive: false,
        ambient: false,
        broker_publish: true,
        trigger: None,
    }
}

fn emotion(id: &str) -> Emotion {
    Emotion {
        id: id.into(),
        label: id.into(),
        description: format!("{id} meaning"),
    }
}

/// Two emotions and one motion of each kind; everything offerable is selected.
fn sample() -> Vocab {
    Vocab {
        emotions: vec![emotion("calm"), emotion("glad")],
        motions: vec![
            motion("nod"),
            Motion {
                reactive: true,
                trigger: Some("clicked".into()),
                ..motion("flinch")
            },
            Motion {
                ambient: true,
                ..motion("breathe")
            },
            Motion {
                broker_publish: false,
                ..motion("stretch")
            },
            motion("wave"),
        ],
        voice: Voice::default(),
        motion_selection: vec![
            "nod".into(),
            "flinch".into(),
            "breathe".into(),
            "stretch".into(),
            "wave".into(),
        ],
    }
}

fn motion_enum(v: &Vocab) -> Option<Vec<String>> {
    parameters(v)["properties"]["motion_id"]["enum"]
        .as_array()
        .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
}

#[test]
fn emotion_id_enum_is_the_emotion_registry_ids_in_order() {
    let p = parameters(&sample());
    assert_eq!(p["properties"]["emotion_id"]["type"], "string");
    assert_eq!(
        p["properties"]["emotion_id"]["enum"],
        json!(["calm", "glad"])
    );
    let desc = p["properties"]["emotion_id"]["description"]
        .as_str()
        .unwrap();
    assert!(desc.contains("glad = glad meaning"), "{desc}");
    assert_eq!(
        desc,
        "Face to show: calm = calm meaning; glad = glad meaning"
    );
}

#[test]
fn motion_id_enum_drops_reactive_motions() {
    let e = motion_enum(&sample()).unwrap();
    assert!(!e.contains(&"flinch".to_string()), "{e:?}");
}

#[test]
fn motion_id_enum_drops_ambient_motions() {
    let e = motion_enum(&sample()).unwrap();
    assert!(!e.contains(&"breathe".to_string()), "{e:?}");
}

#[test]
fn motion_id_enum_drops_broker_publish_false_motions() {
    let e = motion_enum(&sample()).unwrap();
    assert!(!e.contains(&"stretch".to_string()), "{e:?}");
    assert_eq!(e, vec!["nod", "wave"]);
    assert_eq!(
        parameters(&sample())["properties"]["motion_id"]["description"],
        "Body motion to play: nod = nod meaning; wave = wave meaning"
    );
}

#[test]
fn selection_narrows_motion_id_enum() {
    let mut v = sample();
    v.motion_selection = vec!["wave".into()];
    assert_eq!(motion_enum(&v).unwrap(), vec!["wave"]);
    assert_eq!(tool_description(&v), vocab::DESCRIPTION);
}

#[test]
fn empty_selection_omits_motion_id_and_body_motion_from_the_description() {
    let mut v = sample();
    assert_eq!(
        tool_description(&v),
        "Places an expression cue (face, body motion, voice tone) on the speech around the call"
    );
    v.motion_selection.clear();
    let p = parameters(&v);
    assert!(p["properties"].get("motion_id").is_none(), "{p}");
    assert_eq!(
        tool_description(&v),
        "Places an expression cue (face, voice tone) on the speech around the call"
    );
    assert!(!tool_description(&v).contains("motion"));
    // A selection naming only non-offerable motions is as good as empty.
    v.motion_selection = vec!["flinch".into(), "breathe".into(), "stretch".into()];
    assert!(parameters(&v)["properties"].get("motion_id").is_none());
}

#[test]
fn emotion_text_is_an_enum_with_meanings_on_an_enum_mode_engine() {
    let mut v = sample();
    v.voice = Voice {
        engine: "tagged".into(),
        mode: VoiceMode::Enum,
        tags: vec![
            VoiceTag {
                tag: "whisper".into(),
                meaning: "soft and secret".into(),
            },
            VoiceTag {
                tag: "cheerful".into(),
                meaning: "bright and upbeat".into(),
            },
        ],
    };
    let et = &parameters(&v)["properties"]["emotion_text"];
    assert_eq!(et["type"], "string");
    assert_eq!(et["enum"], json!(["whisper", "cheerful"]));
    let desc = et["description"].as_str().unwrap();
    assert!(desc.contains("whisper = soft and secret"), "{desc}");
    assert!(desc.contains("cheerful = bright and upbeat"), "{desc}");
    assert_eq!(
        desc,
        "Voice tone for the speech around the call: whisper = soft and secret; cheerful = bright and upbeat"
    );
}

/// An id without a meaning stands alone in the description.
#[test]
fn an_id_without_a_meaning_is_listed_bare() {
    let mut v = sample();
    v.emotions[0].description.clear();
    assert_eq!(
        parameters(&v)["properties"]["emotion_id"]["description"],
        "Face to show: calm; glad = glad meaning"
    );
}

#[test]
fn emotion_text_is_free_text_on_other_engines() {
    let mut v = sample();
    // Tags left over from an enum-mode engine do not leak into a free-text engine.
    v.voice = Voice {
        engine: "speech-dispatcher".into(),
        mode: VoiceMode::Free,
        tags: vec![VoiceTag {
            tag: "whisper".into(),
            meaning: "soft".into(),
        }],
    };
    let et = &parameters(&v)["properties"]["emotion_text"];
    assert_eq!(et["type"], "string");
    assert!(et.get("enum").is_none(), "{et}");
}

#[test]
fn caption_is_free_text_every_parameter_optional_no_additional_properties() {
    let p = parameters(&sample());
    assert_eq!(p["type"], "object");
    assert_eq!(p["additionalProperties"], json!(false));
    assert_eq!(p["properties"]["caption"]["type"], "string");
    assert!(p["properties"]["caption"].get("enum").is_none());
    assert!(p.get("required").is_none(), "{p}");
    let keys: Vec<&String> = p["properties"].as_object().unwrap().keys().collect();
    assert_eq!(
        keys.len(),
        4,
        "emotion_id, motion_id, emotion_text, caption: {keys:?}"
    );
}

#[test]
fn chat_completions_nests_the_schema() {
    let v = sample();
    let t = declared_tool(&v, Transport::ChatCompletions).unwrap();
    assert_eq!(
        t,
        json!({
            "type": "function",
            "function": {
                "name": "generate_express",
                "description": tool_description(&v),
                "parameters": parameters(&v),
            }
        })
    );
}

#[test]
fn responses_flattens_the_schema_with_strict_false() {
    let v = sample();
    let t = declared_tool(&v, Transport::Responses).unwrap();
    assert_eq!(
        t,
        json!({
            "type": "function",
            "name": "generate_express",
            "description": tool_description(&v),
            "parameters": parameters(&v),
            "strict": false,
        })
    );
}

#[test]
fn empty_vocabulary_declares_no_tool() {
    let v = Vocab {
        emotions: vec![],
        motions: vec![],
        voice: Voice::default(),
        motion_selection: vec![],
    };
    assert!(vocab_is_empty(&v));
    assert_eq!(declared_tool(&v, Transport::ChatCompletions), None);
    assert_eq!(declared_tool(&v, Transport::Responses), None);
    // Only unofferable motions: still nothing for the model to choose.
    let v = Vocab {
        motions: vec![Motion {
            ambient: true,
            ..motion("breathe")
        }],
        motion_selection: vec!["breathe".into()],
        ..v
    };
    assert!(vocab_is_empty(&v));
    assert!(!vocab_is_empty(&sample()));
}

#[test]
fn empty_vocabulary_declares_no_tool_in_the_window_registry() {
    let (_d, store) = store();
    let empty = Vocab {
        emotions: vec![],
        motions: vec![],
        voice: Voice::default(),
        motion_selection: vec![],
    };
    vocab::save(&store, &empty).unwrap();
    assert!(ExpressTool::for_turn(&store).is_none());
    let env =
        yui_core::tools::registry::RegistryEnv::load(&store, "yui", WindowKind::Phone).unwrap();
    let reg = yui_core::tools::registry::ToolRegistry::for_window(&env).unwrap();
    assert!(reg.is_empty());
    assert_eq!(reg.chat_tools(), None);
    vocab::save(&store, &Vocab::default()).unwrap();
    let reg = yui_core::tools::registry::ToolRegistry::for_window(&env).unwrap();
    assert_eq!(reg.names(), vec!["generate_express"]);
}

#[test]
fn defaults_have_eight_emotions_and_motions_of_every_kind() {
    let v = Vocab::default();
    let ids: Vec<&str> = v.emotions.iter().map(|e| e.id.as_str()).collect();
    for id in [
        "neutral",
        "happy",
        "sad",
        "angry",
        "surprised",
        "shy",
        "sleepy",
        "thinking",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    assert!(v.motions.len() >= 8);
    assert!(v.motions.iter().any(|m| m.reactive));
    assert!(v.motions.iter().any(|m| m.ambient));
    assert!(v.motions.iter().any(|m| !m.broker_publish));
    assert!(v.offered_motions().len() >= 7);
    v.validate().unwrap();
}

#[test]
fn stored_vocabulary_round_trips_and_defaults_when_absent() {
    let (_d, store) = store();
    assert_eq!(vocab::load(&store).unwrap(), Vocab::default());
    let v = sample();
    vocab::save(&store, &v).unwrap();
    assert_eq!(vocab::load(&store).unwrap(), v);
    let raw = settings::get(&store, settings::VOCAB).unwrap();
    assert_eq!(raw["emotions"][1]["id"], "glad");
}

#[test]
fn invalid_vocabulary_is_refused_through_settings_too() {
    let (_d, store) = store();
    let mut v = sample();
    v.emotions.push(emotion("calm"));
    let err = vocab::save(&store, &v).unwrap_err();
    assert_eq!(err.message, "vocabulary: duplicate emotion id calm");
    let err =
        settings::set(&store, settings::VOCAB, &json!({"emotions": [{"id": ""}]})).unwrap_err();
    assert!(err.message.contains("emotion id \"\""), "{}", err.message);
    let err = settings::set(&store, settings::VOCAB, &json!({"emotions": 3})).unwrap_err();
    assert!(err.message.starts_with("vocabulary: "), "{}", err.message);
    assert_eq!(vocab::load(&store).unwrap(), Vocab::default());
}

#[test]
fn an_edit_reaches_the_next_schema_with_no_restart() {
    let (_d, store) = store();
    let tool = ExpressTool::new(store.clone());
    let before = tool.parameters();
    assert!(before["properties"]["motion_id"]["enum"]
        .as_array()
        .unwrap()
        .contains(&json!("wave")));
    let mut v = vocab::load(&store).unwrap();
    v.emotions.push(emotion("proud"));
    v.motion_selection.clear();
    vocab::save(&store, &v).unwrap();
    // Same tool object, next turn: it reads the vocabulary loaded now.
    let after = tool.parameters();
    assert!(after["properties"]["emotion_id"]["enum"]
        .as_array()
        .unwrap()
        .contains(&json!("proud")));
    assert!(after["properties"].get("motion_id").is_none());
    assert_eq!(
        tool.description(),
        "Places an expression cue (face, voice tone) on the speech around the call"
    );
}

#[test]
fn the_registry_of_the_next_turn_declares_the_edited_vocabulary() {
    let (_d, store) = store();
    let env =
        yui_core::tools::registry::RegistryEnv::load(&store, "yui", WindowKind::Phone).unwrap();
    let turn1 = yui_core::tools::registry::ToolRegistry::for_window(&env).unwrap();
    let mut v = vocab::load(&store).unwrap();
    v.motion_selection = vec!["bow".into()];
    vocab::save(&store, &v).unwrap();
    let turn2 = yui_core::tools::registry::ToolRegistry::for_window(&env).unwrap();
    // The turn in flight keeps the schema it declared; the next one has the edit.
    let enum_of = |r: &yui_core::tools::registry::ToolRegistry| {
        r.responses_tools().unwrap()[0]["parameters"]["properties"]["motion_id"]["enum"].clone()
    };
    assert!(enum_of(&turn1).as_array().unwrap().len() > 1);
    assert_eq!(enum_of(&turn2), json!(["bow"]));
    assert_eq!(
        turn2.chat_tools().unwrap()[0],
        declared_tool(&v, Transport::ChatCompletions).unwrap()
    );
}

#[tokio::test]
async fn generate_express_answers_ok_and_is_one_way() {
    let (_d, store) = store();
    let tool = ExpressTool::new(store.clone());
    assert_eq!(tool.name(), "generate_express");
    assert!(tool.one_way());
    let ctx = ToolContext {
        store,
        clock: Arc::new(ManualClock::new(chrono::Utc::now(), 0)),
        preset_id: "yui".into(),
        window: WindowKind::Main,
        turn_id: "t1".into(),
        call: Default::default(),
    };
    for args in [
        json!({"emotion_id": "happy"}),
        json!({}),
        json!({"motion_id": "no_such_motion", "caption": "softly"}),
    ] {
        let out = tool
            .call(args, &ctx, CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(out.as_text(), "ok");
        assert!(!tool.failed(&out));
    }
}

#[test]
fn every_default_id_has_a_drawing_in_the_built_in_character() {
    let read = |file: &str| {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../ui/character")
                .join(file),
        )
        .unwrap()
    };
    // The drawing (emotions, faces) and the character (motions) are two modules.
    let (drawing, character) = (read("drawing.js"), read("character.js"));
    // The source text of one top-level declaration, up to its closing bracket.
    let section = |js: &str, start: &str, end: &str| {
        let from = js.find(start).unwrap();
        let len = js[from..].find(end).unwrap();
        js[from..from + len].to_string()
    };
    let emotions = section(&drawing, "export const EMOTIONS", "\n];");
    let faces = section(&drawing, "export const FACES", "\n};");
    let motions = section(&character, "export const MOTIONS", "\n};");
    let v = Vocab::default();
    for e in &v.emotions {
        assert!(
            emotions.contains(&format!("'{}'", e.id)),
            "EMOTIONS lacks {}",
            e.id
        );
        assert!(
            faces.contains(&format!("\n  {}: (p)", e.id)),
            "FACES lacks {}",
            e.id
        );
    }
    for m in &v.motions {
        assert!(
            motions.contains(&format!("\n  {}: ", m.id)),
            "MOTIONS lacks {}",
            m.id
        );
    }
}

/// Push declares no generate_express (its cues arrive in render and speech segments), whatever
/// the vocabulary holds; the request transports do.
#[test]
fn push_declares_no_generate_express() {
    let v = vocab::Vocab::default();
    assert!(!vocab_is_empty(&v));
    assert_eq!(declared_tool(&v, Transport::Push), None);
    assert!(declared_tool(&v, Transport::ChatCompletions).is_some());
    assert!(declared_tool(&v, Transport::Responses).is_some());
}
