//! A turn's events → the lines to speak, while the turn still streams: speech deltas go through
//! the [`SentenceChunker`], so each complete sentence is ready at once; a cue with a voice
//! direction (`caption`, `emotion_text`) closes what was said before it and directs what follows,
//! as [`super::Script`] does for a whole reply. Every line carries the character's own voice
//! (its preset's voice type, rate, pitch and voice name).

use super::chunk::SentenceChunker;
use super::tts::Line;
use super::Direction;
use yui_base::events::TurnEvent;

/// Cuts one turn's speech into [`Line`]s as it streams.
#[derive(Debug, Clone, Default)]
pub struct LineFeed {
    chunker: SentenceChunker,
    /// The character's own voice.
    base: Direction,
    /// The character's voice name on an OpenAI-compatible server.
    voice: Option<String>,
    /// The last cue's direction and its words (for servers that take `instructions`).
    current: Direction,
    instructions: Option<String>,
}

impl LineFeed {
    /// A feed in the voice of a preset (`voice`: the preset's voice JSON).
    pub fn for_voice(voice: &serde_json::Value) -> Self {
        Self {
            base: Direction::of_preset(voice),
            voice: voice
                .get("name")
                .and_then(serde_json::Value::as_str)
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string),
            ..Default::default()
        }
    }

    /// Take one turn event; the lines it completed, in order.
    pub fn observe(&mut self, event: &TurnEvent) -> Vec<Line> {
        match event {
            TurnEvent::Speech { delta } => self
                .chunker
                .push(delta)
                .into_iter()
                .filter(|s| s.chars().any(char::is_alphanumeric))
                .map(|s| self.line(s))
                .collect(),
            TurnEvent::Cue { cue, .. } if cue.caption.is_some() || cue.emotion_text.is_some() => {
                // What was said before the cue keeps the direction it was said in.
                let before = self.flush();
                self.current =
                    Direction::from_cue(cue.caption.as_deref(), cue.emotion_text.as_deref());
                let words: Vec<&str> = [cue.caption.as_deref(), cue.emotion_text.as_deref()]
                    .into_iter()
                    .flatten()
                    .map(str::trim)
                    .filter(|w| !w.is_empty())
                    .collect();
                self.instructions = (!words.is_empty()).then(|| words.join(", "));
                before
            }
            _ => Vec::new(),
        }
    }

    /// The turn ended: what is left unsaid.
    pub fn flush(&mut self) -> Vec<Line> {
        self.chunker
            .finish()
            .map(|s| self.line(s))
            .into_iter()
            .collect()
    }

    fn line(&self, text: String) -> Line {
        let (b, d) = (self.base, self.current);
        Line {
            text,
            direction: Direction {
                rate: (b.rate + d.rate).clamp(-100, 100),
                pitch: (b.pitch + d.pitch).clamp(-100, 100),
                volume: d.volume,
                voice_type: d.voice_type.or(b.voice_type),
            },
            instructions: self.instructions.clone(),
            voice: self.voice.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use yui_base::events::Cue;

    fn speech(s: &str) -> TurnEvent {
        TurnEvent::Speech { delta: s.into() }
    }

    #[test]
    fn sentences_come_out_as_soon_as_they_are_complete_in_the_characters_voice() {
        let mut f = LineFeed::for_voice(&json!({"rate": 20, "name": "nova"}));
        assert!(f.observe(&speech("Hello the")).is_empty());
        let l = f.observe(&speech("re. How are")).remove(0);
        assert_eq!((l.text.as_str(), l.direction.rate), ("Hello there.", 20));
        assert_eq!(l.voice.as_deref(), Some("nova"));
        assert!(f.observe(&speech(" you")).is_empty());
        assert_eq!(f.flush()[0].text, "How are you");
        assert!(f.flush().is_empty());
        // CJK full stops end a sentence at once.
        let got = f.observe(&speech("こんにちは。元気？"));
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn a_directing_cue_closes_what_came_before_and_directs_what_follows() {
        let mut f = LineFeed::for_voice(&json!({}));
        assert!(f.observe(&speech("Well")).is_empty());
        let cue = Cue {
            caption: Some("excited".into()),
            ..Default::default()
        };
        let before = f.observe(&TurnEvent::Cue {
            call_id: "c".into(),
            name: "generate_express".into(),
            cue,
        });
        assert_eq!(before.len(), 1);
        assert_eq!(before[0].text, "Well");
        assert!(before[0].instructions.is_none());
        let after = f.observe(&speech("Yes! ")).remove(0);
        assert_eq!(after.instructions.as_deref(), Some("excited"));
        assert!(after.direction.rate > 0, "excited speaks faster");
    }
}
