//! The audio of a realtime voice session (docs/realtime-transport.md, "Audio"): what the
//! transport sends as `input_audio_buffer.append` and what it does with
//! `response.output_audio.delta`, without knowing any device.
//!
//! - **In** ([`input`]): microphone blocks at the device's rate, or a WAV file at any rate, become
//!   pcm16 mono 24 kHz base64 payloads of [`CHUNK_MS`] each ([`MicEncoder`], [`wav_payloads`],
//!   [`pump_capture`]). Push-to-talk: the caller sends the payloads while the key is held, then
//!   [`MicEncoder::flush`]'s rest and an explicit `input_audio_buffer.commit`; hands-free: the
//!   payloads stream and the server's voice activity decides.
//! - **Out** ([`RealtimeAudioOut`]): base64 pcm16 24 kHz deltas per item, played at once as one
//!   continuous stream ([`ReplyPlayer`], on the process's [`super::audio::AudioHost`]) or written
//!   to a WAV file ([`ReplyRecorder`]); the exact milliseconds heard per item (for
//!   `conversation.item.truncate`'s `audio_end_ms`) and a lip-sync envelope in small batches
//!   ([`EnvelopeBatch`]).
//!
//! Floor 2 (domain): nothing here imports the turn, the tools or the stage; the transport
//! (engine floor) imports this.

mod envelope;
pub mod input;
mod player;
mod recorder;

pub use envelope::{EnvelopeBatch, LiveEnvelope, BATCH_LEVELS};
pub use input::{pump_capture, wav_payloads, MicEncoder};
pub use player::{EnvelopeSink, ReplyPlayer, IDLE_CLOSE};
pub use recorder::ReplyRecorder;

use super::audio::AudioError;
use async_trait::async_trait;
use base64::Engine as _;

/// The realtime API's audio rate (`audio/pcm` is 24 kHz, 16-bit, mono, little-endian).
pub const RATE: u32 = 24_000;

/// Milliseconds of audio per `input_audio_buffer.append`. 20 ms: the microphone delivers 20 ms
/// blocks (`cpal_host`'s capture buffer, the voice activity frame), so each block becomes one
/// payload at once and chunking adds no wait of its own before the server's voice activity hears
/// it; 50 events a second of about 1.3 KB each are nothing for a WebSocket.
pub const CHUNK_MS: u32 = 20;

/// Samples per payload (480 at 24 kHz).
pub const CHUNK_SAMPLES: usize = (RATE * CHUNK_MS / 1000) as usize;

/// Milliseconds in `samples` 24 kHz samples (rounded down).
pub fn ms_of(samples: u64) -> u64 {
    samples * 1000 / RATE as u64
}

/// Decode one `response.output_audio.delta` payload (base64 of pcm16 little-endian) to samples
/// in −1…1. Not base64, or an odd number of bytes, is a plain-words error.
pub fn decode_delta(b64: &str) -> Result<Vec<f32>, AudioError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .map_err(|e| {
            AudioError(format!(
                "the realtime server sent reply audio that is not base64 ({e}); that piece was skipped"
            ))
        })?;
    if bytes.len() % 2 != 0 {
        return Err(AudioError(format!(
            "the realtime server sent {} bytes of reply audio, an odd number (16-bit audio has two bytes a sample); that piece was skipped",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32 / 32768.0)
        .collect())
}

/// Encode 24 kHz samples as one base64 pcm16 payload.
pub fn encode_pcm16(samples: &[f32]) -> String {
    let mut bytes = Vec::with_capacity(samples.len() * 2);
    for s in samples {
        bytes.extend_from_slice(&super::pcm::to_i16(*s).to_le_bytes());
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Where a realtime reply's audio goes: the transport calls this and knows no device.
///
/// The transport's side, event by event:
/// - `response.output_audio.delta` (or the beta `response.audio.delta`) → [`delta`](Self::delta)
///   with the event's `item_id` and `delta`. Returns at once (decoding and queueing cost
///   microseconds; a device is opened in the background on the first delta). An `Err` is one
///   plain sentence (bad base64, an odd byte count, the device gone): log it or show it once;
///   the reply's text goes on.
/// - `input_audio_buffer.speech_started` while the reply plays (barge-in) → [`stop`](Self::stop):
///   the audio stops within one output buffer, and the returned `(item_id, ms)` goes into
///   `conversation.item.truncate {item_id, content_index: 0, audio_end_ms: ms}`. `None`: nothing
///   was playing, so there is nothing to truncate.
/// - [`played_ms`](Self::played_ms): the milliseconds of an item heard so far (e.g. to cut the
///   stored transcript, or a truncate the user asked for).
/// - `response.done` → [`finish`](Self::finish) (the last envelope batch goes out; a recorder
///   writes its file); then, to know when the user has heard it all ("playback finished"),
///   await [`drained`](Self::drained).
#[async_trait]
pub trait RealtimeAudioOut: Send + Sync {
    /// Queue one base64 pcm16 24 kHz piece of `item_id`'s audio; it plays right after what is
    /// queued (a new item continues the same stream).
    fn delta(&self, item_id: &str, b64: &str) -> Result<(), AudioError>;

    /// Milliseconds of `item_id`'s audio heard so far (0 for an unknown item).
    fn played_ms(&self, item_id: &str) -> u64;

    /// Stop now: drop what is queued; returns the item that was playing and the milliseconds of
    /// it the user hears (what the device had been given; it plays out its last buffer).
    fn stop(&self) -> Option<(String, u64)>;

    /// The response is done: no more deltas for now.
    fn finish(&self) -> Result<(), AudioError>;

    /// Returns once everything queued has been heard (at once for a recorder), the device failed,
    /// or a bound past the queued audio's length.
    async fn drained(&self);
}
