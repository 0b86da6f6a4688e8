//! The [`AudioHost`] on cpal. On Linux cpal is built with its `pulseaudio` backend (a pure-Rust
//! client of the PulseAudio protocol, which PipeWire also serves), chosen first when a server is
//! running; ALSA otherwise. The cpal host is made on first use, so a process that never plays or
//! listens opens no connection and starts no thread.
//!
//! A machine with no sound card lists ALSA's "Default Audio Device" and then fails to open it:
//! such a device is reported as unusable in plain words, like a device that vanishes mid-clip.

use super::audio::{AudioError, AudioHost, Capture, DeviceList, Played};
use super::pcm::Pcm;
use super::stream_out::{OpenStream, StreamFeed};
use async_trait::async_trait;
use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{FromSample, SampleFormat, SizedSample};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How long opening a device may take before it counts as unusable.
const OPEN_TIMEOUT: Duration = Duration::from_secs(5);
/// Blocks of microphone audio held for a slow reader before new ones are dropped (~5 s).
const CAPTURE_QUEUE: usize = 512;

/// cpal's default host, made when first needed; the microphone gets a host of its own.
///
/// Why two: on PulseAudio a cpal host is one client connection whose single reactor carries
/// every stream, and a capture delivering 20 ms blocks on it starved a playback stream on the
/// same connection (the clip's samples were taken late or not at all: "stopped taking audio",
/// found by the e2e test where a spoken question is answered aloud while hands-free listens).
/// Separate connections keep the two directions apart, as two apps would be.
pub struct CpalHost {
    host: OnceLock<cpal::Host>,
    /// The microphone's host (see above).
    capture_host: OnceLock<cpal::Host>,
    /// Streams fed while they play have a host (on PulseAudio: a server connection) of their
    /// own: sharing the connection with an open capture stalled the stream's requests for
    /// seconds (seen on a null sink with its monitor recorded).
    stream_host: OnceLock<cpal::Host>,
}

impl Default for CpalHost {
    fn default() -> Self {
        Self::new()
    }
}

fn name_of(d: &cpal::Device) -> String {
    d.description()
        .map(|x| x.name().to_string())
        .or_else(|_| d.id().map(|i| i.to_string()))
        .unwrap_or_else(|_| "unnamed device".into())
}

/// What a device is called for matching: its description and its id.
fn matches(d: &cpal::Device, wanted: &str) -> bool {
    name_of(d) == wanted || d.id().is_ok_and(|i| i.to_string() == wanted)
}

enum Dir {
    Out,
    In,
}

impl Dir {
    fn what(&self) -> &'static str {
        match self {
            Dir::Out => "audio output device",
            Dir::In => "microphone",
        }
    }
}

impl CpalHost {
    pub fn new() -> Self {
        Self {
            host: OnceLock::new(),
            capture_host: OnceLock::new(),
            stream_host: OnceLock::new(),
        }
    }

    fn host(&self) -> &cpal::Host {
        self.host.get_or_init(cpal::default_host)
    }

    fn device(&self, dir: &Dir, wanted: Option<&str>) -> Result<cpal::Device, AudioError> {
        let host = match dir {
            Dir::Out => self.host(),
            Dir::In => self.capture_host.get_or_init(cpal::default_host),
        };
        device_on(host, dir, wanted)
    }
}

fn device_on(
    host: &cpal::Host,
    dir: &Dir,
    wanted: Option<&str>,
) -> Result<cpal::Device, AudioError> {
    let found = match (wanted, dir) {
        (None, Dir::Out) => host.default_output_device(),
        (None, Dir::In) => host.default_input_device(),
        (Some(w), Dir::Out) => host
            .output_devices()
            .ok()
            .and_then(|mut ds| ds.find(|d| matches(d, w))),
        (Some(w), Dir::In) => host
            .input_devices()
            .ok()
            .and_then(|mut ds| ds.find(|d| matches(d, w))),
    };
    found.ok_or_else(|| match wanted {
            Some(w) => AudioError::no_device(format!(
                "the {} \"{w}\" is not there (unplugged or renamed?); `yui say --devices` lists the devices",
                dir.what()
            )),
            None => AudioError::no_device(format!(
                "no {} found (no sound card, and no PulseAudio or PipeWire server running)",
                dir.what()
            )),
        })
}

fn unusable(
    dir: &Dir,
    name: &str,
    e: impl std::error::Error + Send + Sync + 'static,
) -> AudioError {
    AudioError::device_failed(
        format!("the {} \"{name}\" cannot be used: {e}", dir.what()),
        e,
    )
}

fn vanished(dir: &Dir, name: &str, e: &cpal::Error) -> AudioError {
    match e.kind() {
        cpal::ErrorKind::DeviceNotAvailable | cpal::ErrorKind::StreamInvalidated => {
            AudioError::device(format!("the {} \"{name}\" went away: {e}", dir.what()))
        }
        _ => AudioError::device(format!("the {} \"{name}\" failed: {e}", dir.what())),
    }
}

/// The device's default config with a buffer of about `ms` milliseconds where the device says
/// what it takes. Small buffers matter on PulseAudio: with its defaults a null sink's monitor
/// (and a real one's) delivers audio in 2 s bursts, and a playback stream holds 2 s that a stop
/// cannot take back.
fn with_buffer(supported: &cpal::SupportedStreamConfig, ms: u32) -> cpal::StreamConfig {
    let mut config = supported.config();
    if let cpal::SupportedBufferSize::Range { min, max } = supported.buffer_size() {
        let frames = (config.sample_rate * ms / 1000).clamp(*min, *max);
        config.buffer_size = cpal::BufferSize::Fixed(frames);
    }
    config
}

/// Playback buffer (cpal's PulseAudio backend asks the server for twice this). A stop does not
/// wait for it: the callback goes silent and the stream is deleted at once, which drops what the
/// server still held (the `barge_in` bench: the null sink's monitor is quiet 22–78 ms after the
/// user's speech started). Smaller would only add underruns on a loaded machine.
const PLAY_BUFFER_MS: u32 = 100;
/// Capture buffer: two voice-activity frames. 20 ms woke the app 50 times a second and hands-free
/// idled at 1.18 % of a core; 40 ms: 0.77 % (docs/PERFORMANCE.md), barge-in onset up to 20 ms later.
/// Public so the benches' microphones in memory deliver blocks of the same length.
pub const CAPTURE_BUFFER_MS: u32 = 40;

enum PlayEvent {
    /// The callback wrote the last sample; it reaches the speaker after this much.
    Drained(Duration),
    Failed(cpal::Error),
}

/// Build an output stream of sample type `T` playing `samples` (already at the stream's rate,
/// mono, copied to every channel).
fn build_output<T>(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    samples: Arc<Vec<f32>>,
    pos: Arc<AtomicUsize>,
    stopped: Arc<AtomicBool>,
    events: mpsc::UnboundedSender<PlayEvent>,
) -> Result<cpal::Stream, cpal::Error>
where
    T: SizedSample + FromSample<f32>,
{
    let channels = config.channels.max(1) as usize;
    let rate = config.sample_rate.max(1) as f64;
    let err_tx = events.clone();
    let mut drained = false;
    device.build_output_stream::<T, _, _>(
        *config,
        move |out: &mut [T], info: &cpal::OutputCallbackInfo| {
            if stopped.load(Ordering::Relaxed) {
                // Stopped: nothing more reaches the device while the stream is being closed.
                out.fill(T::from_sample(0.0));
                return;
            }
            let start = pos.load(Ordering::Relaxed);
            let mut i = start;
            for frame in out.chunks_mut(channels) {
                let s = samples.get(i).copied().unwrap_or(0.0);
                if i < samples.len() {
                    i += 1;
                }
                for c in frame.iter_mut() {
                    *c = T::from_sample(s);
                }
            }
            pos.store(i, Ordering::Relaxed);
            if !drained && i >= samples.len() {
                drained = true;
                let ts = info.timestamp();
                let latency = ts.playback.saturating_duration_since(ts.callback);
                let tail = Duration::from_secs_f64((i - start) as f64 / rate);
                let _ = events.send(PlayEvent::Drained(latency + tail));
            }
        },
        move |e| {
            let _ = err_tx.send(PlayEvent::Failed(e));
        },
        Some(OPEN_TIMEOUT),
    )
}

/// Build an output stream of sample type `T` pulling mono audio from `feed` (copied to every
/// channel).
fn build_fed<T>(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    feed: Arc<StreamFeed>,
    name: String,
) -> Result<cpal::Stream, cpal::Error>
where
    T: SizedSample + FromSample<f32>,
{
    let channels = config.channels.max(1) as usize;
    let rate = config.sample_rate;
    let err_feed = feed.clone();
    // Grown once to the device's callback size, then reused: no allocation per callback.
    let mut mono: Vec<f32> = Vec::new();
    device.build_output_stream::<T, _, _>(
        *config,
        move |out: &mut [T], info: &cpal::OutputCallbackInfo| {
            let frames = out.len() / channels;
            if mono.len() < frames {
                mono.resize(frames, 0.0);
            }
            let ts = info.timestamp();
            let latency = ts.playback.saturating_duration_since(ts.callback);
            feed.pull(
                &mut mono[..frames],
                rate,
                latency,
                std::time::Instant::now(),
            );
            for (frame, s) in out.chunks_mut(channels).zip(mono.iter()) {
                for c in frame.iter_mut() {
                    *c = T::from_sample(*s);
                }
            }
        },
        move |e| {
            if e.kind() == cpal::ErrorKind::Xrun {
                tracing::debug!("voice: output underrun");
            } else {
                err_feed.fail(vanished(&Dir::Out, &name, &e).to_string());
            }
        },
        Some(OPEN_TIMEOUT),
    )
}

fn build_input<T>(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    tx: mpsc::Sender<Result<Vec<f32>, AudioError>>,
    name: String,
) -> Result<cpal::Stream, cpal::Error>
where
    T: SizedSample,
    f32: FromSample<T>,
{
    let channels = config.channels.max(1) as usize;
    let err_tx = tx.clone();
    let mut dropped = 0u64;
    device.build_input_stream::<T, _, _>(
        *config,
        move |data: &[T], _: &cpal::InputCallbackInfo| {
            let block: Vec<f32> = data
                .chunks(channels)
                .map(|f| {
                    f.iter()
                        .map(|s| <f32 as FromSample<T>>::from_sample_(*s))
                        .sum::<f32>()
                        / channels as f32
                })
                .collect();
            if tx.try_send(Ok(block)).is_err() {
                dropped += 1;
                if dropped.is_power_of_two() {
                    tracing::warn!(dropped, "voice: microphone audio dropped (reader too slow)");
                }
            }
        },
        move |e| {
            let _ = err_tx.try_send(Err(vanished(&Dir::In, &name, &e)));
        },
        Some(OPEN_TIMEOUT),
    )
}

#[async_trait]
impl AudioHost for CpalHost {
    fn devices(&self) -> Result<DeviceList, AudioError> {
        let host = self.host();
        let names = |ds: Result<_, cpal::Error>| -> Vec<String> {
            ds.map(|ds: cpal::InputDevices<_>| ds.map(|d| name_of(&d)).collect())
                .unwrap_or_default()
        };
        Ok(DeviceList {
            host: host.id().name().to_string(),
            outputs: host
                .output_devices()
                .map(|d| d.map(|d| name_of(&d)).collect())
                .unwrap_or_default(),
            inputs: names(host.input_devices()),
            default_output: host.default_output_device().map(|d| name_of(&d)),
            default_input: host.default_input_device().map(|d| name_of(&d)),
        })
    }

    async fn play(
        &self,
        pcm: &Pcm,
        device: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Played, AudioError> {
        let dir = Dir::Out;
        let dev = self.device(&dir, device)?;
        let name = name_of(&dev);
        let supported = dev
            .default_output_config()
            .map_err(|e| unusable(&dir, &name, e))?;
        let config = with_buffer(&supported, PLAY_BUFFER_MS);
        let rate = config.sample_rate;
        let audio = pcm.resampled(rate)?;
        let total = audio.samples.len();
        let samples = Arc::new(audio.samples);
        let pos = Arc::new(AtomicUsize::new(0));
        let stopped = Arc::new(AtomicBool::new(false));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let built = {
            let (s, p, st) = (samples.clone(), pos.clone(), stopped.clone());
            match supported.sample_format() {
                SampleFormat::I16 => build_output::<i16>(&dev, &config, s, p, st, tx),
                SampleFormat::I32 => build_output::<i32>(&dev, &config, s, p, st, tx),
                SampleFormat::U8 => build_output::<u8>(&dev, &config, s, p, st, tx),
                _ => build_output::<f32>(&dev, &config, s, p, st, tx),
            }
        };
        let stream = built.map_err(|e| unusable(&dir, &name, e))?;
        stream.play().map_err(|e| unusable(&dir, &name, e))?;
        let ms_at = |n: usize| n as u64 * 1000 / rate.max(1) as u64;
        // A device that stops pulling samples must not hold the caller: the clip's length plus
        // a margin for the server's buffer.
        let bound = Duration::from_millis(ms_at(total) + 10_000);
        let deadline = tokio::time::Instant::now() + bound;
        let outcome = loop {
            let ev = tokio::select! {
                _ = cancel.cancelled() => break Ok(Played::Cancelled { ms: ms_at(pos.load(Ordering::Relaxed)) }),
                _ = tokio::time::sleep_until(deadline) => break Err(AudioError::device(format!(
                    "the {} \"{name}\" stopped taking audio", dir.what()
                ))),
                ev = rx.recv() => ev,
            };
            match ev {
                Some(PlayEvent::Drained(rest)) => {
                    tokio::select! {
                        _ = cancel.cancelled() => break Ok(Played::Cancelled { ms: ms_at(total).saturating_sub(rest.as_millis() as u64) }),
                        _ = tokio::time::sleep(rest) => break Ok(Played::Finished { ms: ms_at(total) }),
                    }
                }
                Some(PlayEvent::Failed(e)) if e.kind() == cpal::ErrorKind::Xrun => {
                    tracing::debug!("voice: output underrun");
                }
                Some(PlayEvent::Failed(e)) => break Err(vanished(&dir, &name, &e)),
                None => {
                    break Err(AudioError::device(format!(
                        "the {} \"{name}\" closed",
                        dir.what()
                    )))
                }
            }
        };
        stopped.store(true, Ordering::Relaxed);
        // Dropping the stream deletes it on the server (what it still holds is not played) and
        // joins cpal's worker threads, which can block for good on a server that went away
        // mid-clip: drop it on a thread of its own and do not wait for it.
        let _ = std::thread::Builder::new()
            .name("yui-audio-close".into())
            .spawn(move || drop(stream));
        outcome
    }

    async fn capture(&self, device: Option<&str>) -> Result<Capture, AudioError> {
        let dir = Dir::In;
        let dev = self.device(&dir, device)?;
        let name = name_of(&dev);
        let supported = dev
            .default_input_config()
            .map_err(|e| unusable(&dir, &name, e))?;
        let config = with_buffer(&supported, CAPTURE_BUFFER_MS);
        let (tx, rx) = mpsc::channel(CAPTURE_QUEUE);
        let n = name.clone();
        let built = match supported.sample_format() {
            SampleFormat::I16 => build_input::<i16>(&dev, &config, tx, n),
            SampleFormat::I32 => build_input::<i32>(&dev, &config, tx, n),
            SampleFormat::U8 => build_input::<u8>(&dev, &config, tx, n),
            _ => build_input::<f32>(&dev, &config, tx, n),
        };
        let stream = built.map_err(|e| unusable(&dir, &name, e))?;
        stream.play().map_err(|e| unusable(&dir, &name, e))?;
        Ok(Capture {
            rate: config.sample_rate,
            device: name,
            blocks: rx,
            _keep: Box::new(stream),
        })
    }

    async fn open_stream(
        &self,
        feed: Arc<StreamFeed>,
        device: Option<&str>,
    ) -> Result<OpenStream, AudioError> {
        let dir = Dir::Out;
        let host = self.stream_host.get_or_init(cpal::default_host);
        let dev = device_on(host, &dir, device)?;
        let name = name_of(&dev);
        let default = dev
            .default_output_config()
            .map_err(|e| unusable(&dir, &name, e))?;
        // The feed's own rate where the device takes it (PulseAudio and PipeWire take any rate
        // and resample well themselves); the device's default otherwise (the feed interpolates).
        let want = feed.rate();
        let supported = dev
            .supported_output_configs()
            .ok()
            .and_then(|mut rs| {
                rs.find(|r| {
                    r.min_sample_rate() <= want
                        && want <= r.max_sample_rate()
                        && r.sample_format() == default.sample_format()
                })
            })
            .map(|r| r.with_sample_rate(want))
            .unwrap_or(default);
        let config = with_buffer(&supported, PLAY_BUFFER_MS);
        let n = name.clone();
        let built = match supported.sample_format() {
            SampleFormat::I16 => build_fed::<i16>(&dev, &config, feed, n),
            SampleFormat::I32 => build_fed::<i32>(&dev, &config, feed, n),
            SampleFormat::U8 => build_fed::<u8>(&dev, &config, feed, n),
            _ => build_fed::<f32>(&dev, &config, feed, n),
        };
        let stream = built.map_err(|e| unusable(&dir, &name, e))?;
        stream.play().map_err(|e| unusable(&dir, &name, e))?;
        Ok(OpenStream::new(
            name,
            config.sample_rate,
            Box::new(Closing(Some(stream))),
        ))
    }
}

/// A stream that is dropped on a thread of its own: dropping joins cpal's worker threads, which
/// can block for good on a server that went away.
struct Closing(Option<cpal::Stream>);

impl Drop for Closing {
    fn drop(&mut self) {
        if let Some(stream) = self.0.take() {
            let _ = std::thread::Builder::new()
                .name("yui-audio-close".into())
                .spawn(move || drop(stream));
        }
    }
}
