//! A realtime character's reply audio takes the stage's floor, as text-to-speech does
//! (`stage/speech.rs`): two characters never talk over each other unless `yui.voice.overlap`
//! lets them.
//!
//! - **Held, never dropped.** The first delta of a reply asks for the floor (a fair lock: first
//!   come, first heard). Until it is granted the deltas wait here in arrival order; once granted
//!   they go to the [`ReplyPlayer`](crate::voice::realtime_audio::ReplyPlayer) in that order and
//!   later ones go straight through. The player is given nothing before the floor, so its lip-sync
//!   batches, its device and its "milliseconds heard" all start when the audio really plays.
//! - **Let go when heard.** The floor is kept while the turn speaking through this seat runs (its
//!   responses between tool calls are one reply, as a spoken turn's sentences are) and released
//!   once the last sample has been heard after the response's end; at once on a stop or barge-in
//!   (held audio is dropped then: it was never heard); and when the device fails or closes, so
//!   nothing waits behind a dead device.
//! - **Stopped items stay stopped.** Deltas of an item that was stopped, which the server may still
//!   send before it sees the cancel, are dropped rather than taking the floor again.

use super::SeatAudio;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;
use tokio::sync::OwnedMutexGuard;
use tokio_util::sync::CancellationToken;

/// How often a seat holding the floor checks whether its reply has been heard.
const WATCH: Duration = Duration::from_millis(20);

/// pcm16 mono 24 kHz: bytes per millisecond.
const BYTES_PER_MS: u64 = 48;

#[derive(Default)]
enum Phase {
    /// Not speaking.
    #[default]
    Idle,
    /// Asked for the floor; the token ends the wait (a stop).
    Waiting(CancellationToken),
    /// Speaking (the guard is `None` when characters may overlap).
    Holding { _floor: Option<OwnedMutexGuard<()>> },
}

#[derive(Default)]
struct State {
    phase: Phase,
    /// Audio waiting for the floor, in arrival order: (item, pcm16 bytes).
    held: VecDeque<(String, Vec<u8>)>,
    /// Bumped at each request for the floor (a stale grant is let go at once).
    epoch: u64,
    /// The turn speaking through this audio (its speech generation) and its "playing now" flag
    /// (`Stage::speaking`, true only while this seat holds the floor): the floor is kept between
    /// its responses.
    turn: Option<(u64, Arc<AtomicBool>)>,
    /// A response ended (`response.done`) and no audio came since.
    ended: bool,
    /// The item last given audio, and the one last stopped (its late deltas are dropped).
    last_item: Option<String>,
    stopped_item: Option<String>,
}

/// A seat's place at the floor.
pub(super) struct Gate {
    floor: Arc<tokio::sync::Mutex<()>>,
    state: Mutex<State>,
}

impl Gate {
    pub fn new(floor: Arc<tokio::sync::Mutex<()>>) -> Self {
        Self {
            floor,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether audio waits for the floor.
    pub fn waiting(&self) -> bool {
        matches!(self.state().phase, Phase::Waiting(_))
    }

    /// The turn `generation` speaks through this audio; `playing` follows the floor.
    pub fn set_turn(&self, generation: u64, playing: Arc<AtomicBool>) {
        let mut s = self.state();
        playing.store(matches!(s.phase, Phase::Holding { .. }), Ordering::Relaxed);
        s.turn = Some((generation, playing));
    }

    /// `generation`'s turn ended (a newer turn's mark stays).
    pub fn end_turn(&self, generation: u64) {
        let mut s = self.state();
        if s.turn.as_ref().is_some_and(|(g, _)| *g == generation) {
            s.turn = None;
        }
    }

    /// Whether `item_id` was stopped (its late deltas are dropped, and not counted).
    pub fn stopped(&self, item_id: &str) -> bool {
        self.state().stopped_item.as_deref() == Some(item_id)
    }

    /// `response.done`: once what came has been heard, the floor may go.
    pub fn response_done(&self) {
        self.state().ended = true;
    }
}

impl State {
    /// Into `phase`; the turn's "playing now" flag is true only while holding the floor.
    fn set_phase(&mut self, phase: Phase) {
        let holding = matches!(phase, Phase::Holding { .. });
        if let Some((_, playing)) = &self.turn {
            playing.store(holding, Ordering::Relaxed);
        }
        self.phase = phase;
    }
}

impl SeatAudio {
    /// Reply audio arrived: to the player now if this seat holds the floor, otherwise held in
    /// order (the first piece asks for the floor).
    pub(super) fn admit(&self, item_id: &str, pcm16: &[u8]) {
        let mut s = self.gate.state();
        if s.stopped_item.as_deref() == Some(item_id) {
            return;
        }
        s.ended = false;
        s.last_item = Some(item_id.to_string());
        match &s.phase {
            // Under the gate's lock, so nothing overtakes the held audio being handed over.
            Phase::Holding { .. } => self.play(item_id, pcm16),
            Phase::Waiting(_) => s.held.push_back((item_id.to_string(), pcm16.to_vec())),
            Phase::Idle => {
                s.held.push_back((item_id.to_string(), pcm16.to_vec()));
                s.epoch += 1;
                let stop = CancellationToken::new();
                s.set_phase(Phase::Waiting(stop.clone()));
                let (me, floor, store) =
                    (self.me.clone(), self.gate.floor.clone(), self.store.clone());
                self.runtime
                    .spawn(take_floor(me, floor, store, s.epoch, stop));
            }
        }
    }

    /// Stop (barge-in, Escape, a new turn): held audio is dropped and the floor let go.
    /// Returns the milliseconds dropped if audio was waiting for the floor (none of it heard).
    pub(super) fn leave_floor(&self) -> Option<u64> {
        let mut s = self.gate.state();
        let held = s.held.drain(..).map(|(_, b)| b.len() as u64).sum::<u64>() / BYTES_PER_MS;
        s.stopped_item = s.last_item.clone();
        let was = std::mem::take(&mut s.phase);
        s.set_phase(Phase::Idle);
        match was {
            Phase::Waiting(stop) => {
                stop.cancel();
                Some(held)
            }
            _ => None,
        }
    }

    /// Let the floor go if this seat's reply is over: heard to its end after the response's
    /// end with no turn still speaking through it, or the device failed or closed. Whether the
    /// seat no longer holds the floor for `epoch`.
    pub(super) fn release_if_done(&self, epoch: Option<u64>) -> bool {
        let mut s = self.gate.state();
        let ours = epoch.is_none_or(|e| e == s.epoch);
        if !ours || !matches!(s.phase, Phase::Holding { .. }) {
            return true;
        }
        let heard = s.ended && s.turn.is_none() && !self.player.is_playing();
        // A device that failed (or closed after a long quiet) plays nothing more: the floor is
        // not kept for it.
        if heard || !self.player.is_open() {
            s.set_phase(Phase::Idle);
            return true;
        }
        false
    }
}

/// Wait for the floor (or not, when characters may overlap), hand the held audio to the player,
/// then watch until the reply is over.
async fn take_floor(
    me: Weak<SeatAudio>,
    floor: Arc<tokio::sync::Mutex<()>>,
    store: crate::store::Store,
    epoch: u64,
    stop: CancellationToken,
) {
    let overlap = crate::voice::load(&store).is_ok_and(|v| v.overlap);
    let guard = if overlap {
        None
    } else {
        tokio::select! {
            _ = stop.cancelled() => return,
            g = floor.lock_owned() => Some(g),
        }
    };
    {
        let Some(a) = me.upgrade() else { return };
        let mut s = a.gate.state();
        if s.epoch != epoch || !matches!(s.phase, Phase::Waiting(_)) {
            return; // stopped meanwhile: the floor goes to the next at once
        }
        s.set_phase(Phase::Holding { _floor: guard });
        for (item, pcm) in std::mem::take(&mut s.held) {
            a.play(&item, &pcm);
        }
    }
    let mut tick = tokio::time::interval(WATCH);
    loop {
        tick.tick().await;
        let Some(a) = me.upgrade() else { return };
        if a.release_if_done(Some(epoch)) {
            return;
        }
    }
}
