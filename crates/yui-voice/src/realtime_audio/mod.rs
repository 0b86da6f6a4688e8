//! The audio of a realtime voice session (docs/realtime-transport.md, "Audio"): what the
//! transport sends as `input_audio_buffer.append` and what it does with
//! `response.output_audio.delta`, without knowing any device.
//!
//! - **In** ([`input`]): microphone blocks at the device's rate, or a WAV file at any rate, become
//!   pcm16 mono 24 kHz base64 payloads of [`CHUNK_MS`] each ([`MicEncoder`], [`wav_payloads`],
//!   [`pump_capture`]). Push-to-talk: the caller sends the payloads while the key is held, then
//!   [`MicEncoder::flush`]'s rest and an explicit `input_audio_buffer.commit`; hands-free: the
//!   payloads stream and the server's voice activity decides.
//! - **Out**: pcm16 24 kHz pieces per item (decoded by the session, or base64 through `delta`),
//!   played at once as one continuous stream ([`ReplyPlayer`], on the process's
//!   [`super::audio::AudioHost`]) or written to a WAV file ([`ReplyRecorder`]); the exact
//!   milliseconds heard per item (for `conversation.item.truncate`'s `audio_end_ms`) and a
//!   lip-sync envelope in small batches ([`EnvelopeBatch`]). Both implement the transport's seam,
//!   [`yui_base::realtime_audio::RealtimeAudioOut`] (`on_audio`, `played_ms`, `stop`), and
//!   add what the caller of a turn needs: `stop` returning the cut (`stop_cut`), `finish` at
//!   `response.done` (the last lip-sync batch; the recorder writes its file) and `drained`
//!   (everything heard: "playback finished").
//!
//! Floor 2 (domain): nothing here imports the turn, the tools or the stage; the transport
//! (engine floor) imports this.

mod envelope;
pub mod input;
mod player;
mod recorder;

pub use envelope::{EnvelopeBatch, LiveEnvelope, BATCH_LEVELS};
pub use input::{pump_capture, send_paced, wav_chunks, wav_payloads, MicEncoder};
pub use player::{EnvelopeSink, ReplyPlayer, IDLE_CLOSE};
pub use recorder::ReplyRecorder;

use super::audio::AudioError;
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
            AudioError::bad_audio(format!(
                "the realtime server sent reply audio that is not base64 ({e}); that piece was skipped"
            ))
        })?;
    decode_pcm16(&bytes)
}

/// Samples as pcm16 little-endian bytes (what `input_audio_buffer.append` carries, before
/// base64).
pub fn pcm16_bytes(samples: &[f32]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(samples.len() * 2);
    for s in samples {
        bytes.extend_from_slice(&super::pcm::to_i16(*s).to_le_bytes());
    }
    bytes
}

/// Samples as one base64 pcm16 payload.
pub fn encode_pcm16(samples: &[f32]) -> String {
    base64::engine::general_purpose::STANDARD.encode(pcm16_bytes(samples))
}

/// pcm16 little-endian bytes → samples in −1…1; an odd number of bytes is a plain-words error.
pub fn decode_pcm16(bytes: &[u8]) -> Result<Vec<f32>, AudioError> {
    if !bytes.len().is_multiple_of(2) {
        return Err(AudioError::bad_audio(format!(
            "the realtime server sent {} bytes of reply audio, an odd number (16-bit audio has two bytes a sample); that piece was skipped",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32 / 32768.0)
        .collect())
}
