//! A [`RealtimeAudioOut`] that writes the reply's audio to a WAV file instead of a device
//! (`yui turn --audio-out FILE.wav`): every item's audio in order, 24 kHz 16-bit mono, written
//! at each [`RealtimeAudioOut::finish`] (so the file holds everything received so far, written
//! whole: a temporary file renamed over it).

use super::{decode_delta, decode_pcm16, ms_of, RATE};
use crate::audio::AudioError;
use crate::pcm::Pcm;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use yui_base::realtime_audio::RealtimeAudioOut;

#[derive(Default)]
struct State {
    samples: Vec<f32>,
    /// Each item's first sample and length, in order.
    items: Vec<(String, usize, usize)>,
}

/// Writes a realtime reply's audio to a WAV file.
pub struct ReplyRecorder {
    path: PathBuf,
    state: Mutex<State>,
}

impl ReplyRecorder {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Everything received so far, 24 kHz mono.
    pub fn audio(&self) -> Pcm {
        Pcm::new(RATE, self.state().samples.clone())
    }

    /// The items received, in order, with their milliseconds.
    pub fn items(&self) -> Vec<(String, u64)> {
        self.state()
            .items
            .iter()
            .map(|(id, _, n)| (id.clone(), ms_of(*n as u64)))
            .collect()
    }

    /// One piece of `item_id`'s audio as pcm16 little-endian bytes.
    pub fn pcm16(&self, item_id: &str, bytes: &[u8]) -> Result<(), AudioError> {
        self.queue(item_id, &decode_pcm16(bytes)?);
        Ok(())
    }

    fn queue(&self, item_id: &str, samples: &[f32]) {
        let mut s = self.state();
        let start = s.samples.len();
        match s.items.last_mut() {
            Some((id, _, n)) if id == item_id => *n += samples.len(),
            _ => s.items.push((item_id.to_string(), start, samples.len())),
        }
        s.samples.extend_from_slice(samples);
    }
}

impl ReplyRecorder {
    /// One `response.output_audio.delta` payload (base64 pcm16 24 kHz) of `item_id`.
    pub fn delta(&self, item_id: &str, b64: &str) -> Result<(), AudioError> {
        self.queue(item_id, &decode_delta(b64)?);
        Ok(())
    }

    /// Everything received of the item counts as played: a file hears it all.
    pub fn played_ms(&self, item_id: &str) -> u64 {
        self.state()
            .items
            .iter()
            .filter(|(id, _, _)| id == item_id)
            .map(|(_, _, n)| ms_of(*n as u64))
            .sum()
    }

    /// A file is never cut: the last item and all of it.
    /// Stop now (barge-in): drop what is queued; the item that was playing and the milliseconds
    /// of it the user hears (what the device had been given: it plays out its last buffer), for
    /// `conversation.item.truncate`. `None`: nothing was playing.
    pub fn stop_cut(&self) -> Option<(String, u64)> {
        let s = self.state();
        s.items
            .last()
            .map(|(id, _, n)| (id.clone(), ms_of(*n as u64)))
    }

    /// The response is done (`response.done`): no more audio for now.
    pub fn finish(&self) -> Result<(), AudioError> {
        let wav = Pcm::new(RATE, self.state().samples.clone()).to_wav();
        let tmp = self.path.with_extension("wav.part");
        std::fs::write(&tmp, &wav)
            .and_then(|_| std::fs::rename(&tmp, &self.path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                AudioError::Write {
                    message: format!(
                        "cannot write the reply's audio to {}: {e}",
                        self.path.display()
                    ),
                    source: std::sync::Arc::new(e),
                }
            })
    }

    /// Returns once everything queued has been heard, the device failed, or a bound past the
    /// queued audio's length.
    pub async fn drained(&self) {}
}

impl RealtimeAudioOut for ReplyRecorder {
    fn on_audio(&self, item_id: &str, pcm16: &[u8]) {
        if let Err(e) = self.pcm16(item_id, pcm16) {
            tracing::warn!("realtime audio: {e}");
        }
    }

    fn played_ms(&self, item_id: &str) -> u64 {
        ReplyRecorder::played_ms(self, item_id)
    }

    fn stop(&self) {
        let _ = self.stop_cut();
    }
}
