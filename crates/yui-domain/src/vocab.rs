//! The expression vocabulary, and the generate_express schema built from it.
//!
//! The vocabulary is what a character can express: an emotion registry (faces), a motion registry
//! (body motions, flagged `reactive`, `ambient`, `broker_publish`), the voice engine in use (with
//! its tag table when the engine takes tags from a fixed list), and the user's expression-motion
//! selection. It lives in the settings table under [`KEY`]; the defaults ship
//! in code. The format is documented in docs/cue-contract.md.
//!
//! The schema is rebuilt from the vocabulary loaded at each turn (contract: "Declared schema"),
//! so an edit reaches the next turn with no restart.

use crate::backend::Transport;
use crate::error::{CoreError, Result};
use crate::store::{kv, Store};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// The tool description; the short form drops body motion when no motion is offered.
pub const DESCRIPTION: &str =
    "Places an expression cue (face, body motion, voice tone) on the speech around the call";
pub const DESCRIPTION_NO_MOTION: &str =
    "Places an expression cue (face, voice tone) on the speech around the call";

/// A face the character can show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Emotion {
    pub id: String,
    #[serde(default)]
    pub label: String,
    /// What the face means; the model reads it in the `emotion_id` description.
    #[serde(default)]
    pub description: String,
}

/// A body motion the character can play.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Motion {
    pub id: String,
    #[serde(default)]
    pub label: String,
    #[serde(default)]
    pub description: String,
    /// Played on a trigger (see `trigger`), never offered to the model.
    #[serde(default)]
    pub reactive: bool,
    /// Played by itself while idle, never offered to the model.
    #[serde(default)]
    pub ambient: bool,
    /// Whether the motion is published to expression producers (the model). `false` keeps a
    /// motion for the app's own use.
    #[serde(default = "yes")]
    pub broker_publish: bool,
    /// For a reactive motion: what plays it (`clicked`, `dragged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
}

fn yes() -> bool {
    true
}

/// How the voice engine takes `emotion_text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VoiceMode {
    /// Free-text voice direction.
    #[default]
    Free,
    /// One tag of the engine's tag table.
    Enum,
}

/// One tag of an enum-mode engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoiceTag {
    pub tag: String,
    #[serde(default)]
    pub meaning: String,
}

/// The voice engine in use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Voice {
    pub engine: String,
    #[serde(default)]
    pub mode: VoiceMode,
    /// The tag table (enum mode only).
    #[serde(default)]
    pub tags: Vec<VoiceTag>,
}

impl Default for Voice {
    fn default() -> Self {
        Self {
            engine: "speech-dispatcher".into(),
            mode: VoiceMode::Free,
            tags: Vec::new(),
        }
    }
}

/// The whole vocabulary (the value of the `yui.vocab` setting).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vocab {
    #[serde(default)]
    pub emotions: Vec<Emotion>,
    #[serde(default)]
    pub motions: Vec<Motion>,
    #[serde(default)]
    pub voice: Voice,
    /// The user's expression-motion selection: ids of the motions offered to the model.
    #[serde(default)]
    pub motion_selection: Vec<String>,
}

fn emotion(id: &str, label: &str, description: &str) -> Emotion {
    Emotion {
        id: id.into(),
        label: label.into(),
        description: description.into(),
    }
}

fn motion(id: &str, label: &str, description: &str) -> Motion {
    Motion {
        id: id.into(),
        label: label.into(),
        description: description.into(),
        reactive: false,
        ambient: false,
        broker_publish: true,
        trigger: None,
    }
}

impl Default for Vocab {
    /// The vocabulary that ships with the app; every id has a drawing in ui/character/.
    fn default() -> Self {
        let emotions = vec![
            emotion("neutral", "Neutral", "calm, at ease, listening"),
            emotion("happy", "Happy", "glad, amused, delighted"),
            emotion("sad", "Sad", "sorry, hurt, disappointed"),
            emotion("angry", "Angry", "annoyed, cross, indignant"),
            emotion("surprised", "Surprised", "astonished, caught off guard"),
            emotion("shy", "Shy", "embarrassed, flattered, bashful"),
            emotion("sleepy", "Sleepy", "tired, drowsy, bored"),
            emotion(
                "thinking",
                "Thinking",
                "pondering, unsure, working something out",
            ),
        ];
        let reactive = |id: &str, label: &str, description: &str, trigger: &str| Motion {
            reactive: true,
            trigger: Some(trigger.into()),
            ..motion(id, label, description)
        };
        let ambient = |id: &str, label: &str, description: &str| Motion {
            ambient: true,
            ..motion(id, label, description)
        };
        let motions = vec![
            motion("nod", "Nod", "agree, acknowledge"),
            motion("shake_head", "Shake head", "disagree, refuse"),
            motion("wave", "Wave", "greet or say goodbye"),
            motion("jump", "Jump", "excitement, joy"),
            motion("bow", "Bow", "thank, apologise, greet politely"),
            motion("spin", "Spin", "show off, celebrate"),
            motion("tilt", "Tilt head", "puzzled, curious"),
            motion("bounce", "Bounce", "eager, cheerful"),
            Motion {
                broker_publish: false,
                ..motion("stretch", "Stretch", "waking up; played by the app itself")
            },
            ambient("breathe", "Breathe", "idle breathing"),
            ambient("blink", "Blink", "idle blinking"),
            ambient("sway", "Sway", "idle swaying"),
            reactive("flinch", "Flinch", "being poked", "clicked"),
            reactive("giggle", "Giggle", "being tickled", "clicked"),
            reactive("dangle", "Dangle", "being carried", "dragged"),
        ];
        let motion_selection = motions
            .iter()
            .filter(|m| offerable(m))
            .map(|m| m.id.clone())
            .collect();
        Self {
            emotions,
            motions,
            voice: Voice::default(),
            motion_selection,
        }
    }
}

/// Whether a motion may be offered to the model at all (before the user's selection).
pub fn offerable(m: &Motion) -> bool {
    !m.reactive && !m.ambient && m.broker_publish
}

/// The ids of the `motions` that may be offered to the model (the settings editor's selection
/// list, for the vocabulary being edited): offerable, with an id.
pub fn offerable_ids(motions: &[Motion]) -> Vec<String> {
    motions
        .iter()
        .filter(|m| offerable(m) && !m.id.trim().is_empty())
        .map(|m| m.id.clone())
        .collect()
}

impl Vocab {
    /// The motions offered to the model: offerable ones the user selected, in registry order.
    pub fn offered_motions(&self) -> Vec<&Motion> {
        self.motions
            .iter()
            .filter(|m| offerable(m) && self.motion_selection.iter().any(|s| s == &m.id))
            .collect()
    }

    /// The voice tags offered as the `emotion_text` enum (none unless the engine is enum-mode).
    pub fn voice_tags(&self) -> &[VoiceTag] {
        match self.voice.mode {
            VoiceMode::Enum => &self.voice.tags,
            VoiceMode::Free => &[],
        }
    }

    /// Check ids (non-empty, unique per registry) and the voice tag table.
    pub fn validate(&self) -> Result<()> {
        unique("emotion", self.emotions.iter().map(|e| e.id.as_str()))?;
        unique("motion", self.motions.iter().map(|m| m.id.as_str()))?;
        unique("voice tag", self.voice.tags.iter().map(|t| t.tag.as_str()))?;
        if self.voice.engine.trim().is_empty() {
            return Err(CoreError::invalid("vocabulary: the voice engine is empty"));
        }
        Ok(())
    }
}

fn unique<'a>(what: &str, ids: impl Iterator<Item = &'a str>) -> Result<()> {
    let mut seen = HashSet::new();
    for id in ids {
        if id.trim().is_empty() || id.trim() != id {
            return Err(CoreError::invalid(format!(
                "vocabulary: {what} id {id:?} is empty or has surrounding spaces"
            )));
        }
        if !seen.insert(id) {
            return Err(CoreError::invalid(format!(
                "vocabulary: duplicate {what} id {id}"
            )));
        }
    }
    Ok(())
}

/// Parse and check a `yui.vocab` value (settings::set calls this for the key).
pub fn from_value(value: &Value) -> Result<Vocab> {
    let vocab =
        Vocab::deserialize(value).map_err(|e| CoreError::invalid(format!("vocabulary: {e}")))?;
    vocab.validate()?;
    Ok(vocab)
}

/// The defaults as a settings value.
pub fn default_value() -> Value {
    serde_json::to_value(Vocab::default()).unwrap_or(Value::Null)
}

/// The settings key of the vocabulary (declared in `crate::settings`).
pub const KEY: &str = "yui.vocab";

/// The vocabulary loaded now: the stored one, else the defaults.
pub fn load(store: &Store) -> Result<Vocab> {
    from_value(&kv::get(store, KEY)?.unwrap_or_else(default_value))
}

/// Store a vocabulary (checked first). The next turn's schema reads it.
pub fn save(store: &Store, vocab: &Vocab) -> Result<()> {
    vocab.validate()?;
    kv::put(store, KEY, &serde_json::to_value(vocab)?)
}

/// Save `vocab` (checked first) and return it as it now loads (the settings editor's Save and
/// Reset; the windows hear of it through the store's change).
pub fn save_and_load(store: &Store, vocab: &Vocab) -> Result<Vocab> {
    save(store, vocab)?;
    load(store)
}

/// Whether the vocabulary offers the model nothing to choose: no emotion, no offered motion and
/// no voice tag. Such a vocabulary declares no generate_express.
pub fn vocab_is_empty(vocab: &Vocab) -> bool {
    vocab.emotions.is_empty() && vocab.offered_motions().is_empty() && vocab.voice_tags().is_empty()
}

/// The generate_express description (the contract's catalog row). Body motion is named only
/// when a motion is offered, the face only when an emotion exists.
pub fn tool_description(vocab: &Vocab) -> String {
    match (
        vocab.emotions.is_empty(),
        vocab.offered_motions().is_empty(),
    ) {
        (false, false) => DESCRIPTION.to_string(),
        (false, true) => DESCRIPTION_NO_MOTION.to_string(),
        (true, false) => {
            "Places an expression cue (body motion, voice tone) on the speech around the call"
                .to_string()
        }
        (true, true) => {
            "Places an expression cue (voice tone) on the speech around the call".to_string()
        }
    }
}

/// A string enum over `(id, meaning)` pairs, described as `<lead>: id = meaning; …` (an id with
/// no meaning stands alone).
fn enum_param<'a>(lead: &str, items: impl Iterator<Item = (&'a str, &'a str)> + Clone) -> Value {
    let ids: Vec<&str> = items.clone().map(|(id, _)| id).collect();
    let meanings = items
        .map(|(id, meaning)| {
            if meaning.is_empty() {
                id.to_string()
            } else {
                format!("{id} = {meaning}")
            }
        })
        .collect::<Vec<_>>()
        .join("; ");
    json!({"type": "string", "enum": ids, "description": format!("{lead}: {meanings}")})
}

/// The generate_express `parameters` object: every parameter optional, no other property.
pub fn parameters(vocab: &Vocab) -> Value {
    let mut props = Map::new();
    if !vocab.emotions.is_empty() {
        let emotions = vocab.emotions.iter();
        props.insert(
            "emotion_id".into(),
            enum_param(
                "Face to show",
                emotions.map(|e| (e.id.as_str(), e.description.as_str())),
            ),
        );
    }
    let offered = vocab.offered_motions();
    if !offered.is_empty() {
        props.insert(
            "motion_id".into(),
            enum_param(
                "Body motion to play",
                offered
                    .iter()
                    .map(|m| (m.id.as_str(), m.description.as_str())),
            ),
        );
    }
    let tags = vocab.voice_tags();
    let emotion_text = if tags.is_empty() {
        json!({
            "type": "string",
            "description": "Voice tone for the speech around the call, in free text (e.g. cheerful, whispering)"
        })
    } else {
        enum_param(
            "Voice tone for the speech around the call",
            tags.iter().map(|t| (t.tag.as_str(), t.meaning.as_str())),
        )
    };
    props.insert("emotion_text".into(), emotion_text);
    props.insert(
        "caption".into(),
        json!({"type": "string", "description": "Free-text voice direction for the speech around the call"}),
    );
    json!({"type": "object", "properties": props, "additionalProperties": false})
}

/// The declared tool on a transport; `None` when the vocabulary is empty (no tool declared) and
/// on Push, which does not declare generate_express: its cues arrive in render and speech
/// segments.
pub fn declared_tool(vocab: &Vocab, transport: Transport) -> Option<Value> {
    if vocab_is_empty(vocab) {
        return None;
    }
    let schema = transport.tool_schema()?;
    Some(schema(
        crate::names::GENERATE_EXPRESS,
        &tool_description(vocab),
        &parameters(vocab),
    ))
}

/// What a character window needs from the vocabulary to draw: emotion ids, and motion ids with
/// their flags (which play by themselves, which on a trigger). No labels, descriptions, voice or
/// selection: character windows get no more than they draw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CharacterVocab {
    pub emotions: Vec<CharacterEmotion>,
    pub motions: Vec<CharacterMotion>,
}

/// An emotion id, for [`CharacterVocab`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CharacterEmotion {
    pub id: String,
}

/// A motion id and its flags, for [`CharacterVocab`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CharacterMotion {
    pub id: String,
    pub reactive: bool,
    pub ambient: bool,
    pub broker_publish: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
}

impl From<&Vocab> for CharacterVocab {
    fn from(v: &Vocab) -> Self {
        Self {
            emotions: v
                .emotions
                .iter()
                .map(|e| CharacterEmotion { id: e.id.clone() })
                .collect(),
            motions: v
                .motions
                .iter()
                .map(|m| CharacterMotion {
                    id: m.id.clone(),
                    reactive: m.reactive,
                    ambient: m.ambient,
                    broker_publish: m.broker_publish,
                    trigger: m.trigger.clone(),
                })
                .collect(),
        }
    }
}

/// The loaded vocabulary as a character window draws it.
pub fn for_character(store: &Store) -> Result<CharacterVocab> {
    load(store).map(|v| CharacterVocab::from(&v))
}
