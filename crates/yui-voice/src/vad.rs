//! Voice activity detection: 16 kHz audio in, utterances out (start, end, samples).
//!
//! **Energy-based, with an adaptive noise floor**, rather than the `webrtc-vad` crate: webrtc-vad
//! 0.4.0 (2019, no release since) binds C code with a handle that is neither `Send` nor `Sync`,
//! takes only 10/20/30 ms frames of i16 at fixed rates, and exposes no sensitivity finer than 4
//! "aggressiveness" modes, while a level gate over a tracked floor does what hands-free listening
//! needs here — speech that stands out from the room, a sensitivity the user can slide, a
//! hang-over so a pause inside a sentence does not cut it — in a hundred lines with no native
//! build. Its known weakness (loud non-speech noise counts as speech) is the same trade peers make
//! with a plain gate; a model-based VAD (Silero) can replace [`Vad`] behind the same interface.
//!
//! Each 20 ms frame's level (dBFS) is compared with the noise floor (the quietest recent level,
//! rising slowly so a room that gets louder is followed) plus a margin set by the sensitivity,
//! and with an absolute minimum so digital silence is never speech. Three speech frames in a row
//! open an utterance (with 200 ms of audio before it, so the first consonant is kept); a silence
//! longer than the hang-over closes it. Utterances shorter than 250 ms are dropped (a click), and
//! one longer than 30 s is cut there (speech-to-text servers take about 30 s at a time).

use super::pcm::STT_RATE;

const FRAME: usize = (STT_RATE / 50) as usize; // 20 ms
const FRAME_MS: u64 = 20;
const OPEN_FRAMES: u32 = 3;
/// Speech frames in a row that say the user started speaking over a character (barge-in), one
/// frame before an utterance opens: a stop must come quickly, and two frames (40 ms) still let a
/// key click (10–30 ms) pass.
const ONSET_FRAMES: u32 = 2;
const PRE_ROLL_FRAMES: usize = 10;
const MIN_MS: u64 = 250;
const MAX_MS: u64 = 30_000;
/// Below this a frame is never speech (−55 dBFS: a quiet room through a consumer microphone).
const ABS_MIN_DB: f32 = -55.0;
/// The floor before the first frame is known: the first frame's level, but no higher than this,
/// so a clip that starts with speech still hears it.
const FLOOR_START_DB: f32 = -50.0;
/// While "speech" goes on without a pause, the floor still creeps up (0.25 dB/s), so a noise that
/// starts and never stops (a fan) stops counting as speech within a minute.
const FLOOR_CREEP_DB: f32 = 0.005;
/// Between utterances the floor moves a tenth of the way to each frame's level (200 ms).
const FLOOR_FOLLOW: f32 = 0.1;

/// How the detector decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VadConfig {
    /// 0 (only loud, clear speech) … 1 (anything above the room's noise).
    pub sensitivity: f32,
    /// Silence that ends an utterance, in milliseconds.
    pub hangover_ms: u64,
}

impl Default for VadConfig {
    fn default() -> Self {
        Self {
            sensitivity: 0.5,
            hangover_ms: 600,
        }
    }
}

impl VadConfig {
    /// dB above the noise floor that count as speech: 24 dB at sensitivity 0, 6 dB at 1.
    fn margin_db(&self) -> f32 {
        24.0 - 18.0 * self.sensitivity.clamp(0.0, 1.0)
    }
}

/// One utterance: where it starts and ends in the stream, and its 16 kHz samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub start_ms: u64,
    pub end_ms: u64,
    pub samples: Vec<f32>,
}

/// The detector over one stream of 16 kHz mono audio, fed in blocks of any size.
#[derive(Debug)]
pub struct Vad {
    cfg: VadConfig,
    pending: Vec<f32>,
    frames_seen: u64,
    floor_db: f32,
    pre_roll: std::collections::VecDeque<Vec<f32>>,
    run: u32,
    current: Option<Current>,
}

#[derive(Debug)]
struct Current {
    start_frame: u64,
    samples: Vec<f32>,
    last_speech_frame: u64,
}

fn level_db(frame: &[f32]) -> f32 {
    let r = super::pcm::rms(frame).max(1e-6);
    20.0 * r.log10()
}

impl Vad {
    pub fn new(cfg: VadConfig) -> Self {
        Self {
            cfg,
            pending: Vec::new(),
            frames_seen: 0,
            floor_db: FLOOR_START_DB,
            pre_roll: Default::default(),
            run: 0,
            current: None,
        }
    }

    /// Feed samples; returns the utterances this block completed.
    pub fn push(&mut self, samples: &[f32]) -> Vec<Segment> {
        self.pending.extend_from_slice(samples);
        let mut out = Vec::new();
        let whole = self.pending.len() / FRAME * FRAME;
        let frames: Vec<Vec<f32>> = self.pending[..whole]
            .chunks(FRAME)
            .map(<[f32]>::to_vec)
            .collect();
        self.pending.drain(..whole);
        for f in frames {
            if let Some(s) = self.frame(f) {
                out.push(s);
            }
        }
        out
    }

    /// The stream ended: the utterance in progress, if long enough.
    pub fn finish(&mut self) -> Option<Segment> {
        let rest = std::mem::take(&mut self.pending);
        if let Some(c) = self.current.as_mut() {
            c.samples.extend_from_slice(&rest);
        }
        self.close()
    }

    /// Whether an utterance is in progress (the user is speaking).
    pub fn speaking(&self) -> bool {
        self.current.is_some()
    }

    /// Whether the user has started speaking: an utterance is open, or speech has gone on for
    /// [`ONSET_FRAMES`] in a row. Barge-in acts on this, a frame before [`Vad::speaking`].
    pub fn onset(&self) -> bool {
        self.current.is_some() || self.run >= ONSET_FRAMES
    }

    fn frame(&mut self, f: Vec<f32>) -> Option<Segment> {
        let n = self.frames_seen;
        self.frames_seen += 1;
        let db = level_db(&f);
        if n == 0 {
            self.floor_db = db.min(FLOOR_START_DB);
        }
        let speech = db > ABS_MIN_DB.max(self.floor_db + self.cfg.margin_db());
        // The floor follows quieter frames at once, the room's level between utterances, and
        // creeps up under unbroken "speech".
        if db < self.floor_db {
            self.floor_db = db.max(-90.0);
        } else if !speech {
            self.floor_db += FLOOR_FOLLOW * (db - self.floor_db);
        } else {
            self.floor_db += FLOOR_CREEP_DB;
        }
        self.run = if speech { self.run + 1 } else { 0 };
        let mut done = None;
        match self.current.as_mut() {
            Some(c) => {
                c.samples.extend_from_slice(&f);
                if speech {
                    c.last_speech_frame = n;
                }
                let silent_ms = (n - c.last_speech_frame) * FRAME_MS;
                let long_ms = (n + 1 - c.start_frame) * FRAME_MS;
                if silent_ms >= self.cfg.hangover_ms || long_ms >= MAX_MS {
                    done = self.close();
                }
            }
            None => {
                self.pre_roll.push_back(f);
                if self.pre_roll.len() > PRE_ROLL_FRAMES {
                    self.pre_roll.pop_front();
                }
                if self.run >= OPEN_FRAMES {
                    let held = self.pre_roll.len() as u64;
                    let samples: Vec<f32> = self.pre_roll.drain(..).flatten().collect();
                    self.current = Some(Current {
                        start_frame: n + 1 - held,
                        samples,
                        last_speech_frame: n,
                    });
                }
            }
        }
        done
    }

    fn close(&mut self) -> Option<Segment> {
        let c = self.current.take()?;
        self.run = 0;
        // Keep 200 ms after the last speech frame (the tail of the last word), not the whole
        // hang-over of silence.
        let keep_frames = (c.last_speech_frame + 1 - c.start_frame) as usize + PRE_ROLL_FRAMES;
        let mut samples = c.samples;
        samples.truncate(keep_frames * FRAME);
        let start_ms = c.start_frame * FRAME_MS;
        let end_ms = start_ms + samples.len() as u64 * 1000 / STT_RATE as u64;
        let speech_ms = (c.last_speech_frame + 1 - c.start_frame) * FRAME_MS;
        (speech_ms >= MIN_MS).then_some(Segment {
            start_ms,
            end_ms,
            samples,
        })
    }
}

/// Every utterance of a whole clip (16 kHz).
pub fn split(samples: &[f32], cfg: VadConfig) -> Vec<Segment> {
    let mut vad = Vad::new(cfg);
    let mut out = vad.push(samples);
    out.extend(vad.finish());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(ms: u64, amp: f32, seed: &mut u32) -> Vec<f32> {
        (0..ms * 16)
            .map(|_| {
                *seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                amp * ((*seed >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0)
            })
            .collect()
    }

    fn voice(ms: u64, amp: f32) -> Vec<f32> {
        (0..ms * 16)
            .map(|i| amp * (i as f32 * 0.11).sin() * (1.0 + 0.5 * (i as f32 * 0.002).sin()))
            .collect()
    }

    #[test]
    fn two_sentences_with_a_long_pause_are_two_utterances_and_a_short_pause_is_kept() {
        let mut s = 1;
        let mut a = noise(500, 0.002, &mut s);
        a.extend(voice(800, 0.3)); // 500..1300
        a.extend(noise(300, 0.002, &mut s)); // a pause inside the sentence
        a.extend(voice(700, 0.3)); // 1600..2300
        a.extend(noise(1200, 0.002, &mut s));
        a.extend(voice(600, 0.2)); // 3500..4100
        a.extend(noise(800, 0.002, &mut s));
        let u = split(&a, VadConfig::default());
        assert_eq!(
            u.len(),
            2,
            "{:?}",
            u.iter().map(|u| (u.start_ms, u.end_ms)).collect::<Vec<_>>()
        );
        assert!(
            (u[0].start_ms as i64 - 300).abs() <= 60,
            "{}",
            u[0].start_ms
        );
        assert!((u[0].end_ms as i64 - 2500).abs() <= 60, "{}", u[0].end_ms);
        assert!(
            (u[1].start_ms as i64 - 3300).abs() <= 60,
            "{}",
            u[1].start_ms
        );
        assert_eq!(
            u[1].samples.len() as u64,
            (u[1].end_ms - u[1].start_ms) * 16
        );
    }

    #[test]
    fn silence_and_clicks_are_no_utterance() {
        assert!(split(&vec![0.0; 16_000 * 3], VadConfig::default()).is_empty());
        let mut s = 7;
        let mut a = noise(1000, 0.01, &mut s);
        a.extend(voice(100, 0.5)); // a click
        a.extend(noise(1000, 0.01, &mut s));
        assert!(split(&a, VadConfig::default()).is_empty());
    }

    #[test]
    fn sensitivity_decides_whether_quiet_speech_counts() {
        let mut s = 3;
        let mut a = noise(1000, 0.01, &mut s); // about −45 dBFS
        a.extend(voice(800, 0.03)); // about +12 dB over the room
        a.extend(noise(1000, 0.01, &mut s));
        let low = VadConfig {
            sensitivity: 0.0,
            ..Default::default()
        };
        let high = VadConfig {
            sensitivity: 1.0,
            ..Default::default()
        };
        assert!(split(&a, low).is_empty());
        assert_eq!(split(&a, high).len(), 1);
    }

    #[test]
    fn an_utterance_without_a_pause_is_cut_at_30_s_and_an_open_one_ends_with_the_stream() {
        let u = split(&voice(65_000, 0.3), VadConfig::default());
        assert_eq!(u.len(), 3);
        assert!(u[0].end_ms - u[0].start_ms <= MAX_MS + 200);
        let mut v = Vad::new(VadConfig::default());
        assert!(v.push(&voice(1000, 0.3)).is_empty());
        assert!(v.speaking());
        assert!(v.finish().is_some());
    }

    #[test]
    fn onset_is_two_speech_frames_one_before_the_utterance_opens_and_a_single_frame_is_not() {
        let mut s = 5;
        let mut v = Vad::new(VadConfig::default());
        v.push(&noise(400, 0.002, &mut s));
        assert!(!v.onset());
        v.push(&voice(20, 0.3));
        assert!(!v.onset(), "one frame (a click) is no onset");
        v.push(&noise(20, 0.002, &mut s));
        v.push(&voice(20, 0.3));
        assert!(!v.onset());
        v.push(&voice(20, 0.3));
        assert!(
            v.onset() && !v.speaking(),
            "40 ms of speech: onset, no utterance yet"
        );
        v.push(&voice(20, 0.3));
        assert!(v.onset() && v.speaking());
    }
}
