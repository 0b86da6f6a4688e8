//! An output stream fed while it plays (a realtime reply arrives in pieces and must start with the
//! first one): the queue between whoever pushes audio and the device's callback, and the exact
//! account of what the device was given and what has been heard.
//!
//! [`StreamFeed`] is platform-neutral: the pusher appends mono samples at the feed's rate; the
//! platform's output callback calls [`StreamFeed::pull`] with its buffer, the device's rate and
//! how long the device still holds before what it is given now is heard (cpal's
//! `playback − callback` timestamps). When the queue runs dry the callback gets silence, which is
//! not counted as the feed's audio. When the device runs at another rate than the feed (ALSA
//! hardware; PulseAudio and PipeWire take 24 kHz as is and resample themselves) `pull` converts
//! by linear interpolation, good enough for speech and free of the block delay an FFT resampler
//! would add to every stop.
//!
//! Positions are counted in the feed's samples since the feed was made:
//! - *pushed*: appended by the pusher;
//! - *handed*: taken off the queue by the device (it will be heard unless the device fails);
//! - *heard*: handed minus what the device still held at its last callback, advanced by the time
//!   since (never past what was handed, never backwards).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Runs of audio (not silence) remembered to map a device frame back to a feed position: enough
/// for several seconds of callbacks, far more than any device's latency.
const RUNS_KEPT: usize = 256;

/// Real audio written to the device in one callback: `dev_len` device frames from `dev_start`,
/// carrying feed samples `[pos_start, pos_start + pos_len)`.
#[derive(Debug, Clone, Copy)]
struct Run {
    dev_start: u64,
    dev_len: u64,
    pos_start: u64,
    pos_len: u64,
}

/// An open output stream ([`super::audio::AudioHost::open_stream`]): the device pulls from its
/// feed until this is dropped, which closes the device.
pub struct OpenStream {
    /// The device's name, as the user sees it.
    pub device: String,
    /// The rate the device runs at (the feed's when it takes it).
    pub rate: u32,
    _keep: Box<dyn Send>,
}

impl OpenStream {
    /// A stream whose device stays open as long as `keep` lives.
    pub fn new(device: String, rate: u32, keep: Box<dyn Send>) -> Self {
        Self {
            device,
            rate,
            _keep: keep,
        }
    }
}

impl std::fmt::Debug for OpenStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenStream")
            .field("device", &self.device)
            .field("rate", &self.rate)
            .finish()
    }
}

/// The device's last callback: when, how many frames it had been given before it, how many it
/// still held then, its rate.
#[derive(Debug, Clone, Copy)]
struct Tick {
    at: Instant,
    before: u64,
    after: u64,
    latency: u64,
    rate: u32,
}

#[derive(Debug, Default)]
struct State {
    queue: VecDeque<f32>,
    pushed: u64,
    handed: u64,
    /// Device frames written (audio and silence).
    written: u64,
    /// Where between the queue's first two samples the next device frame falls (resampling).
    phase: f64,
    runs: VecDeque<Run>,
    tick: Option<Tick>,
    /// The highest heard position reported (heard never goes backwards).
    heard: u64,
    /// Why the device stopped, in plain words.
    failed: Option<String>,
}

/// The queue and the account of one output stream; shared by the pusher and the device's
/// callback (`Arc`). Cheap to lock: every critical section is a copy or a few additions.
#[derive(Debug)]
pub struct StreamFeed {
    rate: u32,
    state: Mutex<State>,
}

impl StreamFeed {
    /// A feed of mono samples at `rate` per second.
    pub fn new(rate: u32) -> Arc<StreamFeed> {
        Arc::new(StreamFeed {
            rate: rate.max(1),
            state: Mutex::new(State::default()),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves plain numbers behind: keep using them.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The feed's rate.
    pub fn rate(&self) -> u32 {
        self.rate
    }

    /// Append samples; returns the pushed position after them.
    pub fn push(&self, samples: &[f32]) -> u64 {
        let mut s = self.state();
        s.queue.extend(samples.iter().copied());
        s.pushed += samples.len() as u64;
        s.pushed
    }

    /// Drop everything not yet handed to the device (it goes silent once it has played what it
    /// holds: at most one buffer). The pushed position becomes the handed one, which is returned.
    pub fn clear(&self) -> u64 {
        let mut s = self.state();
        s.queue.clear();
        s.phase = 0.0;
        s.pushed = s.handed;
        s.handed
    }

    /// Samples pushed so far.
    pub fn pushed(&self) -> u64 {
        self.state().pushed
    }

    /// Samples the device has taken so far.
    pub fn handed(&self) -> u64 {
        self.state().handed
    }

    /// Samples waiting for the device.
    pub fn queued(&self) -> usize {
        self.state().queue.len()
    }

    /// Samples heard by `now`: handed, minus what the device held at its last callback, plus the
    /// time since at the device's pace.
    pub fn heard_at(&self, now: Instant) -> u64 {
        let mut s = self.state();
        let Some(t) = s.tick else { return 0 };
        let since = now.saturating_duration_since(t.at).as_secs_f64();
        // What the device got before this callback starts to be heard `latency` after it.
        let dev = t.before as f64 - t.latency as f64 + since * t.rate as f64;
        let dev = (dev.max(0.0) as u64).min(t.after);
        let pos = position_at(&s.runs, dev).min(s.handed);
        let pos = pos.max(s.heard);
        s.heard = pos;
        pos
    }

    /// [`StreamFeed::heard_at`] now.
    pub fn heard(&self) -> u64 {
        self.heard_at(Instant::now())
    }

    /// Everything pushed has been handed and heard (the device has gone quiet).
    pub fn drained(&self) -> bool {
        let pushed = self.pushed();
        self.queued() == 0 && self.heard() >= pushed
    }

    /// The device failed (it went away; `e` in plain words): reported by [`StreamFeed::failure`].
    /// (A string, not `AudioError`: the trait's file imports this one.)
    pub fn fail(&self, e: String) {
        let mut s = self.state();
        if s.failed.is_none() {
            s.failed = Some(e);
        }
    }

    /// Why the device stopped, if it did.
    pub fn failure(&self) -> Option<String> {
        self.state().failed.clone()
    }

    /// The device's callback: fill `out` (mono frames at `device_rate`) from the queue, silence
    /// once it is empty. `latency` is how long the device holds before `out` is heard; `now` is
    /// the callback's instant.
    pub fn pull(&self, out: &mut [f32], device_rate: u32, latency: Duration, now: Instant) {
        let device_rate = device_rate.max(1);
        let mut s = self.state();
        let before = s.written;
        let pos_start = s.handed;
        let mut real = 0usize;
        if device_rate == self.rate {
            let n = out.len().min(s.queue.len());
            for (o, x) in out.iter_mut().zip(s.queue.drain(..n)) {
                *o = x;
            }
            real = n;
            s.handed += n as u64;
        } else {
            // Linear interpolation between the queue's first two samples; a sample leaves the
            // queue once the device has moved past it.
            let step = self.rate as f64 / device_rate as f64;
            for o in out.iter_mut() {
                let (Some(&a), b) = (s.queue.front(), s.queue.get(1).copied()) else {
                    break;
                };
                let b = b.unwrap_or(a);
                *o = a + (b - a) * s.phase as f32;
                real += 1;
                s.phase += step;
                while s.phase >= 1.0 && !s.queue.is_empty() {
                    s.queue.pop_front();
                    s.handed += 1;
                    s.phase -= 1.0;
                }
            }
            if s.queue.is_empty() {
                s.phase = 0.0;
            }
        }
        for o in out[real..].iter_mut() {
            *o = 0.0;
        }
        if real > 0 {
            let run = Run {
                dev_start: before,
                dev_len: real as u64,
                pos_start,
                pos_len: s.handed - pos_start,
            };
            s.runs.push_back(run);
            if s.runs.len() > RUNS_KEPT {
                s.runs.pop_front();
            }
        }
        s.written += out.len() as u64;
        let held = (latency.as_secs_f64() * device_rate as f64) as u64;
        s.tick = Some(Tick {
            at: now,
            before,
            after: s.written,
            latency: held,
            rate: device_rate,
        });
    }
}

/// The feed position heard when the device is at frame `dev`.
fn position_at(runs: &VecDeque<Run>, dev: u64) -> u64 {
    let Some(run) = runs.iter().rev().find(|r| r.dev_start <= dev) else {
        return runs.front().map_or(0, |r| r.pos_start);
    };
    let into = (dev - run.dev_start).min(run.dev_len);
    let pos = if run.dev_len == 0 {
        0
    } else {
        // Proportional within the run (exact when the rates match: pos_len == dev_len).
        (into as u128 * run.pos_len as u128 / run.dev_len as u128) as u64
    };
    run.pos_start + pos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heard_is_handed_minus_what_the_device_holds_and_skips_silence() {
        let f = StreamFeed::new(24_000);
        let t0 = Instant::now();
        f.push(&vec![0.5; 2400]); // 100 ms
        let mut buf = vec![0.0; 480];
        // The device takes 20 ms and holds 40 ms before it is heard.
        f.pull(&mut buf, 24_000, Duration::from_millis(40), t0);
        assert_eq!(f.handed(), 480);
        assert_eq!(f.heard_at(t0), 0);
        for i in 1..5 {
            f.pull(
                &mut buf,
                24_000,
                Duration::from_millis(40),
                t0 + Duration::from_millis(20 * i),
            );
        }
        assert_eq!(f.handed(), 2400);
        // At the 5th callback: 1920 given before, 960 held → 960 heard; 20 ms later 1440.
        assert_eq!(f.heard_at(t0 + Duration::from_millis(80)), 960);
        assert_eq!(f.heard_at(t0 + Duration::from_millis(100)), 1440);
        // Then silence: the queue is dry, silence is written and never counted.
        f.pull(
            &mut buf,
            24_000,
            Duration::from_millis(40),
            t0 + Duration::from_millis(100),
        );
        assert_eq!(buf, vec![0.0; 480]);
        assert_eq!(f.heard_at(t0 + Duration::from_secs(5)), 2400);
        assert!(f.drained());
        // More audio after a gap: counted from where it was written.
        f.push(&vec![0.5; 480]);
        let t1 = t0 + Duration::from_secs(6);
        f.pull(&mut buf, 24_000, Duration::ZERO, t1);
        assert_eq!(f.heard_at(t1), 2400);
        assert_eq!(f.heard_at(t1 + Duration::from_millis(10)), 2640);
        assert_eq!(f.heard_at(t1 + Duration::from_millis(50)), 2880);
    }

    #[test]
    fn clear_keeps_what_was_handed_and_heard_never_goes_back() {
        let f = StreamFeed::new(24_000);
        let t0 = Instant::now();
        f.push(&vec![0.1; 24_000]);
        let mut buf = vec![0.0; 2400];
        f.pull(&mut buf, 24_000, Duration::from_millis(100), t0);
        assert_eq!(f.heard_at(t0 + Duration::from_millis(150)), 1200);
        assert_eq!(f.clear(), 2400);
        assert_eq!(f.pushed(), 2400);
        assert_eq!(f.queued(), 0);
        f.pull(
            &mut buf,
            24_000,
            Duration::from_millis(100),
            t0 + Duration::from_millis(200),
        );
        assert_eq!(buf, vec![0.0; 2400]);
        assert_eq!(f.heard_at(t0 + Duration::from_millis(150)), 1200);
        assert_eq!(f.heard_at(t0 + Duration::from_secs(1)), 2400);
    }

    #[test]
    fn another_device_rate_is_interpolated_and_counted_in_feed_samples() {
        let f = StreamFeed::new(24_000);
        let ramp: Vec<f32> = (0..2400).map(|i| i as f32 / 2400.0).collect();
        f.push(&ramp);
        let mut buf = vec![0.0; 4800]; // 100 ms at 48 kHz
        let t0 = Instant::now();
        f.pull(&mut buf, 48_000, Duration::ZERO, t0);
        assert!((buf[1] - (ramp[0] + ramp[1]) / 2.0).abs() < 1e-6);
        assert!((buf[200] - ramp[100]).abs() < 1e-6);
        assert!(f.handed() >= 2398, "{}", f.handed());
        let h = f.heard_at(t0 + Duration::from_millis(50));
        assert!((1195..=1205).contains(&h), "{h}");
    }
}
