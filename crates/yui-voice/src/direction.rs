//! How an utterance sounds: a [`Direction`] in speech-dispatcher's terms (rate, pitch, volume,
//! voice type), read from a cue's caption or emotion text, or from a character's own voice.

/// speech-dispatcher's voice types, the choices of a character's voice
/// (`presets::check_voice` refuses any other).
pub const VOICE_TYPES: &[&str] = &[
    "male1",
    "male2",
    "male3",
    "female1",
    "female2",
    "female3",
    "child_male",
    "child_female",
];

/// How an utterance should sound, in speech-dispatcher's terms. Zero means "the user's default".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Direction {
    /// −100 (slowest) … 100 (fastest).
    pub rate: i32,
    /// −100 (lowest) … 100 (highest).
    pub pitch: i32,
    /// −100 (quietest) … 100 (loudest).
    pub volume: i32,
    /// A speech-dispatcher voice type (`male1`, `female1`, `child_female`, …).
    pub voice_type: Option<&'static str>,
}

impl Direction {
    /// A character's own voice, from its preset's `voice` (`{voice_type?, rate?, pitch?}`,
    /// checked by `presets::check_voice`); anything else reads as the default voice.
    pub fn of_preset(voice: &serde_json::Value) -> Self {
        let num = |k: &str| {
            voice
                .get(k)
                .and_then(serde_json::Value::as_i64)
                .map_or(0, |n| n.clamp(-100, 100) as i32)
        };
        let voice_type = voice
            .get("voice_type")
            .and_then(serde_json::Value::as_str)
            .and_then(|t| VOICE_TYPES.iter().copied().find(|v| *v == t));
        Self {
            rate: num("rate"),
            pitch: num("pitch"),
            volume: 0,
            voice_type,
        }
    }
}

/// Words of a voice direction → (rate, pitch, volume) offsets.
const TONES: &[(&[&str], i32, i32, i32)] = &[
    (
        &[
            "whisper",
            "whispering",
            "whispered",
            "soft",
            "softly",
            "quiet",
            "quietly",
            "hushed",
            "secret",
            "murmur",
        ],
        -10,
        0,
        -50,
    ),
    (
        &[
            "excited",
            "excitedly",
            "cheerful",
            "cheerfully",
            "happy",
            "happily",
            "bright",
            "energetic",
            "lively",
            "joyful",
            "playful",
        ],
        25,
        20,
        0,
    ),
    (
        &[
            "sad",
            "sadly",
            "gloomy",
            "sorrowful",
            "tearful",
            "disappointed",
            "melancholy",
        ],
        -25,
        -20,
        -10,
    ),
    (
        &[
            "angry",
            "angrily",
            "annoyed",
            "cross",
            "stern",
            "irritated",
            "furious",
        ],
        15,
        -10,
        30,
    ),
    (
        &[
            "calm", "calmly", "gentle", "gently", "relaxed", "soothing", "tender",
        ],
        -15,
        0,
        0,
    ),
    (
        &["sleepy", "tired", "drowsy", "yawning", "bored"],
        -35,
        -15,
        -20,
    ),
    (&["slow", "slowly"], -30, 0, 0),
    (&["fast", "quickly", "hurried", "rushed", "rapid"], 35, 0, 0),
    (
        &["loud", "loudly", "shout", "shouting", "yell", "yelling"],
        0,
        0,
        50,
    ),
    (&["surprised", "astonished", "shocked", "amazed"], 10, 30, 0),
    (
        &["shy", "timid", "nervous", "hesitant", "bashful"],
        -10,
        5,
        -25,
    ),
    (&["high", "squeaky"], 0, 35, 0),
    (&["low", "deep"], 0, -35, 0),
];

/// Words → a speech-dispatcher voice type.
const WORD_VOICE_TYPES: &[(&[&str], &str)] = &[
    (&["child", "childlike", "kid"], "child_female"),
    (&["male", "man", "masculine"], "male1"),
    (&["female", "woman", "feminine"], "female1"),
];

impl Direction {
    /// The direction of a cue's `caption` and `emotion_text`; unknown words change nothing.
    pub fn from_cue(caption: Option<&str>, emotion_text: Option<&str>) -> Self {
        let mut d = Direction::default();
        let text = format!(
            "{} {}",
            caption.unwrap_or_default(),
            emotion_text.unwrap_or_default()
        )
        .to_lowercase();
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            for (words, rate, pitch, volume) in TONES {
                if words.contains(&word) {
                    d.rate += rate;
                    d.pitch += pitch;
                    d.volume += volume;
                }
            }
            if d.voice_type.is_none() {
                d.voice_type = WORD_VOICE_TYPES
                    .iter()
                    .find(|(words, _)| words.contains(&word))
                    .map(|(_, t)| *t);
            }
        }
        d.rate = d.rate.clamp(-100, 100);
        d.pitch = d.pitch.clamp(-100, 100);
        d.volume = d.volume.clamp(-100, 100);
        d
    }

    /// `spd-say` options for this direction (none for the neutral direction).
    pub fn spd_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for (flag, v) in [
            ("--rate", self.rate),
            ("--pitch", self.pitch),
            ("--volume", self.volume),
        ] {
            if v != 0 {
                args.push(flag.to_string());
                args.push(v.to_string());
            }
        }
        if let Some(t) = self.voice_type {
            args.push("--voice-type".into());
            args.push(t.into());
        }
        args
    }
}
