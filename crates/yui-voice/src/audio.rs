//! Audio devices behind a platform trait ([`AudioHost`]), as the avatar's desktop is behind
//! `DesktopHost`: play a clip on the output device and know when its last sample has played;
//! open the microphone and read blocks of samples from it; list the devices.
//!
//! The real host is `cpal_host::CpalHost` (cpal; on Linux its PulseAudio backend,
//! which also serves PipeWire through pipewire-pulse). Nothing here opens a device or starts a
//! thread until a clip is played or a capture is opened: with voice off, no audio code runs. The
//! process's host is `voice::hosts::host()`.
//! Every failure is an [`AudioError`] in plain words ("the audio output device … went away while
//! playing"), never a panic.

use super::pcm::Pcm;
use super::stream_out::{OpenStream, StreamFeed};
use async_trait::async_trait;
use serde::Serialize;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// An audio failure. Each shows as one sentence for the user; a device's own error, when the
/// audio system gave one, is kept as the source for the log.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AudioError {
    /// No device of that kind, or the one asked for is not there.
    #[error("{0}")]
    NoDevice(String),
    /// A device could not be used, went away, closed or stopped moving audio.
    #[error("{message}")]
    Device {
        message: String,
        #[source]
        source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
    },
    /// Audio that cannot be played or sent: not base64, an odd byte count, an empty or broken
    /// WAV, a rate that cannot be resampled.
    #[error("{0}")]
    BadAudio(String),
    /// What this host or this moment cannot do (a host without streams, no async runtime).
    #[error("{0}")]
    Unsupported(String),
    /// The reply's audio could not be written to its file.
    #[error("{message}")]
    Write {
        message: String,
        #[source]
        source: Arc<std::io::Error>,
    },
}

impl AudioError {
    pub fn no_device(why: impl Into<String>) -> Self {
        Self::NoDevice(why.into())
    }
    /// A device failed, with no error of the audio system's to keep.
    pub fn device(message: impl Into<String>) -> Self {
        Self::Device {
            message: message.into(),
            source: None,
        }
    }
    /// A device failed with the audio system's `cause`.
    pub fn device_failed(
        message: impl Into<String>,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Device {
            message: message.into(),
            source: Some(Arc::new(cause)),
        }
    }
    pub fn bad_audio(why: impl Into<String>) -> Self {
        Self::BadAudio(why.into())
    }
    pub fn unsupported(why: impl Into<String>) -> Self {
        Self::Unsupported(why.into())
    }
}

impl From<crate::pcm::PcmError> for AudioError {
    fn from(e: crate::pcm::PcmError) -> Self {
        Self::BadAudio(e.to_string())
    }
}

impl From<AudioError> for yui_base::CoreError {
    fn from(e: AudioError) -> Self {
        yui_base::CoreError::new(yui_base::ErrorCode::Internal, e.to_string()).with_source(e)
    }
}

/// How a clip's playback ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Played {
    /// The last sample has played.
    Finished { ms: u64 },
    /// Stopped early; about `ms` of the clip had been heard.
    Cancelled { ms: u64 },
}

/// The devices a host offers (names as the user sees them), and the defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct DeviceList {
    pub host: String,
    pub outputs: Vec<String>,
    pub inputs: Vec<String>,
    pub default_output: Option<String>,
    pub default_input: Option<String>,
}

/// An open microphone: blocks of mono samples at `rate` arrive on `blocks` until the capture is
/// dropped (which closes the device) or the device fails (one `Err`, then the channel ends).
pub struct Capture {
    pub rate: u32,
    pub device: String,
    pub blocks: mpsc::Receiver<Result<Vec<f32>, AudioError>>,
    /// Keeps the device open; dropping it closes the device.
    pub(crate) _keep: Box<dyn Send>,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field("rate", &self.rate)
            .field("device", &self.device)
            .finish()
    }
}

impl Capture {
    /// A capture whose device stays open as long as `keep` lives (another platform's host, or a
    /// test's microphone in memory).
    pub fn new(
        rate: u32,
        device: String,
        blocks: mpsc::Receiver<Result<Vec<f32>, AudioError>>,
        keep: Box<dyn Send>,
    ) -> Self {
        Self {
            rate,
            device,
            blocks,
            _keep: keep,
        }
    }

    /// Close the device now (what it already sent stays readable).
    pub(crate) fn close(&mut self) {
        self._keep = Box::new(());
    }

    /// Read for `ms` milliseconds of audio (or until the device fails or the token fires) into
    /// one clip. A device that fails before anything arrived is an error; after, what was heard
    /// is kept and the error is logged.
    pub async fn record(&mut self, ms: u64, cancel: &CancellationToken) -> Result<Pcm, AudioError> {
        let want = (self.rate as u64 * ms / 1000) as usize;
        let mut samples = Vec::with_capacity(want);
        // A device that delivers nothing (a stalled server) must not hold the caller forever.
        let bound = std::time::Duration::from_millis(ms + 5_000);
        let deadline = tokio::time::Instant::now() + bound;
        while samples.len() < want {
            let block = tokio::select! {
                _ = cancel.cancelled() => break,
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(AudioError::device(format!(
                        "the microphone \"{}\" stopped sending audio", self.device
                    )))
                }
                b = self.blocks.recv() => b,
            };
            match block {
                Some(Ok(b)) => samples.extend_from_slice(&b),
                Some(Err(e)) if samples.is_empty() => return Err(e),
                Some(Err(e)) => {
                    tracing::warn!(
                        "voice: {e}; keeping the {} ms heard",
                        samples.len() as u64 * 1000 / self.rate.max(1) as u64
                    );
                    break;
                }
                None => break,
            }
        }
        samples.truncate(want);
        Ok(Pcm::new(self.rate, samples))
    }
}

/// The platform's audio devices.
#[async_trait]
pub trait AudioHost: Send + Sync {
    /// The output and input devices.
    fn devices(&self) -> Result<DeviceList, AudioError>;

    /// Play `pcm` on `device` (`None`: the default output) and return once its last sample has
    /// played, or as soon as `cancel` fires (then the device stops at once).
    async fn play(
        &self,
        pcm: &Pcm,
        device: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Played, AudioError>;

    /// Open `device` (`None`: the default input) for capture.
    async fn capture(&self, device: Option<&str>) -> Result<Capture, AudioError>;

    /// Open `device` (`None`: the default output) for a stream fed while it plays: the device
    /// pulls `feed` ([`StreamFeed::pull`]) until the returned handle is dropped. The realtime
    /// reply plays through this. A host that cannot stream says so in plain words.
    async fn open_stream(
        &self,
        feed: Arc<StreamFeed>,
        device: Option<&str>,
    ) -> Result<OpenStream, AudioError> {
        let _ = (feed, device);
        Err(AudioError::unsupported(
            "this audio host cannot play a stream of audio",
        ))
    }
}
