//! What the realtime session sends as `input_audio_buffer.append`: pcm16 mono 24 kHz chunks of
//! [`CHUNK_MS`] each (bytes; the session's `append` base64-encodes them, or [`wav_payloads`]
//! gives the base64 text), from microphone blocks at the device's rate ([`MicEncoder`],
//! [`pump_capture`]) or from a WAV file at any rate, mono or stereo ([`wav_chunks`], sent with
//! real-time pacing or at once by [`send_paced`]).

use super::{encode_pcm16, pcm16_bytes, CHUNK_MS, CHUNK_SAMPLES, RATE};
use crate::audio::{AudioError, Capture};
use crate::pcm::{Pcm, StreamResampler};
use std::future::Future;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Microphone blocks at any rate → append payloads. The resampler converts 20 ms of input at a
/// time and keeps its state across blocks (no clicks at block edges).
pub struct MicEncoder {
    rate: u32,
    resampler: StreamResampler,
    pending: Vec<f32>,
}

impl MicEncoder {
    /// An encoder for blocks at `rate` per second.
    pub fn new(rate: u32) -> Result<Self, AudioError> {
        if rate == 0 {
            return Err(AudioError::device(
                "the microphone reports a sample rate of 0",
            ));
        }
        let chunk = (rate * CHUNK_MS / 1000) as usize;
        let resampler = StreamResampler::with_chunk(rate, RATE, chunk)?;
        Ok(Self {
            rate,
            resampler,
            pending: Vec::with_capacity(CHUNK_SAMPLES * 2),
        })
    }

    /// The input rate.
    pub fn rate(&self) -> u32 {
        self.rate
    }

    /// Feed one block; returns the chunks now complete, pcm16 bytes (usually one per 20 ms
    /// block).
    pub fn push(&mut self, block: &[f32]) -> Vec<Vec<u8>> {
        let out = self.resampler.push(block);
        self.pending.extend_from_slice(&out);
        self.take_full()
    }

    fn take_full(&mut self) -> Vec<Vec<u8>> {
        let n = self.pending.len() / CHUNK_SAMPLES;
        if n == 0 {
            return Vec::new();
        }
        let payloads = self
            .pending
            .chunks_exact(CHUNK_SAMPLES)
            .map(pcm16_bytes)
            .collect();
        self.pending.drain(..n * CHUNK_SAMPLES);
        payloads
    }

    /// The end of what was said (push-to-talk released, a file's end): what the resampler still
    /// holds (pushed out with 20 ms of silence) and a last, shorter payload. Send these before
    /// `input_audio_buffer.commit`.
    pub fn flush(&mut self) -> Vec<Vec<u8>> {
        if self.rate != RATE {
            let silence = vec![0.0; (self.rate * CHUNK_MS / 1000) as usize];
            let out = self.resampler.push(&silence);
            self.pending.extend_from_slice(&out);
        }
        let mut payloads = self.take_full();
        if !self.pending.is_empty() {
            payloads.push(pcm16_bytes(&self.pending));
            self.pending.clear();
        }
        payloads
    }
}

/// A WAV file's audio as append chunks (pcm16 bytes): 16-bit PCM at any rate, mono or stereo
/// (channels are averaged), converted to 24 kHz mono and cut in [`CHUNK_MS`] pieces. `what`
/// names the file in the message when it cannot be read.
pub fn wav_chunks(bytes: &[u8], what: &str) -> Result<Vec<Vec<u8>>, AudioError> {
    Ok(wav_at_24k(bytes, what)?
        .chunks(CHUNK_SAMPLES)
        .map(pcm16_bytes)
        .collect())
}

/// [`wav_chunks`] as base64 payloads (the `audio` text of each append).
pub fn wav_payloads(bytes: &[u8], what: &str) -> Result<Vec<String>, AudioError> {
    Ok(wav_at_24k(bytes, what)?
        .chunks(CHUNK_SAMPLES)
        .map(encode_pcm16)
        .collect())
}

fn wav_at_24k(bytes: &[u8], what: &str) -> Result<Vec<f32>, AudioError> {
    let pcm = Pcm::from_wav(bytes, what)?;
    if pcm.samples.is_empty() {
        return Err(AudioError::bad_audio(format!("{what} holds no audio")));
    }
    Ok(pcm.resampled(RATE)?.samples)
}

/// Hand each payload to `send` in order; with `pace`, one every [`CHUNK_MS`] as a microphone
/// would (a server's voice activity expects speech at speaking pace), else all at once. Stops
/// early when `send` returns false (the socket closed) or `cancel` fires; returns how many were
/// sent.
pub async fn send_paced<T: Clone, F, Fut>(
    payloads: &[T],
    pace: bool,
    cancel: &CancellationToken,
    mut send: F,
) -> usize
where
    F: FnMut(T) -> Fut,
    Fut: Future<Output = bool>,
{
    let mut tick = tokio::time::interval(Duration::from_millis(CHUNK_MS as u64));
    // A late tick must not be followed by a burst that would look like fast speech.
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    for (i, p) in payloads.iter().enumerate() {
        if pace {
            tokio::select! {
                _ = cancel.cancelled() => return i,
                _ = tick.tick() => {}
            }
        } else if cancel.is_cancelled() {
            return i;
        }
        if !send(p.clone()).await {
            return i;
        }
    }
    payloads.len()
}

/// Stream an open microphone as append chunks (pcm16 bytes) until `stop` fires (push-to-talk released,
/// hands-free switched off) or the device fails: each payload goes to `send` as soon as it is
/// complete; at `stop` the rest is flushed ([`MicEncoder::flush`]) and sent. The caller then
/// sends `input_audio_buffer.commit` for push-to-talk (hands-free leaves it to the server's voice
/// activity). A device that fails is an error after what was heard has been sent; `send`
/// returning false (the socket closed) ends the pump quietly.
pub async fn pump_capture<F, Fut>(
    mut capture: Capture,
    stop: &CancellationToken,
    mut send: F,
) -> Result<(), AudioError>
where
    F: FnMut(Vec<u8>) -> Fut,
    Fut: Future<Output = bool>,
{
    let mut enc = MicEncoder::new(capture.rate)?;
    let mut failed = None;
    loop {
        let block = tokio::select! {
            _ = stop.cancelled() => break,
            b = capture.blocks.recv() => b,
        };
        match block {
            Some(Ok(b)) => {
                for p in enc.push(&b) {
                    if !send(p).await {
                        return Ok(());
                    }
                }
            }
            Some(Err(e)) => {
                failed = Some(e);
                break;
            }
            None => break,
        }
    }
    drop(capture);
    for p in enc.flush() {
        if !send(p).await {
            break;
        }
    }
    failed.map_or(Ok(()), Err)
}
