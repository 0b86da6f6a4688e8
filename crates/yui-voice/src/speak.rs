//! Speaking lines one after the other: the next line is synthesised while the current one plays
//! (so a reply's second sentence is ready when the first ends), each clip is played on the output
//! device until its last sample has played, and the caller hears of each clip's envelope just
//! before it plays (what the stage sends with the utterance for lip sync). An engine that plays
//! by itself (speech-dispatcher) just speaks each line in turn. Lines may still be arriving
//! ([`speak_stream`]: the stage feeds sentences while the model writes); the run ends when the
//! feed closes and the last line has played.

use super::audio::{AudioHost, Played};
use super::pcm::Envelope;
use super::stt::SpeechError;
use super::tts::{Line, Rendered, TtsEngine};
use super::SpeechOutcome;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What the caller is told while lines are spoken.
#[derive(Debug, Clone, PartialEq)]
pub enum SpeakEvent {
    /// Line `index` starts playing now; its envelope (absent for an engine that plays itself).
    Started {
        index: usize,
        text: String,
        envelope: Option<Envelope>,
    },
    /// Line `index` has finished playing (its last sample played).
    Finished { index: usize, ms: u64 },
}

/// How long the audio of a spoken run was, and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeakReport {
    pub outcome: SpeechOutcome,
    /// Milliseconds of audio played (0 for an engine that plays itself).
    pub played_ms: u64,
    /// The line that was cut short (stopped or failed while playing) and how many of its
    /// milliseconds were heard.
    pub cut: Option<(usize, u64)>,
}

/// Speak `lines` in order through `engine`, playing audio on `host` (`None`: the process's, made
/// only when a clip is to be played; `device`: `None` for the default output). Stops at the first failure (reported as `Unavailable` with the reason) or on
/// `cancel`.
pub async fn speak_lines(
    engine: Arc<dyn TtsEngine>,
    host: Option<Arc<dyn AudioHost>>,
    device: Option<String>,
    lines: Vec<Line>,
    cancel: &CancellationToken,
    on_event: &(dyn Fn(SpeakEvent) + Send + Sync),
) -> SpeakReport {
    let (tx, rx) = mpsc::unbounded_channel();
    for l in lines {
        let _ = tx.send(l);
    }
    drop(tx);
    speak_stream(engine, host, device, rx, cancel, on_event).await
}

/// [`speak_lines`] for lines still arriving on `lines`: each is synthesised as soon as it comes
/// (one ahead of playback) and played in order; ends once `lines` has closed and everything
/// received has played, at the first failure, or on `cancel`.
pub async fn speak_stream(
    engine: Arc<dyn TtsEngine>,
    host: Option<Arc<dyn AudioHost>>,
    device: Option<String>,
    mut lines: mpsc::UnboundedReceiver<Line>,
    cancel: &CancellationToken,
    on_event: &(dyn Fn(SpeakEvent) + Send + Sync),
) -> SpeakReport {
    let mut played_ms = 0;
    let mut cut = None;
    let mut any = false;
    // Synthesis runs one line ahead of playback.
    let (tx, mut rx) = mpsc::channel::<(usize, Line, Result<Rendered, SpeechError>)>(1);
    let stop = cancel.child_token();
    let producer = {
        let (engine, stop) = (engine.clone(), stop.clone());
        tokio::spawn(async move {
            let mut i = 0;
            loop {
                let line = tokio::select! {
                    _ = stop.cancelled() => return,
                    l = lines.recv() => l,
                };
                let Some(line) = line else { return };
                let r = engine.render(&line, &stop).await;
                let failed = r.is_err();
                if tx.send((i, line, r)).await.is_err() || failed {
                    return;
                }
                i += 1;
            }
        })
    };
    let outcome = loop {
        let next = tokio::select! {
            _ = cancel.cancelled() => break SpeechOutcome::Cancelled,
            n = rx.recv() => n,
        };
        let Some((index, line, rendered)) = next else {
            break if any {
                SpeechOutcome::Spoken
            } else {
                SpeechOutcome::Skipped
            };
        };
        any = true;
        match rendered {
            Err(e) => break SpeechOutcome::Unavailable(e.to_string()),
            Ok(Rendered::PlayedItself(SpeechOutcome::Spoken)) => {
                on_event(SpeakEvent::Started {
                    index,
                    text: line.text,
                    envelope: None,
                });
                on_event(SpeakEvent::Finished { index, ms: 0 });
            }
            Ok(Rendered::PlayedItself(other)) => break other,
            Ok(Rendered::Audio(audio)) => {
                on_event(SpeakEvent::Started {
                    index,
                    text: line.text,
                    envelope: Some(audio.envelope.clone()),
                });
                // The process's host is made only now: an engine that plays by itself never needs it.
                let host = host.clone().unwrap_or_else(super::hosts::host);
                match host.play(&audio.pcm, device.as_deref(), cancel).await {
                    Ok(Played::Finished { ms }) => {
                        played_ms += ms;
                        on_event(SpeakEvent::Finished { index, ms });
                    }
                    Ok(Played::Cancelled { ms }) => {
                        played_ms += ms;
                        cut = Some((index, ms));
                        break SpeechOutcome::Cancelled;
                    }
                    Err(e) => {
                        cut = Some((index, 0));
                        break SpeechOutcome::Unavailable(e.to_string());
                    }
                }
            }
        }
    };
    stop.cancel();
    drop(rx);
    // An engine that plays by itself is stopped inside its render (speech-dispatcher is then told
    // to cancel): let it end so, within a bound.
    let mut producer = producer;
    if tokio::time::timeout(std::time::Duration::from_secs(4), &mut producer)
        .await
        .is_err()
    {
        producer.abort();
    }
    SpeakReport {
        outcome,
        played_ms,
        cut,
    }
}
