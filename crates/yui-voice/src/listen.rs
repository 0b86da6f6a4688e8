//! Listening: audio (a whole clip, or the microphone for a while) through voice activity
//! detection into utterances, each sent to speech-to-text, heard in order as
//! `{start_ms, end_ms, text}`. Audio stays in memory: nothing is written to disk.

use super::audio::{AudioError, AudioHost};
use super::pcm::{Pcm, StreamResampler, STT_RATE};
use super::stt::{transcribe, SpeechError, SttRequest};
use super::vad::{Segment, Vad, VadConfig};
use serde::Serialize;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// One utterance and what the server heard in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Heard {
    pub start_ms: u64,
    pub end_ms: u64,
    pub text: String,
}

/// Why listening stopped short.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ListenError {
    #[error("{0}")]
    Speech(#[from] SpeechError),
    #[error("{0}")]
    Audio(#[from] AudioError),
}

async fn heard(req: &SttRequest, s: &Segment) -> Result<Heard, SpeechError> {
    let text = transcribe(req, &Pcm::new(STT_RATE, s.samples.clone())).await?;
    Ok(Heard {
        start_ms: s.start_ms,
        end_ms: s.end_ms,
        text,
    })
}

/// Every utterance of a clip, transcribed in order; `on_heard` sees each as it comes. Returns how
/// many utterances there were.
pub async fn listen_clip(
    clip: &Pcm,
    vad: VadConfig,
    req: &SttRequest,
    on_heard: &mut (dyn FnMut(Heard) + Send),
) -> Result<usize, SpeechError> {
    let audio = clip.resampled(STT_RATE).map_err(SpeechError::BadAudio)?;
    let segments = super::vad::split(&audio.samples, vad);
    for s in &segments {
        on_heard(heard(req, s).await?);
    }
    Ok(segments.len())
}

/// Listen on the microphone for `ms` milliseconds (or until `cancel`): utterances are sent to
/// speech-to-text as soon as each ends, while capture goes on. Returns how many there were.
pub async fn listen_mic(
    host: Arc<dyn AudioHost>,
    device: Option<&str>,
    ms: u64,
    vad: VadConfig,
    req: &SttRequest,
    cancel: &CancellationToken,
    on_heard: &mut (dyn FnMut(Heard) + Send),
) -> Result<usize, ListenError> {
    let mut cap = host.capture(device).await?;
    let mut rs = StreamResampler::new(cap.rate, STT_RATE).map_err(AudioError::bad_audio)?;
    let mut det = Vad::new(vad);
    let (tx, mut rx) = mpsc::unbounded_channel::<Segment>();
    let want = cap.rate as u64 * ms / 1000;
    let mut got = 0u64;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(ms + 5_000);
    let capture = async {
        let mut count = 0usize;
        while got < want {
            let block = tokio::select! {
                _ = cancel.cancelled() => break,
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(ListenError::Audio(AudioError::device(format!(
                        "the microphone \"{}\" stopped sending audio", cap.device
                    ))))
                }
                b = cap.blocks.recv() => b,
            };
            let block = match block {
                Some(Ok(b)) => b,
                Some(Err(e)) => return Err(e.into()),
                None => break,
            };
            got += block.len() as u64;
            for s in det.push(&rs.push(&block)) {
                count += 1;
                let _ = tx.send(s);
            }
        }
        if let Some(s) = det.finish() {
            count += 1;
            let _ = tx.send(s);
        }
        drop(tx);
        Ok(count)
    };
    // Each utterance is transcribed (and reported) as soon as it ends, while capture goes on.
    let transcribe_all = async {
        while let Some(s) = rx.recv().await {
            on_heard(heard(req, &s).await?);
        }
        Ok::<(), SpeechError>(())
    };
    let (count, heard_all) = tokio::join!(capture, transcribe_all);
    drop(cap);
    let count = count?;
    heard_all?;
    Ok(count)
}
