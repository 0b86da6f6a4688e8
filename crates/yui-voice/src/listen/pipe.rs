//! The listening thread: the capture's blocks → resampling to 16 kHz → voice activity → cut
//! utterances, with the half-duplex pause and the onset, sent to the async side (`mod.rs`) only
//! when something happens. A quiet room sends nothing at all.

use super::wait::Waiter;
use super::{Cut, EndReason, ListenPhase, ListenSpec};
use crate::audio::{AudioError, Capture};
use crate::pcm::{StreamResampler, STT_RATE};
use crate::vad::{self, Segment, Vad};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// A device that sends nothing for this long has stalled (a microphone sends a block every
/// 40 ms, silence included).
const STALL: Duration = Duration::from_millis(if cfg!(test) { 300 } else { 5_000 });

/// What the thread tells the async side.
pub(super) enum Raw {
    Phase(ListenPhase),
    Onset,
    /// The device is closed and what was held goes to speech-to-text (a hold's release).
    Closed,
    /// A hold with no speech in it.
    Silence,
    Utterance(Segment),
    Ended(EndReason),
}

enum Next {
    Block(Vec<f32>),
    Released,
    End(EndReason),
}

struct Pipe {
    cap: Capture,
    rs: StreamResampler,
    stop: CancellationToken,
    tx: UnboundedSender<Raw>,
    waiter: Waiter,
}

impl Pipe {
    fn send(&self, raw: Raw) {
        // The async side went (the listener was dropped): the thread ends at the next block.
        let _ = self.tx.send(raw);
    }

    /// The next block, or why there is none.
    fn next(&mut self, release: Option<&CancellationToken>) -> Next {
        let (blocks, stop) = (&mut self.cap.blocks, &self.stop);
        let got = self.waiter.wait(
            async {
                tokio::select! {
                    biased;
                    _ = stop.cancelled() => Next::End(EndReason::Stopped),
                    _ = released(release) => Next::Released,
                    b = blocks.recv() => match b {
                        Some(Ok(b)) => Next::Block(b),
                        Some(Err(e)) => Next::End(EndReason::Failed(e)),
                        None => Next::End(EndReason::SourceEnded),
                    },
                }
            },
            STALL,
        );
        got.unwrap_or_else(|| {
            Next::End(EndReason::Failed(AudioError::device(format!(
                "the microphone \"{}\" stopped sending audio",
                self.cap.device
            ))))
        })
    }
}

async fn released(release: Option<&CancellationToken>) {
    match release {
        Some(r) => r.cancelled().await,
        None => std::future::pending().await,
    }
}

/// Run the pipeline on this thread until it ends; the device is closed before `Ended` is sent.
pub(super) fn run(
    cap: Capture,
    spec: ListenSpec,
    stop: CancellationToken,
    tx: UnboundedSender<Raw>,
) {
    let rs = match StreamResampler::new(cap.rate, STT_RATE) {
        Ok(rs) => rs,
        Err(e) => {
            drop(cap);
            let _ = tx.send(Raw::Ended(EndReason::Failed(e.into())));
            return;
        }
    };
    let mut pipe = Pipe {
        cap,
        rs,
        stop,
        tx,
        waiter: Waiter::new(),
    };
    let end = match spec.cut.clone() {
        Cut::Utterances => utterances(&mut pipe, &spec),
        Cut::Hold { release, max_ms } => hold(&mut pipe, &spec, &release, max_ms),
    };
    let Pipe { cap, tx, .. } = pipe;
    drop(cap);
    let _ = tx.send(Raw::Ended(end));
}

/// Hands-free (and the CLI): every utterance as soon as it ends, while capture goes on.
fn utterances(pipe: &mut Pipe, spec: &ListenSpec) -> EndReason {
    let mut det = Vad::new(spec.vad);
    let want = spec.max_ms.map(|ms| pipe.cap.rate as u64 * ms / 1000);
    let mut got = 0u64;
    let mut phase = ListenPhase::Listening;
    let mut onset = false;
    let end = loop {
        if want.is_some_and(|w| got >= w) {
            break EndReason::Done;
        }
        let block = match pipe.next(None) {
            Next::Block(b) => b,
            Next::Released => break EndReason::Done,
            Next::End(r) => break r,
        };
        got += block.len() as u64;
        let audio = pipe.rs.push(&block);
        let now = if spec.pause_while.as_ref().is_some_and(|speaking| speaking()) {
            // Half duplex: a character's own voice must not become the user's turn.
            det = Vad::new(spec.vad);
            onset = false;
            ListenPhase::Paused
        } else {
            for s in det.push(&audio) {
                pipe.send(Raw::Utterance(s));
            }
            // Barge-in acts on the onset (40 ms of speech), a frame before the utterance opens.
            let started = det.onset();
            if started && !onset {
                pipe.send(Raw::Onset);
            }
            onset = started;
            match det.speaking() {
                true => ListenPhase::Hearing,
                false => ListenPhase::Listening,
            }
        };
        if now != phase {
            phase = now;
            pipe.send(Raw::Phase(now));
        }
    };
    // What was being said when capture ended is kept, unless the device failed mid-word.
    if !matches!(end, EndReason::Failed(_)) {
        if let Some(s) = det.finish() {
            pipe.send(Raw::Utterance(s));
        }
    }
    end
}

/// Push-to-talk: everything until the release (or `max_ms`) is one utterance, trimmed to where
/// voice activity heard speech.
fn hold(pipe: &mut Pipe, spec: &ListenSpec, release: &CancellationToken, max_ms: u64) -> EndReason {
    let limit = (STT_RATE as u64 * max_ms / 1000) as usize;
    let mut audio = Vec::new();
    let end = loop {
        if audio.len() >= limit {
            break EndReason::Done;
        }
        match pipe.next(Some(release)) {
            Next::Block(b) => audio.extend(pipe.rs.push(&b)),
            Next::Released => break EndReason::Done,
            Next::End(r @ (EndReason::Stopped | EndReason::Failed(_))) => return r,
            Next::End(r) => break r,
        }
    };
    // The device closes now: the badge goes while the text is made.
    pipe.cap.close();
    pipe.send(Raw::Closed);
    let segments = vad::split(&audio, spec.vad);
    let (Some(first), Some(last)) = (segments.first(), segments.last()) else {
        pipe.send(Raw::Silence);
        return end;
    };
    let from = (first.start_ms * STT_RATE as u64 / 1000) as usize;
    let to = ((last.end_ms * STT_RATE as u64 / 1000) as usize).min(audio.len());
    let samples = audio.get(from..to).unwrap_or(&audio).to_vec();
    pipe.send(Raw::Utterance(Segment {
        start_ms: first.start_ms,
        end_ms: last.end_ms,
        samples,
    }));
    end
}
