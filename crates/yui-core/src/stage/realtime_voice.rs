//! A character's voice when its backend is a realtime session with audio: the model speaks for
//! itself, so the reply's audio deltas play through a [`ReplyPlayer`] on the voice's output
//! device (no text-to-speech), and the stage treats that audio as the character's speech:
//!
//! - **The floor** ([`floor`]). The reply's audio waits for the stage's floor, as spoken replies
//!   do (`yui.voice.overlap` lets characters overlap): held in order while another character
//!   speaks, played once the floor is free, the floor let go when its last sample was heard.
//! - **Lip sync.** The player's envelope batches become [`StageEvent::LipSync`] for the
//!   character's desktop window (the mouth follows the audio as it is given to the device).
//! - **The seat's speech.** While a turn's reply plays, the seat holds a `speech::Voice`, so
//!   half duplex pauses the microphone, Escape and push-to-talk stop it (barge-in), and the
//!   turn's playback counts as finished only once the audio has been heard to its end.
//! - **What was heard.** Stopping cuts the audio at what the device was given (audio still
//!   waiting for the floor counts nothing); the stored reply is cut to the same share of its
//!   words (the server's own barge-in is the transport's: `conversation.item.truncate` and the
//!   cut reply).
//! - **A device that fails** mid-reply is reported at the end of that reply's speech
//!   ([`StageEvent::SpeechEnded`]'s note); the text goes on.

use super::speech::Heard;
use super::{Inner, StageEvent, Window};
use crate::realtime_audio::RealtimeAudioOut;
use crate::turn::transport::realtime::RealtimeClient;
use crate::turn::{CancellationToken, TurnEvent, TurnStatus};
use crate::voice::audio::AudioHost;
use crate::voice::realtime_audio::{EnvelopeSink, ReplyPlayer};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use tokio::sync::watch;

mod floor;

/// pcm16 mono 24 kHz: bytes per millisecond.
const BYTES_PER_MS: u64 = 48;

/// What one turn's audio came to so far.
#[derive(Default)]
struct Account {
    /// Milliseconds of the turn's earlier items (all given to the device).
    earlier_ms: u64,
    /// The item arriving now and its bytes.
    item: Option<(String, u64)>,
    /// Milliseconds of the account heard when the audio was stopped.
    cut_ms: Option<u64>,
    /// The device failed (the first failure, in plain words).
    failure: Option<String>,
    /// A response ended or the audio was stopped: the next audio, once the last was heard,
    /// starts a new account (a turn's continuation arrives while its first part still plays).
    ended: bool,
}

/// A seat's realtime audio: the session's [`RealtimeAudioOut`], over a [`ReplyPlayer`].
pub(crate) struct SeatAudio {
    player: ReplyPlayer,
    account: Mutex<Account>,
    gate: floor::Gate,
    /// Itself, for the task that waits for the floor.
    me: Weak<SeatAudio>,
    /// `yui.voice.overlap` is read there.
    store: crate::store::Store,
    runtime: tokio::runtime::Handle,
}

impl SeatAudio {
    /// A player on `host`'s `device` whose lip-sync batches go to `preset_id`'s desktop window.
    /// `None` (logged) outside the async runtime.
    pub fn new(
        inner: &Arc<Inner>,
        preset_id: &str,
        host: Arc<dyn AudioHost>,
        device: Option<String>,
    ) -> Option<Arc<Self>> {
        let (weak, id): (Weak<Inner>, String) = (Arc::downgrade(inner), preset_id.to_string());
        let sink: EnvelopeSink = Arc::new(move |batch| {
            let Some(inner) = weak.upgrade() else { return };
            let to = inner.desktop_of(&id).into_iter().collect();
            inner.emit(StageEvent::LipSync {
                to,
                preset_id: id.clone(),
                batch,
            });
        });
        let runtime = tokio::runtime::Handle::try_current();
        match (ReplyPlayer::new(host, device, Some(sink)), runtime) {
            (Ok(player), Ok(runtime)) => Some(Arc::new_cyclic(|me| Self {
                player,
                account: Mutex::default(),
                gate: floor::Gate::new(inner.floor.clone()),
                me: me.clone(),
                store: inner.store.clone(),
                runtime,
            })),
            (Ok(_), Err(_)) => None, // the player is only made inside the runtime
            (Err(e), _) => {
                tracing::warn!("realtime audio: {e}; the replies are text only");
                None
            }
        }
    }

    fn account(&self) -> MutexGuard<'_, Account> {
        self.account.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new reply: its account starts at zero if the last one ended and was heard. A server
    /// turn's audio may have begun before its turn did: then it is this turn's.
    fn reset(&self) {
        // Not under the account's lock: the floor's lock is taken before it elsewhere.
        let playing = self.is_playing();
        let mut a = self.account();
        if a.ended && !playing {
            *a = Account::default();
        }
    }

    /// Whether reply audio is playing or waiting to play (half duplex pauses the microphone).
    pub fn is_playing(&self) -> bool {
        self.gate.waiting() || self.player.is_playing()
    }

    /// Milliseconds of this turn's audio so far, and heard (when it was stopped).
    fn totals(&self) -> Totals {
        let a = self.account();
        let now = a.item.as_ref().map_or(0, |(_, b)| b / BYTES_PER_MS);
        (a.earlier_ms + now, a.cut_ms)
    }

    /// Give audio to the player (the seat has the floor); a failing device is noted once.
    fn play(&self, item_id: &str, pcm16: &[u8]) {
        if let Err(e) = self.player.pcm16(item_id, pcm16) {
            tracing::warn!("realtime audio: {e}");
            let mut a = self.account();
            if a.failure.is_none() {
                a.failure = Some(format!("{e}; the reply goes on as text"));
            }
        }
    }

    /// Returns once the audio that came has been heard: after the floor, if it waits for it
    /// (another character speaking lets go when heard, stopped or failed), then the player's end.
    async fn drained(&self) {
        while self.gate.waiting() {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        self.player.drained().await;
    }
}

impl RealtimeAudioOut for SeatAudio {
    fn on_audio(&self, item_id: &str, pcm16: &[u8]) {
        if self.gate.stopped(item_id) {
            return; // sent before the server saw the stop
        }
        self.reset();
        {
            let mut a = self.account();
            match &mut a.item {
                Some((id, bytes)) if id == item_id => *bytes += pcm16.len() as u64,
                _ => {
                    if let Some((_, bytes)) = a.item.take() {
                        a.earlier_ms += bytes / BYTES_PER_MS;
                    }
                    a.item = Some((item_id.to_string(), pcm16.len() as u64));
                }
            }
        }
        self.admit(item_id, pcm16);
    }

    fn played_ms(&self, item_id: &str) -> u64 {
        self.player.played_ms(item_id)
    }

    fn stop(&self) {
        let held = self.leave_floor();
        let cut = self.player.stop_cut();
        let mut a = self.account();
        a.ended = true;
        let total = a.earlier_ms + a.item.as_ref().map_or(0, |(_, b)| b / BYTES_PER_MS);
        if let Some(held_ms) = held {
            // Nothing of what waited for the floor was heard (what came before it was).
            a.cut_ms = Some(total.saturating_sub(held_ms));
        } else if let Some((_, ms)) = cut {
            a.cut_ms = Some(a.earlier_ms + ms);
        }
    }

    fn finish(&self) {
        let _ = self.player.finish();
        self.gate.response_done();
        self.account().ended = true;
    }
}

/// One turn's realtime speech: the seat's voice while the reply's audio is heard.
pub(super) struct RtSpeaking {
    inner: Arc<Inner>,
    audio: Arc<SeatAudio>,
    preset_id: String,
    turn_id: String,
    generation: u64,
    cancel: CancellationToken,
    /// Ends the watcher that stops the audio when the voice is cancelled.
    done: CancellationToken,
    heard_tx: watch::Sender<Option<Heard>>,
    playing: Arc<AtomicBool>,
    text: String,
    to: Vec<Window>,
    /// The audio's totals when it was stopped (a next turn may start a new account at once).
    at_stop: Arc<Mutex<Option<Totals>>>,
    client: Arc<RealtimeClient>,
}

/// Milliseconds of a turn's audio, and heard when it was stopped.
type Totals = (u64, Option<u64>);

/// The seat's realtime audio, if its session has one.
pub(super) fn audio_of(inner: &Inner, preset_id: &str) -> Option<Arc<SeatAudio>> {
    inner
        .seats()
        .get(preset_id)
        .and_then(|s| s.link.as_ref())
        .and_then(|l| l.audio.clone())
}

/// A new session's reply audio for `preset_id`, on the voice's output device.
pub(super) fn seat_audio(inner: &Arc<Inner>, preset_id: &str) -> Option<Arc<SeatAudio>> {
    let host = inner
        .opts
        .audio
        .clone()
        .unwrap_or_else(crate::voice::hosts::host);
    let device = crate::voice::config::load_listen(&inner.store)
        .ok()
        .and_then(|l| l.output_device);
    SeatAudio::new(inner, preset_id, host, device)
}

/// `preset_id`'s turn `turn_id` speaks through its session's `audio` (a speech still running
/// there stops).
pub(super) fn begin(
    inner: &Arc<Inner>,
    preset_id: &str,
    turn_id: &str,
    audio: Arc<SeatAudio>,
    client: Arc<RealtimeClient>,
) -> RtSpeaking {
    let (generation, cancel, playing, heard_tx) =
        super::speech::seat_voice(inner, preset_id, false);
    let done = CancellationToken::new();
    audio.reset();
    // The floor is kept for the turn's whole reply (tool calls between its responses).
    audio.gate.set_turn(generation, playing.clone());
    // Escape, push-to-talk or the user speaking: the audio stops at once, not at the turn's end.
    let (c, d, a) = (cancel.clone(), done.clone(), audio.clone());
    let at_stop: Arc<Mutex<Option<Totals>>> = Arc::default();
    let snap = at_stop.clone();
    let watcher_client = client.clone();
    tokio::spawn(async move {
        let client = watcher_client;
        tokio::select! {
            // A stop wins over the end: `finish` ends the watcher right after a stop too.
            biased;
            _ = c.cancelled() => {
                a.stop();
                *snap.lock().unwrap_or_else(|p| p.into_inner()) = Some(a.totals());
                // The server learns what was heard (a running turn's stop says it too).
                client.stop_audio().await;
            }
            _ = d.cancelled() => {}
        }
    });
    RtSpeaking {
        to: inner.desktop_of(preset_id).into_iter().collect(),
        inner: inner.clone(),
        audio,
        preset_id: preset_id.to_string(),
        turn_id: turn_id.to_string(),
        generation,
        cancel,
        done,
        heard_tx,
        playing,
        text: String::new(),
        at_stop,
        client,
    }
}

impl RtSpeaking {
    /// One event of the turn: its words (what is cut when the audio is stopped).
    pub fn observe(&mut self, event: &TurnEvent) {
        if let TurnEvent::Speech { delta } = event {
            self.text.push_str(delta);
        }
    }

    /// The turn ended: wait until its audio has been heard (or was stopped, or the device
    /// failed), then tell the window and cut the stored reply if the user spoke over it.
    pub async fn finish(self, status: TurnStatus) {
        if status == TurnStatus::Stopped {
            self.cancel.cancel();
        }
        let stopped = tokio::select! {
            _ = self.cancel.cancelled() => {
                self.audio.stop();
                // The server learns what was heard (once: the session forgets what it told).
                self.client.stop_audio().await;
                true
            }
            _ = self.audio.drained() => false,
        };
        self.done.cancel();
        // Heard to the end (or stopped): the next character may speak. A turn that failed
        // sends no more audio (it may have lost its `response.done`).
        if status != TurnStatus::Ok {
            self.audio.gate.response_done();
        }
        self.audio.gate.end_turn(self.generation);
        self.audio.release_if_done(None);
        self.playing.store(false, Ordering::Relaxed);
        let snapshot = *self.at_stop.lock().unwrap_or_else(|p| p.into_inner());
        let (total, cut) = match snapshot {
            Some(t) => t,
            None if stopped => {
                let (total, cut) = self.audio.totals();
                (total, Some(cut.unwrap_or(total)))
            }
            None => self.audio.totals(),
        };
        let failure = self.audio.account().failure.take();
        let complete = cut.is_none() && failure.is_none() && status == TurnStatus::Ok;
        let ms = cut.unwrap_or(total).min(total);
        let text = match cut {
            Some(c) => crate::turn::transport::realtime::heard_part(&self.text, c, total),
            None => self.text.trim().to_string(),
        };
        let heard = Heard {
            turn_id: self.turn_id.clone(),
            text,
            ms,
            complete,
        };
        self.inner.emit(StageEvent::SpeechEnded {
            to: self.to.clone(),
            preset_id: self.preset_id.clone(),
            turn_id: self.turn_id.clone(),
            heard_ms: heard.ms,
            complete,
            note: failure,
        });
        {
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
        self.heard_tx.send_replace(Some(heard.clone()));
        let barged = super::barge::after_speech(
            &self.inner,
            self.generation,
            &self.preset_id,
            &self.turn_id,
            &heard.text,
        );
        // Stopped after the reply had all arrived (its audio arrives faster than it plays): by
        // the server hearing the user, push-to-talk, Escape or a new turn. The session was told
        // what was heard (truncate); the stored reply, whole so far, becomes the same.
        let stopped_after = cut.is_some() && status == TurnStatus::Ok;
        if barged.is_none() && stopped_after {
            let store = &self.inner.store;
            match crate::transcript::interrupt_reply(
                store,
                &self.preset_id,
                &self.turn_id,
                &heard.text,
            ) {
                Ok(_) => {
                    tracing::info!(turn = %self.turn_id, "realtime barge-in: the stored reply is what was heard")
                }
                Err(e) => {
                    tracing::warn!(turn = %self.turn_id, error = %e.message, "realtime barge-in: reply not cut")
                }
            }
        }
    }
}
