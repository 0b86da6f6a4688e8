//! Which expressions a VRM model has, and which of them shows each emotion of the vocabulary.
//!
//! Names are the ones the renderer (three-vrm) uses: VRM 1.0's presets, and VRM 0.x's preset
//! names brought to them as three-vrm does (joy → happy, sorrow → sad, fun → relaxed, a → aa,
//! blink_l → blinkLeft, …); a custom expression keeps its own name. [`face_for`] is the one
//! decision of what an emotion looks like on a model: the UI only applies it.

use super::meta::VrmVersion;
use serde::Serialize;
use serde_json::Value;

/// One expression of the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Expression {
    /// The renderer's name (`happy`, `aa`, or a custom expression's own name).
    pub name: String,
    /// The name in the file (`joy` in a VRM 0.x model), when it differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// A preset of the specification (not a custom expression).
    pub preset: bool,
}

/// VRM 0.x preset names → VRM 1.0 names, as three-vrm's loader maps them.
const V0_PRESETS: &[(&str, &str)] = &[
    ("neutral", "neutral"),
    ("joy", "happy"),
    ("angry", "angry"),
    ("sorrow", "sad"),
    ("fun", "relaxed"),
    ("a", "aa"),
    ("i", "ih"),
    ("u", "ou"),
    ("e", "ee"),
    ("o", "oh"),
    ("blink", "blink"),
    ("blink_l", "blinkLeft"),
    ("blink_r", "blinkRight"),
    ("lookup", "lookUp"),
    ("lookdown", "lookDown"),
    ("lookleft", "lookLeft"),
    ("lookright", "lookRight"),
];

/// The VRM 1.0 presets.
pub const V1_PRESETS: &[&str] = &[
    "happy",
    "angry",
    "sad",
    "relaxed",
    "surprised",
    "aa",
    "ih",
    "ou",
    "ee",
    "oh",
    "blink",
    "blinkLeft",
    "blinkRight",
    "lookUp",
    "lookDown",
    "lookLeft",
    "lookRight",
    "neutral",
];

/// The mouth shapes lip sync may use, in the order it prefers them.
pub const VISEMES: &[&str] = &["aa", "ih", "ou", "ee", "oh"];

/// The expressions of a model from its VRM extension (`VRMC_vrm` or `VRM`).
pub fn list(version: VrmVersion, ext: &Value) -> Vec<Expression> {
    let mut out = Vec::new();
    match version {
        VrmVersion::V1 => {
            let expr = ext.get("expressions");
            if let Some(p) = expr
                .and_then(|e| e.get("preset"))
                .and_then(Value::as_object)
            {
                for name in V1_PRESETS.iter().filter(|n| p.contains_key(**n)) {
                    out.push(Expression {
                        name: name.to_string(),
                        original: None,
                        preset: true,
                    });
                }
            }
            if let Some(c) = expr
                .and_then(|e| e.get("custom"))
                .and_then(Value::as_object)
            {
                for name in c.keys() {
                    out.push(Expression {
                        name: name.clone(),
                        original: None,
                        preset: false,
                    });
                }
            }
        }
        VrmVersion::V0 => {
            let groups = ext
                .pointer("/blendShapeMaster/blendShapeGroups")
                .and_then(Value::as_array);
            for g in groups.into_iter().flatten() {
                let preset = g
                    .get("presetName")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown")
                    .to_ascii_lowercase();
                let own = g.get("name").and_then(Value::as_str).unwrap_or("").trim();
                let e = match V0_PRESETS.iter().find(|(v0, _)| *v0 == preset) {
                    Some((v0, v1)) => Expression {
                        name: v1.to_string(),
                        original: (v0 != v1).then(|| v0.to_string()),
                        preset: true,
                    },
                    None if !own.is_empty() => Expression {
                        name: own.to_string(),
                        original: None,
                        preset: false,
                    },
                    None => continue,
                };
                if !out.iter().any(|o: &Expression| o.name == e.name) {
                    out.push(e);
                }
            }
        }
    }
    out
}

/// An expression at a weight (0..1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Weighted {
    pub name: String,
    pub weight: f64,
}

/// Where an emotion's face comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The model's own expression for it (a preset, or a custom one of the emotion's name).
    Own,
    /// The nearest expression the model has.
    Nearest,
    /// The model has nothing near: its resting face.
    Rest,
}

/// What an emotion looks like on a model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Face {
    pub emotion: String,
    /// The expressions to set (empty: the resting face).
    pub expressions: Vec<Weighted>,
    pub source: Source,
    /// Where it comes from, in words for the look picker.
    pub from: String,
}

/// A face made of expressions at weights.
type Blend = &'static [(&'static str, f64)];

/// The nearest faces of the built-in emotions, best first; each is used only when the model
/// has every expression in it. Weights under 1 keep a borrowed face from overstating.
const NEAREST: &[(&str, &[Blend])] = &[
    ("neutral", &[]),
    ("happy", &[&[("relaxed", 1.0)]]),
    ("sad", &[&[("relaxed", 0.3), ("blink", 0.3)]]),
    ("angry", &[&[("sad", 0.5)]]),
    ("surprised", &[&[("oh", 0.8)], &[("happy", 0.6)]]),
    ("shy", &[&[("relaxed", 0.6)], &[("happy", 0.5)]]),
    (
        "sleepy",
        &[
            &[("relaxed", 0.5), ("blink", 0.5)],
            &[("blink", 0.6)],
            &[("relaxed", 1.0)],
        ],
    ),
    ("thinking", &[&[("neutral", 1.0)]]),
];

fn find<'a>(available: &'a [Expression], name: &str) -> Option<&'a Expression> {
    available
        .iter()
        .find(|e| e.name == name)
        .or_else(|| available.iter().find(|e| e.name.eq_ignore_ascii_case(name)))
        .or_else(|| {
            available
                .iter()
                .find(|e| e.original.as_deref() == Some(name))
        })
}

fn describe(e: &Expression) -> String {
    match (&e.original, e.preset) {
        (Some(o), _) => format!("{} (VRM 0.x \"{o}\")", e.name),
        (None, true) => e.name.clone(),
        (None, false) => format!("{} (custom)", e.name),
    }
}

/// The face of `emotion` on a model with `available` expressions: its own expression (a preset
/// or a custom one of that name, any case), else the nearest one the model has, else its
/// resting face (an emotion of the user's vocabulary that the table does not know falls back to
/// `neutral`).
pub fn face_for(emotion: &str, available: &[Expression]) -> Face {
    if let Some(e) = find(available, emotion) {
        return Face {
            emotion: emotion.into(),
            expressions: vec![Weighted {
                name: e.name.clone(),
                weight: 1.0,
            }],
            source: Source::Own,
            from: format!("the model's {} expression", describe(e)),
        };
    }
    let fallback: &[Blend] = NEAREST
        .iter()
        .find(|(id, _)| *id == emotion)
        .map_or(&[&[("neutral", 1.0)]], |(_, c)| c);
    for candidate in fallback {
        let found: Option<Vec<&Expression>> =
            candidate.iter().map(|(n, _)| find(available, n)).collect();
        if let Some(found) = found {
            let names: Vec<String> = found.iter().map(|e| describe(e)).collect();
            return Face {
                emotion: emotion.into(),
                expressions: found
                    .iter()
                    .zip(candidate.iter())
                    .map(|(e, (_, w))| Weighted {
                        name: e.name.clone(),
                        weight: *w,
                    })
                    .collect(),
                source: Source::Nearest,
                from: format!(
                    "nearest: {} (the model has no {emotion})",
                    names.join(" + ")
                ),
            };
        }
    }
    Face {
        emotion: emotion.into(),
        expressions: Vec::new(),
        source: Source::Rest,
        from: if emotion == "neutral" {
            "the model's resting face".into()
        } else {
            format!("the model's resting face (it has nothing for {emotion})")
        },
    }
}

/// The mouth shapes of the model lip sync can use, in [`VISEMES`] order.
pub fn visemes(available: &[Expression]) -> Vec<String> {
    VISEMES
        .iter()
        .filter_map(|v| find(available, v).map(|e| e.name.clone()))
        .collect()
}

/// How the model blinks: `blink`, else both eyes apart, else not at all (empty).
pub fn blink(available: &[Expression]) -> Vec<String> {
    if let Some(e) = find(available, "blink") {
        return vec![e.name.clone()];
    }
    match (find(available, "blinkLeft"), find(available, "blinkRight")) {
        (Some(l), Some(r)) => vec![l.name.clone(), r.name.clone()],
        _ => Vec::new(),
    }
}
