//! Each character's own speech, spoken while its turn still streams: the turn's events go through
//! a [`LineFeed`] (sentence chunking, cue directions, the character's voice) into a speaking
//! task that starts with the first complete sentence and plays the rest in order.
//!
//! - **The floor.** Two characters never talk over each other: a speaking task takes the stage's
//!   floor (a fair lock, so first come first heard) before its first sentence and keeps it to its
//!   last. `yui.voice.overlap` lets them overlap. A realtime character's reply audio takes the
//!   same floor (`realtime_voice/floor.rs`).
//! - **Lip sync.** Each clip's start is a [`StageEvent::Speaking`] with its 20 ms envelope (one
//!   event per clip; the window moves the mouth from its own clock); the end of the run is a
//!   [`StageEvent::SpeechEnded`] with what was heard and, when speech failed, a note in plain words.
//! - **Stopping.** A new turn, Escape or the user speaking stops one character's speech only;
//!   [`stop_heard`] answers how much was heard (barge-in cuts the stored reply to it).
//!   speech-dispatcher is told to cancel (which drops every client's speech) only when no other
//!   character is speaking.

use super::{Inner, StageEvent, Window};
use crate::turn::{CancellationToken, TurnEvent, TurnStatus};
use crate::voice::feed::LineFeed;
use crate::voice::speak::{speak_stream, SpeakEvent};
use crate::voice::tts::{Line, SpeechDispatcher, TtsEngine};
use crate::voice::{self, SpeechOutcome};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// How much of a character's spoken reply was heard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Heard {
    pub turn_id: String,
    /// The sentences heard whole, and the heard share of a sentence cut short (by its length in
    /// characters, at a word boundary).
    pub text: String,
    /// Milliseconds of audio heard (0 for speech-dispatcher, which plays by itself).
    pub ms: u64,
    /// Everything that was to be said was said.
    pub complete: bool,
}

/// A character's running speech, as its seat keeps it.
pub(super) struct Voice {
    pub generation: u64,
    pub cancel: CancellationToken,
    /// Audio is playing (or speech-dispatcher is speaking) now.
    pub playing: Arc<AtomicBool>,
    /// Set once the speech has ended.
    pub heard: watch::Receiver<Option<Heard>>,
}

/// Stop `preset_id`'s speech; whether some was running.
pub(super) fn stop(inner: &Inner, preset_id: &str) -> bool {
    let voice = inner
        .seats()
        .get_mut(preset_id)
        .and_then(|s| s.speech.take());
    match voice {
        Some(v) => {
            v.cancel.cancel();
            true
        }
        None => false,
    }
}

/// Stop `preset_id`'s speech and answer what had been heard of it (within a second; `None` when
/// nothing was being said).
pub(super) async fn stop_heard(inner: &Inner, preset_id: &str) -> Option<Heard> {
    let voice = inner
        .seats()
        .get_mut(preset_id)
        .and_then(|s| s.speech.take())?;
    voice.cancel.cancel();
    let mut rx = voice.heard;
    let got = tokio::time::timeout(Duration::from_secs(1), rx.wait_for(Option::is_some)).await;
    match got {
        Ok(Ok(h)) => h.clone(),
        _ => None,
    }
}

/// The characters whose audio is playing now.
pub(super) fn speaking(inner: &Inner) -> Vec<String> {
    let mut out: Vec<String> = inner
        .seats()
        .iter()
        .filter(|(_, s)| {
            s.speech
                .as_ref()
                .is_some_and(|v| v.playing.load(Ordering::Relaxed))
        })
        .map(|(id, _)| id.clone())
        .collect();
    out.sort();
    out
}

/// One turn's speech while the turn streams: feed it the turn's events, then [`Speaking::finish`].
pub(super) struct Speaking {
    feed: LineFeed,
    tx: Option<mpsc::UnboundedSender<Line>>,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<Heard>,
    inner: Arc<Inner>,
    generation: u64,
    preset_id: String,
}

/// Seat a new speech for `preset_id` (stopping the one running there): its generation, stop
/// token, playing flag (starting as `playing`) and the sender that reports what was heard.
/// Shared by spoken replies and realtime audio.
pub(super) fn seat_voice(
    inner: &Inner,
    preset_id: &str,
    playing: bool,
) -> (
    u64,
    CancellationToken,
    Arc<AtomicBool>,
    watch::Sender<Option<Heard>>,
) {
    let generation = inner.speech_gen.fetch_add(1, Ordering::Relaxed);
    let cancel = CancellationToken::new();
    let playing = Arc::new(AtomicBool::new(playing));
    let (heard_tx, heard_rx) = watch::channel(None);
    let voice = Voice {
        generation,
        cancel: cancel.clone(),
        playing: playing.clone(),
        heard: heard_rx,
    };
    if let Some(old) = inner
        .seats()
        .entry(preset_id.to_string())
        .or_default()
        .speech
        .replace(voice)
    {
        old.cancel.cancel();
    }
    (generation, cancel, playing, heard_tx)
}

/// Start `preset_id`'s speech for turn `turn_id` (a speech still running there stops).
pub(super) fn begin(inner: &Arc<Inner>, preset_id: &str, turn_id: &str) -> Speaking {
    let (generation, cancel, playing, heard_tx) = seat_voice(inner, preset_id, false);
    let preset = crate::presets::get(&inner.store, preset_id).ok();
    let feed = preset
        .as_ref()
        .map(|p| LineFeed::for_voice(&p.voice))
        .unwrap_or_default();
    // The character's desktop window hears its voice (the mouth moves there).
    let to = vec![Window::desktop(
        preset_id,
        preset.as_ref().is_some_and(|p| p.is_main),
    )];
    let (tx, rx) = mpsc::unbounded_channel();
    let run = Run {
        inner: inner.clone(),
        preset_id: preset_id.to_string(),
        turn_id: turn_id.to_string(),
        generation,
        cancel: cancel.clone(),
        playing,
        to,
    };
    let task = tokio::spawn(async move {
        let heard = run.speak(rx).await;
        run.release();
        heard_tx.send_replace(Some(heard.clone()));
        heard
    });
    Speaking {
        feed,
        tx: Some(tx),
        cancel,
        task,
        inner: inner.clone(),
        generation,
        preset_id: preset_id.to_string(),
    }
}

impl Speaking {
    /// One event of the turn, in stream order.
    pub fn observe(&mut self, event: &TurnEvent) {
        let lines = self.feed.observe(event);
        self.send(lines);
    }

    fn send(&mut self, lines: Vec<Line>) {
        if let Some(tx) = &self.tx {
            for l in lines {
                // The speech already ended (stopped or failed): the rest is not said.
                let _ = tx.send(l);
            }
        }
    }

    /// The turn ended with `status`: a reply is said to its end, a stopped turn falls silent.
    /// Returns when the speech has ended.
    pub async fn finish(mut self, status: TurnStatus) {
        match status {
            TurnStatus::Ok => {
                let rest = self.feed.flush();
                self.send(rest);
            }
            TurnStatus::Stopped => self.cancel.cancel(),
            // What was said before a failure stays said; the unfinished sentence is not.
            TurnStatus::Error | TurnStatus::Silent => {}
        }
        self.tx = None;
        // After the turn's end, so its reply is stored: if the user spoke over it, the stored
        // reply becomes what they heard (barge-in).
        if let Ok(heard) = self.task.await {
            super::barge::after_speech(
                &self.inner,
                self.generation,
                &self.preset_id,
                &heard.turn_id,
                &heard.text,
            );
        }
    }
}

struct Run {
    inner: Arc<Inner>,
    preset_id: String,
    turn_id: String,
    generation: u64,
    cancel: CancellationToken,
    playing: Arc<AtomicBool>,
    to: Vec<Window>,
}

/// What the speaking task saw of its lines: (text, clip ms, finished).
type Said = Arc<Mutex<Vec<(String, u64, bool)>>>;

impl Run {
    async fn speak(&self, mut rx: mpsc::UnboundedReceiver<Line>) -> Heard {
        let nothing = |complete| Heard {
            turn_id: self.turn_id.clone(),
            text: String::new(),
            ms: 0,
            complete,
        };
        // Nothing is opened, and the floor is not taken, until there is something to say.
        let first = tokio::select! {
            _ = self.cancel.cancelled() => None,
            l = rx.recv() => l,
        };
        let Some(first) = first else {
            return nothing(!self.cancel.is_cancelled());
        };
        let inner = &self.inner;
        let setting = voice::load(&inner.store).unwrap_or_default();
        let engine = match self.engine(&setting) {
            Ok(e) => e,
            Err(note) => {
                self.ended(&nothing(false), Some(note));
                return nothing(false);
            }
        };
        let _floor = if setting.overlap {
            None
        } else {
            tokio::select! {
                _ = self.cancel.cancelled() => return nothing(false),
                g = inner.floor.lock() => Some(g),
            }
        };
        // The first line, then the rest as they come.
        let (ftx, frx) = mpsc::unbounded_channel();
        // speech-dispatcher plays by itself and cannot say how far it got: what was heard of it
        // is estimated from the lines given and the time spoken (barge-in).
        let plays_itself = !engine.makes_audio();
        let given: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(vec![first.text.clone()]));
        let started = std::time::Instant::now();
        let _ = ftx.send(first);
        let forward_given = given.clone();
        let forward = tokio::spawn(async move {
            while let Some(l) = rx.recv().await {
                lock(&forward_given).push(l.text.clone());
                if ftx.send(l).is_err() {
                    return;
                }
            }
        });
        let device = voice::config::load_listen(&inner.store)
            .ok()
            .and_then(|l| l.output_device);
        let host = inner.opts.audio.clone();
        let said: Said = Arc::default();
        let on_event = {
            let (said, playing, inner) = (said.clone(), self.playing.clone(), inner.clone());
            let (preset_id, turn_id) = (self.preset_id.clone(), self.turn_id.clone());
            let to = self.to.clone();
            move |ev: SpeakEvent| match ev {
                SpeakEvent::Started {
                    index,
                    text,
                    envelope,
                } => {
                    let ms = envelope.as_ref().map_or(0, |e| e.duration_ms());
                    lock(&said).push((text.clone(), ms, false));
                    playing.store(true, Ordering::Relaxed);
                    inner.emit(StageEvent::Speaking {
                        to: to.clone(),
                        preset_id: preset_id.clone(),
                        turn_id: turn_id.clone(),
                        index,
                        text,
                        envelope,
                    });
                }
                SpeakEvent::Finished { index, .. } => {
                    if let Some(l) = lock(&said).get_mut(index) {
                        l.2 = true;
                    }
                }
            }
        };
        let report = speak_stream(engine, host, device, frx, &self.cancel, &on_event).await;
        forward.abort();
        self.playing.store(false, Ordering::Relaxed);
        let note = match &report.outcome {
            SpeechOutcome::Unavailable(why) => {
                tracing::info!(turn = %self.turn_id, "voice: {why}");
                Some(why.clone())
            }
            _ => None,
        };
        tracing::debug!(turn = %self.turn_id, outcome = ?report.outcome, "speech ended");
        let heard = Heard {
            turn_id: self.turn_id.clone(),
            text: if plays_itself && report.outcome == SpeechOutcome::Cancelled {
                super::barge::heard_part(&lock(&given).join(" "), started.elapsed())
            } else {
                heard_text(&lock(&said), report.cut)
            },
            ms: report.played_ms,
            complete: report.outcome == SpeechOutcome::Spoken,
        };
        self.ended(&heard, note);
        heard
    }

    /// The engine this character speaks with: its own (`voice.engine` of its preset) or
    /// `yui.voice`'s; speech-dispatcher told not to cancel other characters' speech.
    fn engine(&self, setting: &voice::VoiceSetting) -> Result<Arc<dyn TtsEngine>, String> {
        let inner = &self.inner;
        let own = crate::presets::get(&inner.store, &self.preset_id)
            .ok()
            .and_then(|p| {
                p.voice
                    .get("engine")
                    .and_then(|e| e.as_str())
                    .map(str::to_string)
            });
        let name = own.unwrap_or_else(|| setting.engine.clone());
        let name = voice::canonical_engine(&name).map_err(|e| e.message)?;
        if name == voice::SPEECH_DISPATCHER {
            let path = inner.opts.voice_path.as_deref();
            let speaker = match path {
                Some(p) => voice::Speaker::detect_on(Some(p)),
                None => voice::Speaker::detect(),
            }
            .map_err(|e| e.to_string())?;
            let (weak, me) = (Arc::downgrade(inner), self.preset_id.clone());
            let alone = Arc::new(move || {
                weak.upgrade().is_none_or(|inner| {
                    !inner
                        .seats()
                        .iter()
                        .any(|(id, s)| *id != me && s.speech.is_some())
                })
            });
            return Ok(Arc::new(SpeechDispatcher {
                speaker,
                alone: Some(alone),
            }));
        }
        let choice = voice::EngineChoice {
            engine: Some(name.to_string()),
            ..Default::default()
        };
        voice::engine_for(&inner.store, &inner.paths, &choice, None).map_err(|e| e.message)
    }

    fn ended(&self, heard: &Heard, note: Option<String>) {
        self.inner.emit(StageEvent::SpeechEnded {
            to: self.to.clone(),
            preset_id: self.preset_id.clone(),
            turn_id: self.turn_id.clone(),
            heard_ms: heard.ms,
            complete: heard.complete,
            note,
        });
    }

    /// The seat forgets this speech (unless a newer one took its place).
    fn release(&self) {
        let mut seats = self.inner.seats();
        if let Some(seat) = seats.get_mut(&self.preset_id) {
            if seat
                .speech
                .as_ref()
                .is_some_and(|v| v.generation == self.generation)
            {
                seat.speech = None;
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The text heard: whole lines that finished, and of the line cut at `cut` (index, ms heard)
/// the share its heard milliseconds make of its length, ending at a word boundary.
pub fn heard_text(said: &[(String, u64, bool)], cut: Option<(usize, u64)>) -> String {
    let mut out = String::new();
    let mut push = |s: &str| {
        let cjk = out.chars().last().is_some_and(|c| c as u32 >= 0x2E80);
        if !out.is_empty() && !cjk {
            out.push(' ');
        }
        out.push_str(s);
    };
    for (i, (text, ms, finished)) in said.iter().enumerate() {
        if *finished {
            push(text);
        } else if let Some((ci, heard)) = cut.filter(|(ci, _)| *ci == i) {
            let _ = ci;
            if *ms == 0 || heard == 0 {
                continue;
            }
            let chars: Vec<char> = text.chars().collect();
            let n = (chars.len() as u64 * heard.min(*ms) / ms) as usize;
            let mut part: String = chars[..n].iter().collect();
            if n < chars.len() && !chars[n].is_whitespace() {
                // Drop the word being said when the audio stopped, unless it is CJK.
                if let Some(sp) = part.rfind(char::is_whitespace) {
                    part.truncate(sp);
                }
            }
            let part = part.trim();
            if !part.is_empty() {
                push(part);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::heard_text;

    #[test]
    fn heard_text_keeps_whole_lines_and_the_heard_words_of_the_cut_one() {
        let said = vec![
            ("Hello there.".to_string(), 1000, true),
            ("This is a long sentence.".to_string(), 2000, false),
        ];
        assert_eq!(heard_text(&said, Some((1, 1000))), "Hello there. This is a");
        assert_eq!(heard_text(&said, Some((1, 0))), "Hello there.");
        assert_eq!(heard_text(&said, None), "Hello there.");
        let cjk = vec![
            ("こんにちは。".to_string(), 600, true),
            ("元気ですか？".to_string(), 600, false),
        ];
        assert_eq!(heard_text(&cjk, Some((1, 300))), "こんにちは。元気で");
    }
}
