//! Audio in memory: mono `f32` samples at a rate ([`Pcm`]), WAV in and out (hound), rate
//! conversion (rubato's FFT resampler: the speech servers speak 16, 22.05 or 24 kHz, devices
//! usually 44.1 or 48 kHz), and the lip-sync [`Envelope`] (RMS per 20 ms).
//!
//! Every read of bytes from a file or a server ends in a [`Pcm`] or a plain-words message;
//! nothing here panics on what it is given.

use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{Fft, FixedSync, Resampler};
use serde::Serialize;
use std::io::Cursor;
use std::sync::Arc;

/// Why audio could not be read or converted, in plain words (the cause kept for the log).
#[derive(Debug, Clone, thiserror::Error)]
pub enum PcmError {
    /// Not a WAV file this reads, or a damaged one (the message names the source).
    #[error("{message}")]
    Wav {
        message: String,
        #[source]
        source: Option<Arc<hound::Error>>,
    },
    /// The audio cannot be converted between the two rates.
    #[error("{message}")]
    Resample {
        message: String,
        #[source]
        source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    },
}

impl PcmError {
    fn wav(message: String, source: Option<hound::Error>) -> Self {
        Self::Wav {
            message,
            source: source.map(Arc::new),
        }
    }

    fn resample(message: String, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Resample {
            message,
            source: Some(Arc::new(source)),
        }
    }
}

/// The rate speech-to-text servers get (whisper's own rate).
pub const STT_RATE: u32 = 16_000;
/// One envelope frame, in milliseconds (what peers use for amplitude lip sync).
pub const ENVELOPE_FRAME_MS: u32 = 20;

/// Mono audio: samples in −1…1 at `rate` per second.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pcm {
    pub rate: u32,
    pub samples: Vec<f32>,
}

impl Pcm {
    pub fn new(rate: u32, samples: Vec<f32>) -> Self {
        Self { rate, samples }
    }

    /// How long it plays, in milliseconds.
    pub fn duration_ms(&self) -> u64 {
        if self.rate == 0 {
            return 0;
        }
        self.samples.len() as u64 * 1000 / self.rate as u64
    }

    /// The RMS level of the whole clip (0 for silence).
    pub fn rms(&self) -> f32 {
        rms(&self.samples)
    }

    /// Read a WAV file's bytes: 16-bit PCM (any rate, any channel count: channels are averaged).
    /// `what` names the source in the message ("speech.wav", "the speech server's reply").
    pub fn from_wav(bytes: &[u8], what: &str) -> Result<Pcm, PcmError> {
        let reader = hound::WavReader::new(Cursor::new(bytes)).map_err(|e| {
            PcmError::wav(
                format!("{what} is not a WAV file YUI can read ({e})"),
                Some(e),
            )
        })?;
        let spec = reader.spec();
        if spec.sample_format != hound::SampleFormat::Int || spec.bits_per_sample != 16 {
            let kind = match spec.sample_format {
                hound::SampleFormat::Float => format!("{}-bit float", spec.bits_per_sample),
                hound::SampleFormat::Int => format!("{}-bit", spec.bits_per_sample),
            };
            return Err(PcmError::wav(format!(
                "{what} is {kind} WAV; YUI reads 16-bit PCM WAV (convert it, e.g. `sox IN.wav -b 16 OUT.wav`)"
            ), None));
        }
        if spec.channels == 0 || spec.sample_rate == 0 {
            return Err(PcmError::wav(
                format!("{what} declares no channels or no sample rate"),
                None,
            ));
        }
        let channels = spec.channels as usize;
        let mut samples = Vec::with_capacity(reader.len() as usize / channels);
        let mut frame = 0f32;
        let mut n = 0usize;
        for s in reader.into_samples::<i16>() {
            let s = s.map_err(|e| {
                PcmError::wav(format!("{what} is cut short or damaged ({e})"), Some(e))
            })?;
            frame += s as f32 / 32768.0;
            n += 1;
            if n == channels {
                samples.push(frame / channels as f32);
                frame = 0.0;
                n = 0;
            }
        }
        Ok(Pcm::new(spec.sample_rate, samples))
    }

    /// Raw little-endian signed 16-bit mono at `rate` (OpenAI's `pcm` response format).
    pub fn from_s16le(bytes: &[u8], rate: u32) -> Pcm {
        let samples = bytes
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32 / 32768.0)
            .collect();
        Pcm::new(rate, samples)
    }

    /// This audio as a 16-bit mono WAV file.
    pub fn to_wav(&self) -> Vec<u8> {
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: self.rate.max(1),
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut out = Cursor::new(Vec::with_capacity(44 + self.samples.len() * 2));
        {
            // Writing into memory fails only on a size overflow (> 4 GiB), which a WAV of
            // speech never reaches; an error leaves what was written.
            if let Ok(mut w) = hound::WavWriter::new(&mut out, spec) {
                for s in &self.samples {
                    if w.write_sample(to_i16(*s)).is_err() {
                        break;
                    }
                }
                let _ = w.finalize();
            }
        }
        out.into_inner()
    }

    /// The same audio at `rate` (a copy when the rate already matches).
    pub fn resampled(&self, rate: u32) -> Result<Pcm, PcmError> {
        if rate == self.rate || self.samples.is_empty() {
            return Ok(Pcm::new(rate, self.samples.clone()));
        }
        if self.rate == 0 || rate == 0 {
            return Err(PcmError::Resample {
                message: "cannot resample audio with a sample rate of 0".into(),
                source: None,
            });
        }
        let from = self.rate;
        let words =
            |e: &dyn std::fmt::Display| format!("cannot resample {from} Hz to {rate} Hz: {e}");
        let mut r = Fft::<f32>::new(from as usize, rate as usize, 1024, 1, FixedSync::Input)
            .map_err(|e| PcmError::resample(words(&e), e))?;
        let input = InterleavedSlice::new(&self.samples[..], 1, self.samples.len())
            .map_err(|e| PcmError::resample(format!("cannot resample: {e}"), e))?;
        let out = r
            .process_all(&input, self.samples.len(), None)
            .map_err(|e| PcmError::resample(words(&e), e))?;
        Ok(Pcm::new(rate, out.take_data()))
    }

    /// The lip-sync envelope of this audio.
    pub fn envelope(&self) -> Envelope {
        Envelope::of(self)
    }
}

/// Rate conversion of a stream that arrives in blocks (the microphone), with state kept across
/// blocks so block edges leave no clicks.
pub struct StreamResampler {
    inner: Option<Fft<f32>>,
    pending: Vec<f32>,
}

impl StreamResampler {
    pub fn new(from: u32, to: u32) -> Result<Self, PcmError> {
        Self::with_chunk(from, to, 1024)
    }

    /// A resampler that converts `chunk` input frames at a time (rounded up by rubato to what the
    /// rate pair allows): a smaller chunk holds audio back for less time (the realtime
    /// microphone converts 20 ms at a time).
    pub fn with_chunk(from: u32, to: u32, chunk: usize) -> Result<Self, PcmError> {
        let inner = if from == to {
            None
        } else {
            Some(
                Fft::<f32>::new(
                    from as usize,
                    to as usize,
                    chunk.max(1),
                    1,
                    FixedSync::Input,
                )
                .map_err(|e| {
                    PcmError::resample(format!("cannot resample {from} Hz to {to} Hz: {e}"), e)
                })?,
            )
        };
        Ok(Self {
            inner,
            pending: Vec::new(),
        })
    }

    /// Feed a block; returns what is ready at the output rate.
    pub fn push(&mut self, block: &[f32]) -> Vec<f32> {
        let Some(r) = self.inner.as_mut() else {
            return block.to_vec();
        };
        self.pending.extend_from_slice(block);
        let mut out = Vec::new();
        loop {
            let need = r.input_frames_next();
            if self.pending.len() < need {
                return out;
            }
            let chunk: Vec<f32> = self.pending.drain(..need).collect();
            let Ok(input) = InterleavedSlice::new(&chunk[..], 1, need) else {
                return out;
            };
            match r.process(&input, None) {
                Ok(o) => out.extend(o.take_data()),
                Err(e) => {
                    tracing::warn!("voice: resampling failed: {e}");
                    return out;
                }
            }
        }
    }
}

/// A sample as 16-bit, clipped.
pub fn to_i16(s: f32) -> i16 {
    (s.clamp(-1.0, 1.0) * 32767.0).round() as i16
}

/// Root mean square of some samples (0 for none).
pub fn rms(samples: &[f32]) -> f32 {
    if samples.is_empty() {
        return 0.0;
    }
    let sum: f64 = samples.iter().map(|s| (*s as f64) * (*s as f64)).sum();
    (sum / samples.len() as f64).sqrt() as f32
}

/// How loud an utterance is over time: the RMS of each 20 ms of the audio, divided by the
/// loudest frame's (so 1.0 is the utterance's loudest moment and 0.0 silence). Computed once when
/// the audio is made and sent with it, so the window moves the mouth from a table, not from a
/// per-frame stream.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Envelope {
    /// Milliseconds per level (20).
    pub frame_ms: u32,
    /// One level per frame, 0…1, rounded to 1/1000.
    pub levels: Vec<f32>,
    /// The loudest frame's RMS before scaling (0…1 of full scale), so a quiet clip can still be
    /// told apart from a loud one.
    pub peak_rms: f32,
}

impl Envelope {
    pub fn of(pcm: &Pcm) -> Envelope {
        let per = (pcm.rate as usize * ENVELOPE_FRAME_MS as usize / 1000).max(1);
        let raw: Vec<f32> = pcm.samples.chunks(per).map(rms).collect();
        let peak = raw.iter().copied().fold(0.0f32, f32::max);
        let levels = raw
            .iter()
            .map(|r| {
                if peak > 0.0 {
                    (r / peak * 1000.0).round() / 1000.0
                } else {
                    0.0
                }
            })
            .collect();
        Envelope {
            frame_ms: ENVELOPE_FRAME_MS,
            levels,
            peak_rms: peak,
        }
    }

    /// How long the envelope covers, in milliseconds.
    pub fn duration_ms(&self) -> u64 {
        self.levels.len() as u64 * self.frame_ms as u64
    }
}

/// Audio made for one utterance, with its envelope: what the stage sends with the utterance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SpokenAudio {
    pub pcm: Pcm,
    pub envelope: Envelope,
}

impl SpokenAudio {
    pub fn new(pcm: Pcm) -> Self {
        let envelope = pcm.envelope();
        Self { pcm, envelope }
    }
}

/// Pearson correlation of two level series over their common length (0 when either is flat):
/// how well a recording's loudness follows what was played.
pub fn correlation(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    if n < 2 {
        return 0.0;
    }
    let (a, b) = (&a[..n], &b[..n]);
    let ma = a.iter().sum::<f32>() / n as f32;
    let mb = b.iter().sum::<f32>() / n as f32;
    let (mut num, mut da, mut db) = (0f32, 0f32, 0f32);
    for i in 0..n {
        let (x, y) = (a[i] - ma, b[i] - mb);
        num += x * y;
        da += x * x;
        db += y * y;
    }
    if da <= f32::EPSILON || db <= f32::EPSILON {
        return 0.0;
    }
    num / (da.sqrt() * db.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(rate: u32, ms: u32, amp: f32) -> Pcm {
        let n = (rate * ms / 1000) as usize;
        Pcm::new(
            rate,
            (0..n)
                .map(|i| amp * (i as f32 * 440.0 * std::f32::consts::TAU / rate as f32).sin())
                .collect(),
        )
    }

    #[test]
    fn wav_round_trip_keeps_rate_length_and_level() {
        let p = tone(22_050, 500, 0.5);
        let back = Pcm::from_wav(&p.to_wav(), "clip").unwrap();
        assert_eq!(back.rate, 22_050);
        assert_eq!(back.samples.len(), p.samples.len());
        assert!((back.rms() - p.rms()).abs() < 0.001);
    }

    #[test]
    fn stereo_is_averaged_and_float_wav_is_refused_in_plain_words() {
        let spec = hound::WavSpec {
            channels: 2,
            sample_rate: 8000,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut c = Cursor::new(Vec::new());
        let mut w = hound::WavWriter::new(&mut c, spec).unwrap();
        for _ in 0..10 {
            w.write_sample(16384i16).unwrap();
            w.write_sample(0i16).unwrap();
        }
        w.finalize().unwrap();
        let p = Pcm::from_wav(c.get_ref(), "st.wav").unwrap();
        assert_eq!(p.samples.len(), 10);
        assert!((p.samples[0] - 0.25).abs() < 1e-4);

        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: 16000,
            bits_per_sample: 32,
            sample_format: hound::SampleFormat::Float,
        };
        let mut c = Cursor::new(Vec::new());
        let mut w = hound::WavWriter::new(&mut c, spec).unwrap();
        w.write_sample(0.5f32).unwrap();
        w.finalize().unwrap();
        let e = Pcm::from_wav(c.get_ref(), "f.wav").unwrap_err().to_string();
        assert!(e.contains("f.wav is 32-bit float WAV"), "{e}");
        let e = Pcm::from_wav(b"RIFF garbage", "the reply")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("the reply is not a WAV file"), "{e}");
    }

    #[test]
    fn resampling_keeps_duration_and_level() {
        let p = tone(24_000, 1000, 0.5);
        let r = p.resampled(16_000).unwrap();
        assert_eq!(r.rate, 16_000);
        assert!(
            (r.samples.len() as i64 - 16_000).abs() < 200,
            "{}",
            r.samples.len()
        );
        assert!(
            (r.rms() - p.rms()).abs() < 0.02,
            "{} vs {}",
            r.rms(),
            p.rms()
        );
        let up = tone(16_000, 500, 0.3).resampled(48_000).unwrap();
        assert!((up.samples.len() as i64 - 24_000).abs() < 300);
    }

    #[test]
    fn envelope_is_20ms_rms_scaled_to_the_peak() {
        let mut p = tone(16_000, 200, 0.8);
        p.samples.extend(vec![0.0; 3200]); // 200 ms of silence
        p.samples.extend(tone(16_000, 200, 0.2).samples);
        let e = p.envelope();
        assert_eq!(e.frame_ms, 20);
        assert_eq!(e.levels.len(), 30);
        assert!((e.levels[0] - 1.0).abs() < 0.01);
        assert_eq!(e.levels[15], 0.0);
        assert!((e.levels[25] - 0.25).abs() < 0.02, "{}", e.levels[25]);
        assert!((e.peak_rms - 0.8 / 2f32.sqrt()).abs() < 0.01);
        assert_eq!(e.duration_ms(), 600);
        assert_eq!(
            Pcm::new(16_000, vec![0.0; 320]).envelope().levels,
            vec![0.0]
        );
        assert!(correlation(&e.levels, &e.levels) > 0.999);
    }

    #[test]
    fn raw_pcm_reads_little_endian() {
        let p = Pcm::from_s16le(&[0x00, 0x40, 0x00, 0xC0, 0x01], 24_000);
        assert_eq!(p.samples, vec![0.5, -0.5]);
    }
}
