//! Barge-in: the user starting to speak while characters speak. Their audio stops at once (the
//! speech's stop token), their turns stop, the exchange between characters ends, and each
//! interrupted reply is stored as what the user heard, followed by
//! [`transcript::INTERRUPTED_MARKER`] (docs/client-context.md, "Interrupted replies").
//!
//! How much was heard: the speech task reports it (`speech::Heard`: the sentences played whole
//! and the played share of the one cut). [`heard_part`] estimates it from speaking time, for a
//! player that cannot say (kept for callers that only know when speech started).

use super::{Inner, Stage};
use crate::transcript;
use std::time::{Duration, Instant};

/// Speech-dispatcher's default rate (about 170 words a minute) and a typical neural voice both
/// speak about 14 characters a second.
pub const CHARS_PER_SECOND: f64 = 14.0;

/// The first part of `spoken` a listener heard in `elapsed` of speech: whole words (a CJK text,
/// which has no spaces, is cut at the character).
pub fn heard_part(spoken: &str, elapsed: Duration) -> String {
    let want = (elapsed.as_secs_f64() * CHARS_PER_SECOND).floor() as usize;
    crate::voice::heard::first_words(spoken, want)
}

impl Stage {
    /// The user started speaking: every character's speech stops now, and the turns of those
    /// speaking stop too; their stored replies are cut to what was heard (when their speech
    /// task sees the stop). Returns the characters stopped (none: nobody was speaking).
    pub fn barge_in(&self) -> Vec<String> {
        barge_in(&self.0)
    }

    /// Whether any character is speaking now (the microphone's half duplex pauses on it).
    pub fn is_speaking(&self) -> bool {
        self.0.any_speaking()
    }
}

pub(super) fn barge_in(inner: &Inner) -> Vec<String> {
    let at = Instant::now();
    let mut stopped = Vec::new();
    {
        let mut barged = inner.barged();
        let mut seats = inner.seats();
        for (id, seat) in seats.iter_mut() {
            let Some(voice) = seat.speech.take() else {
                continue;
            };
            barged.insert(voice.generation, at);
            voice.cancel.cancel();
            if let Some((_, _, stop)) = &seat.turn {
                stop.cancel();
            }
            stopped.push(id.clone());
        }
    }
    if !stopped.is_empty() {
        // The exchange between characters ends as when the user types.
        let mut c = inner.chain();
        c.epoch += 1;
        c.count = 0;
        tracing::info!(?stopped, "barge-in: the user spoke over the characters");
    }
    stopped
}

/// The speech of `generation` (`preset_id`'s reply of `turn_id`) ended with `heard` heard: if the
/// user spoke over it, store the reply as heard. Returns what was stored as heard.
pub(super) fn after_speech(
    inner: &Inner,
    generation: u64,
    preset_id: &str,
    turn_id: &str,
    heard: &str,
) -> Option<String> {
    inner.barged().remove(&generation)?;
    match transcript::interrupt_reply(&inner.store, preset_id, turn_id, heard) {
        Ok(true) => {}
        Ok(false) => tracing::info!(turn = turn_id, "barge-in: no stored reply to cut"),
        Err(e) => tracing::warn!(turn = turn_id, error = %e.message, "barge-in: reply not cut"),
    }
    Some(heard.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heard_part_is_whole_words_at_the_speaking_pace() {
        let s = "The weather today is sunny with a light breeze.";
        assert_eq!(heard_part(s, Duration::from_millis(0)), "");
        // 1 s → 14 characters: "The weather to" → the word being spoken is dropped.
        assert_eq!(heard_part(s, Duration::from_secs(1)), "The weather");
        assert_eq!(heard_part(s, Duration::from_secs(60)), s);
        // 0.5 s → 7 characters: "今日はいい天気で".
        assert_eq!(
            heard_part("今日はいい天気ですね。", Duration::from_millis(500)),
            "今日はいい天気"
        );
    }
}
