//! The lip-sync envelope of a reply that is still arriving: the RMS of each 20 ms, as the
//! clips' [`crate::pcm::Envelope`], but made as the audio comes and sent in small batches
//! (at least [`BATCH_LEVELS`] levels, about 100 ms, or the item's end) rather than per frame. The
//! window appends each batch to what it plays on its own clock from the item's start.
//!
//! A clip's levels are scaled to its loudest frame; a stream does not know its loudest frame
//! yet, so each level is scaled to the loudest so far (with a floor, so a quiet start does not
//! open the mouth wide).

use crate::pcm::{rms, ENVELOPE_FRAME_MS};
use serde::Serialize;

/// Levels per batch (5 × 20 ms = 100 ms): few events, and the mouth never waits long.
pub const BATCH_LEVELS: usize = 5;
/// The loudest-so-far never counts as below this RMS (about −26 dBFS, quiet speech).
const PEAK_FLOOR: f32 = 0.05;

/// Some levels of one item's envelope.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvelopeBatch {
    pub item_id: String,
    /// Where the first level falls in the item's audio (a multiple of `frame_ms`).
    pub start_ms: u64,
    /// Milliseconds per level (20).
    pub frame_ms: u32,
    /// One level per frame, 0…1, rounded to 1/1000.
    pub levels: Vec<f32>,
    /// The loudest RMS so far (0…1 of full scale).
    pub peak_rms: f32,
    /// No more levels for this item (its audio ended).
    pub last: bool,
    /// The audio was stopped (barge-in): close the mouth now.
    pub stopped: bool,
}

/// One item's envelope while its audio arrives.
#[derive(Debug, Clone)]
pub struct LiveEnvelope {
    item_id: String,
    per: usize,
    partial: Vec<f32>,
    /// Levels made so far (the next level's index).
    made: u64,
    ready: Vec<f32>,
    peak: f32,
}

impl LiveEnvelope {
    /// The envelope of `item_id`'s audio at `rate`.
    pub fn new(item_id: &str, rate: u32) -> Self {
        let per = (rate as usize * ENVELOPE_FRAME_MS as usize / 1000).max(1);
        Self {
            item_id: item_id.to_string(),
            per,
            partial: Vec::with_capacity(per),
            made: 0,
            ready: Vec::new(),
            peak: 0.0,
        }
    }

    pub fn item_id(&self) -> &str {
        &self.item_id
    }

    /// Add audio; a batch once [`BATCH_LEVELS`] levels are ready.
    pub fn feed(&mut self, samples: &[f32]) -> Option<EnvelopeBatch> {
        let mut rest = samples;
        while !rest.is_empty() {
            let take = (self.per - self.partial.len()).min(rest.len());
            self.partial.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.partial.len() == self.per {
                self.level();
            }
        }
        (self.ready.len() >= BATCH_LEVELS).then(|| self.batch(false, false))
    }

    fn level(&mut self) {
        let r = rms(&self.partial);
        self.partial.clear();
        self.peak = self.peak.max(r);
        let level = r / self.peak.max(PEAK_FLOOR);
        self.ready.push((level * 1000.0).round() / 1000.0);
    }

    fn batch(&mut self, last: bool, stopped: bool) -> EnvelopeBatch {
        let start = self.made;
        self.made += self.ready.len() as u64;
        EnvelopeBatch {
            item_id: self.item_id.clone(),
            start_ms: start * ENVELOPE_FRAME_MS as u64,
            frame_ms: ENVELOPE_FRAME_MS,
            levels: std::mem::take(&mut self.ready),
            peak_rms: self.peak,
            last,
            stopped,
        }
    }

    /// The item's audio ended: the rest (a partial last frame counts as a frame).
    pub fn end(&mut self) -> EnvelopeBatch {
        if !self.partial.is_empty() {
            self.level();
        }
        self.batch(true, false)
    }

    /// The item's audio was stopped: nothing more plays.
    pub fn stopped(&mut self) -> EnvelopeBatch {
        self.partial.clear();
        self.ready.clear();
        self.batch(true, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_of_100_ms_follow_the_loudness_and_end_with_the_rest() {
        let mut e = LiveEnvelope::new("item_1", 24_000);
        // 60 ms loud, 40 ms silence, 30 ms half as loud: in deltas of odd sizes.
        let mut audio = vec![0.5f32; 1440];
        audio.extend(vec![0.0; 960]);
        audio.extend(vec![0.25; 720]);
        let mut batches = Vec::new();
        for piece in audio.chunks(700) {
            batches.extend(e.feed(piece));
        }
        batches.push(e.end());
        assert_eq!(batches.len(), 2, "{batches:?}");
        assert_eq!(batches[0].levels, vec![1.0, 1.0, 1.0, 0.0, 0.0]);
        assert_eq!(batches[0].start_ms, 0);
        assert!(!batches[0].last);
        assert_eq!(batches[1].start_ms, 100);
        assert_eq!(batches[1].levels, vec![0.5, 0.5]);
        assert!(batches[1].last && !batches[1].stopped);
        assert!((batches[1].peak_rms - 0.5).abs() < 1e-6);
        // Quiet audio stays a small opening (the floor), not a wide one.
        let mut q = LiveEnvelope::new("q", 24_000);
        q.feed(&[0.01; 480]);
        assert_eq!(q.end().levels, vec![0.2]);
        let s = q.stopped();
        assert!(s.stopped && s.last && s.levels.is_empty());
    }
}
