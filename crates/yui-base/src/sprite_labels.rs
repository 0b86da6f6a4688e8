//! SillyTavern expression packs: the classifier labels its packs name their files by, and which
//! of YUI's emotion ids each one stands in for (docs/sprites.md has the table).
//!
//! For each emotion id of the vocabulary the loader tries the id itself first, then the labels
//! listed for it here, in order; the first file present wins. A file can stand in for more than
//! one id (`neutral.png` also for `sleepy` when the pack has no `relief.png`). Labels no id took
//! load under their own name, as extra ids the model may name once the vocabulary has them.

/// SillyTavern's 28 classifier labels (the `go_emotions` set its expression packs use).
pub const SILLYTAVERN_LABELS: &[&str] = &[
    "admiration",
    "amusement",
    "anger",
    "annoyance",
    "approval",
    "caring",
    "confusion",
    "curiosity",
    "desire",
    "disappointment",
    "disapproval",
    "disgust",
    "embarrassment",
    "excitement",
    "fear",
    "gratitude",
    "grief",
    "joy",
    "love",
    "nervousness",
    "neutral",
    "optimism",
    "pride",
    "realization",
    "relief",
    "remorse",
    "sadness",
    "surprise",
];

/// YUI emotion id → the labels that stand in for it, best first (after the id itself).
pub const STAND_INS: &[(&str, &[&str])] = &[
    ("neutral", &["neutral", "approval", "caring"]),
    (
        "happy",
        &["joy", "amusement", "excitement", "optimism", "gratitude"],
    ),
    ("sad", &["sadness", "grief", "disappointment", "remorse"]),
    ("angry", &["anger", "annoyance", "disapproval", "disgust"]),
    ("surprised", &["surprise", "realization", "fear"]),
    ("shy", &["embarrassment", "nervousness", "love"]),
    // No label means tired; relief (a calm sigh, often eyes closed) is the closest, then neutral.
    ("sleepy", &["relief", "neutral"]),
    ("thinking", &["curiosity", "confusion"]),
];

/// The file stems to try for emotion `id`, best first: the id itself, then its stand-ins.
pub fn candidates(id: &str) -> Vec<&str> {
    let mut out = vec![id];
    if let Some((_, labels)) = STAND_INS.iter().find(|(e, _)| *e == id) {
        out.extend(labels.iter().copied().filter(|l| *l != id));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stand_in_is_a_sillytavern_label() {
        for (_, labels) in STAND_INS {
            for l in *labels {
                assert!(SILLYTAVERN_LABELS.contains(l), "{l}");
            }
        }
    }

    #[test]
    fn the_id_itself_comes_first() {
        assert_eq!(candidates("sleepy"), vec!["sleepy", "relief", "neutral"]);
        assert_eq!(candidates("neutral"), vec!["neutral", "approval", "caring"]);
        assert_eq!(candidates("blush"), vec!["blush"]);
    }
}
