//! Listening: the one pipeline from a microphone (or a clip) to what the user said. Capture →
//! resampling → voice activity → utterances runs on its own thread (`pipe.rs`); each utterance
//! then goes to speech-to-text, in order, while capture goes on. The app's microphone (the
//! stage's `mic.rs`, hands-free and push-to-talk) and `yui listen` both run it; what an
//! utterance means, and for whom, is the caller's business.
//!
//! The stream says when the user starts speaking ([`ListenEvent::Onset`], for barge-in), when the
//! half-duplex pause drops audio because a character speaks ([`ListenPhase::Paused`]), each
//! utterance's words, and why it ended. Audio stays in memory: nothing is written to disk.

mod pipe;
mod wait;

use crate::audio::{AudioError, AudioHost, Capture};
use crate::pcm::{Pcm, STT_RATE};
use crate::stt::{transcribe, SpeechError, SttRequest};
use crate::vad::{Segment, VadConfig};
use async_trait::async_trait;
use serde::Serialize;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// One utterance and the words speech-to-text heard in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Utterance {
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

/// Turns an utterance's audio into words (a speech-to-text server; the app reads its settings
/// for each utterance, so a change applies to the next one).
#[async_trait]
pub trait Transcriber: Send + Sync {
    async fn transcribe(&self, clip: &Pcm) -> Result<String, SpeechError>;
}

#[async_trait]
impl Transcriber for SttRequest {
    async fn transcribe(&self, clip: &Pcm) -> Result<String, SpeechError> {
        transcribe(self, clip).await
    }
}

/// How the audio is cut into what goes to speech-to-text.
#[derive(Debug, Clone)]
pub enum Cut {
    /// Each utterance voice activity finds, as soon as it ends (hands-free, `yui listen`).
    Utterances,
    /// Everything until `release` fires (or `max_ms`) is one utterance, trimmed to the speech in
    /// it (push-to-talk).
    Hold {
        release: CancellationToken,
        max_ms: u64,
    },
}

/// What a listening session does.
#[derive(Clone)]
pub struct ListenSpec {
    pub vad: VadConfig,
    pub cut: Cut,
    /// Stop after this much audio (`yui listen --seconds`); `None`: until stopped.
    pub max_ms: Option<u64>,
    /// Half duplex: while this says a character speaks, audio is dropped. `None`: full duplex.
    pub pause_while: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
}

impl ListenSpec {
    /// Utterances until stopped, full duplex.
    pub fn utterances(vad: VadConfig) -> Self {
        Self {
            vad,
            cut: Cut::Utterances,
            max_ms: None,
            pause_while: None,
        }
    }
}

/// What the microphone is doing while a session is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenPhase {
    Listening,
    /// The user is speaking (an utterance is open).
    Hearing,
    /// Audio is dropped while a character speaks (half duplex).
    Paused,
}

/// Why a session ended.
#[derive(Debug, Clone)]
pub enum EndReason {
    /// The stop token fired.
    Stopped,
    /// `max_ms` of audio, or a hold's release.
    Done,
    /// The source closed (a clip's end; a microphone whose stream ended).
    SourceEnded,
    /// The device failed, went away or stalled.
    Failed(AudioError),
}

/// The session's stream, in order.
#[derive(Debug)]
pub enum ListenEvent {
    /// The phase changed (the session starts listening).
    Phase(ListenPhase),
    /// The user started speaking (40 ms of speech): a barge-in if a character is talking.
    Onset,
    /// Push-to-talk released: the device is closed and the hold goes to speech-to-text.
    Closed,
    /// A hold with no speech in it.
    Silence,
    /// An utterance's words (empty if the server heard none).
    Heard(Utterance),
    /// Speech-to-text failed for one utterance; listening goes on.
    Missed(SpeechError),
    /// The last event: every utterance cut before it has been heard or missed.
    Ended(EndReason),
}

/// A running session. Dropping it stops speech-to-text of what is still queued; the `stop`
/// token given to [`listen`] ends capture (the device closes within a block).
pub struct Listening {
    rx: mpsc::UnboundedReceiver<ListenEvent>,
    task: tokio::task::JoinHandle<()>,
}

impl Listening {
    /// The next event; `None` after [`ListenEvent::Ended`].
    pub async fn next(&mut self) -> Option<ListenEvent> {
        self.rx.recv().await
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Start listening on `cap` (needs a tokio runtime for speech-to-text; the audio itself runs on
/// a thread of its own).
pub fn listen(
    cap: Capture,
    spec: ListenSpec,
    stt: Arc<dyn Transcriber>,
    stop: CancellationToken,
) -> Listening {
    let (raw_tx, mut raw_rx) = mpsc::unbounded_channel();
    let (tx, rx) = mpsc::unbounded_channel();
    let spawned = std::thread::Builder::new()
        .name("yui-listen".into())
        .spawn(move || pipe::run(cap, spec, stop, raw_tx));
    if let Err(e) = spawned {
        let e = AudioError::device_failed("listening could not start", e);
        let _ = tx.send(ListenEvent::Ended(EndReason::Failed(e)));
        let task = tokio::spawn(async {});
        return Listening { rx, task };
    }
    let out = tx.clone();
    let task = tokio::spawn(async move {
        let (utt_tx, mut utt_rx) = mpsc::unbounded_channel::<Segment>();
        let forward = async {
            let mut end = EndReason::SourceEnded;
            while let Some(raw) = raw_rx.recv().await {
                let ev = match raw {
                    pipe::Raw::Utterance(s) => {
                        let _ = utt_tx.send(s);
                        continue;
                    }
                    pipe::Raw::Ended(r) => {
                        end = r;
                        break;
                    }
                    pipe::Raw::Phase(p) => ListenEvent::Phase(p),
                    pipe::Raw::Onset => ListenEvent::Onset,
                    pipe::Raw::Closed => ListenEvent::Closed,
                    pipe::Raw::Silence => ListenEvent::Silence,
                };
                let _ = out.send(ev);
            }
            drop(utt_tx);
            end
        };
        // Each utterance is transcribed as soon as it is cut, in order, while capture goes on.
        let hear = async {
            while let Some(s) = utt_rx.recv().await {
                let clip = Pcm::new(STT_RATE, s.samples);
                let ev = match stt.transcribe(&clip).await {
                    Ok(text) => ListenEvent::Heard(Utterance {
                        start_ms: s.start_ms,
                        end_ms: s.end_ms,
                        text,
                    }),
                    Err(e) => ListenEvent::Missed(e),
                };
                let _ = out.send(ev);
            }
        };
        let (end, ()) = tokio::join!(forward, hear);
        let _ = out.send(ListenEvent::Ended(end));
    });
    Listening { rx, task }
}

/// Hand each utterance to `on_heard` until the session ends; how many there were. A failed
/// transcription or device ends it with the error.
async fn collect(
    mut l: Listening,
    on_heard: &mut (dyn FnMut(Utterance) + Send),
) -> Result<usize, ListenError> {
    let mut count = 0;
    while let Some(ev) = l.next().await {
        match ev {
            ListenEvent::Heard(u) => {
                count += 1;
                on_heard(u);
            }
            ListenEvent::Missed(e) => return Err(e.into()),
            ListenEvent::Ended(EndReason::Failed(e)) => return Err(e.into()),
            ListenEvent::Ended(_) => break,
            _ => {}
        }
    }
    Ok(count)
}

/// Every utterance of a clip, through the same pipeline as the microphone; `on_heard` sees each
/// as it comes. Returns how many utterances there were.
pub async fn listen_clip(
    clip: &Pcm,
    vad: VadConfig,
    stt: Arc<dyn Transcriber>,
    on_heard: &mut (dyn FnMut(Utterance) + Send),
) -> Result<usize, ListenError> {
    let audio = clip.resampled(STT_RATE).map_err(AudioError::from)?;
    // The whole clip waits in the channel, in 40 ms blocks, and the channel then ends.
    let blocks: Vec<Vec<f32>> = audio.samples.chunks(640).map(<[f32]>::to_vec).collect();
    let (tx, rx) = mpsc::channel(blocks.len().max(1));
    for b in blocks {
        let _ = tx.try_send(Ok(b));
    }
    drop(tx);
    let cap = Capture::new(STT_RATE, "the clip".into(), rx, Box::new(()));
    let l = listen(
        cap,
        ListenSpec::utterances(vad),
        stt,
        CancellationToken::new(),
    );
    collect(l, on_heard).await
}

/// Listen on the microphone for `ms` milliseconds (or until `cancel`): utterances are sent to
/// speech-to-text as soon as each ends, while capture goes on. Returns how many there were.
pub async fn listen_mic(
    host: Arc<dyn AudioHost>,
    device: Option<&str>,
    ms: u64,
    vad: VadConfig,
    stt: Arc<dyn Transcriber>,
    cancel: &CancellationToken,
    on_heard: &mut (dyn FnMut(Utterance) + Send),
) -> Result<usize, ListenError> {
    let cap = host.capture(device).await?;
    let spec = ListenSpec {
        max_ms: Some(ms),
        ..ListenSpec::utterances(vad)
    };
    collect(listen(cap, spec, stt, cancel.clone()), on_heard).await
}

#[cfg(test)]
mod tests;
