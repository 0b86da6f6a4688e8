//! "Playback finished": a turn's reply has been fully played to the user — the window has shown
//! the whole speech bubble and any speech has ended. Later features (a character answering
//! another, queued replies) wait on it rather than on `turn_end`, which only says the model is
//! done.
//!
//! [`PlaybackTracker`] is keyed by turn id. The shell calls [`PlaybackTracker::begin`] when a turn
//! starts, saying whether speech will follow (the voice switch at that moment), so a bubble that
//! finishes before the speech does not count as finished. The window reports
//! [`PlaybackTracker::bubble_done`]; the speaker reports [`PlaybackTracker::speech_done`] (also
//! when speech was skipped, cancelled or unavailable). Observers either wait for one turn
//! ([`PlaybackTracker::finished`]) or subscribe to every finished turn id
//! ([`PlaybackTracker::subscribe`]). Reports may arrive in any order, and a report for a turn that
//! was never begun is kept until the turn begins (the window can be faster than the shell).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, watch};

/// How many finished turns are remembered (so a late `finished(turn)` still answers at once).
const KEEP_FINISHED: usize = 64;

#[derive(Debug)]
struct Entry {
    begun: bool,
    speech_expected: bool,
    bubble: bool,
    speech: bool,
    done: watch::Sender<bool>,
}

impl Entry {
    fn new() -> Self {
        Self {
            begun: false,
            speech_expected: false,
            bubble: false,
            speech: false,
            done: watch::channel(false).0,
        }
    }

    fn complete(&self) -> bool {
        self.begun && self.bubble && (!self.speech_expected || self.speech)
    }
}

#[derive(Debug, Default)]
struct Inner {
    turns: HashMap<String, Entry>,
    finished_order: VecDeque<String>,
}

/// Tracks, per turn, whether the bubble and the speech have finished. Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct PlaybackTracker {
    inner: Arc<Mutex<Inner>>,
    events: broadcast::Sender<String>,
}

impl Default for PlaybackTracker {
    fn default() -> Self {
        Self::new()
    }
}

impl PlaybackTracker {
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Mutex::new(Inner::default())),
            events: broadcast::channel(64).0,
        }
    }

    fn update(&self, turn: &str, f: impl FnOnce(&mut Entry)) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let entry = inner
            .turns
            .entry(turn.to_string())
            .or_insert_with(Entry::new);
        let was = entry.complete();
        f(entry);
        if !was && entry.complete() {
            entry.done.send_replace(true);
            inner.finished_order.push_back(turn.to_string());
            while inner.finished_order.len() > KEEP_FINISHED {
                if let Some(old) = inner.finished_order.pop_front() {
                    inner.turns.remove(&old);
                }
            }
            drop(inner);
            tracing::debug!(turn, "playback finished");
            // No subscriber is fine: nobody is listening yet.
            let _ = self.events.send(turn.to_string());
        }
    }

    /// A turn starts; `speech_expected`: whether its reply will also be spoken.
    pub fn begin(&self, turn: &str, speech_expected: bool) {
        self.update(turn, |e| {
            e.begun = true;
            e.speech_expected = speech_expected;
        });
    }

    /// The window has shown the whole reply in the bubble.
    pub fn bubble_done(&self, turn: &str) {
        self.update(turn, |e| e.bubble = true);
    }

    /// Speech has ended (spoken, cancelled, skipped or unavailable).
    pub fn speech_done(&self, turn: &str) {
        self.update(turn, |e| e.speech = true);
    }

    /// Whether the turn's playback has finished.
    pub fn is_finished(&self, turn: &str) -> bool {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.turns.get(turn).is_some_and(Entry::complete)
    }

    /// Wait until the turn's playback has finished (returns at once if it already has). Bound it
    /// with `tokio::time::timeout`: a window that closes never reports.
    pub async fn finished(&self, turn: &str) {
        let mut rx = {
            let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            inner
                .turns
                .entry(turn.to_string())
                .or_insert_with(Entry::new)
                .done
                .subscribe()
        };
        // The sender lives in the map; if the entry is dropped (forgotten), stop waiting.
        let _ = rx.wait_for(|done| *done).await;
    }

    /// Every turn id whose playback finishes from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<String> {
        self.events.subscribe()
    }

    /// Drop a turn that will never finish (its window closed).
    pub fn forget(&self, turn: &str) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.turns.remove(turn);
        inner.finished_order.retain(|t| t != turn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn bubble_alone_finishes_a_turn_without_speech() {
        let t = PlaybackTracker::new();
        t.begin("t1", false);
        assert!(!t.is_finished("t1"));
        t.bubble_done("t1");
        assert!(t.is_finished("t1"));
    }

    #[test]
    fn speech_expected_waits_for_both_in_any_order() {
        let t = PlaybackTracker::new();
        t.begin("a", true);
        t.bubble_done("a");
        assert!(!t.is_finished("a"), "bubble done, speech still going");
        t.speech_done("a");
        assert!(t.is_finished("a"));

        t.begin("b", true);
        t.speech_done("b");
        assert!(!t.is_finished("b"), "speech done, bubble still streaming");
        t.bubble_done("b");
        assert!(t.is_finished("b"));
    }

    #[test]
    fn reports_before_begin_wait_for_begin() {
        let t = PlaybackTracker::new();
        t.bubble_done("early");
        assert!(
            !t.is_finished("early"),
            "not finished before the shell began it"
        );
        t.begin("early", true);
        assert!(!t.is_finished("early"));
        t.speech_done("early");
        assert!(t.is_finished("early"));
        assert!(!t.is_finished("other"));
    }

    #[tokio::test]
    async fn finished_wakes_when_the_last_report_arrives_and_subscribers_hear_once() {
        let t = PlaybackTracker::new();
        let mut sub = t.subscribe();
        t.begin("x", true);
        let waiter = {
            let t = t.clone();
            tokio::spawn(async move { t.finished("x").await })
        };
        tokio::task::yield_now().await;
        t.bubble_done("x");
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "woke before the speech ended");
        t.speech_done("x");
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("finished() did not wake")
            .expect("waiter panicked");
        assert_eq!(sub.recv().await.expect("event"), "x");
        // A repeated report does not announce the turn again.
        t.bubble_done("x");
        t.begin("y", false);
        t.bubble_done("y");
        assert_eq!(sub.recv().await.expect("event"), "y");
        // Already finished: answers at once.
        tokio::time::timeout(Duration::from_secs(5), t.finished("x"))
            .await
            .expect("finished() on a finished turn must return at once");
    }

    #[test]
    fn old_finished_turns_are_dropped() {
        let t = PlaybackTracker::new();
        for i in 0..(KEEP_FINISHED + 10) {
            let id = format!("t{i}");
            t.begin(&id, false);
            t.bubble_done(&id);
        }
        assert!(!t.is_finished("t0"), "oldest forgotten");
        assert!(t.is_finished(&format!("t{}", KEEP_FINISHED + 9)));
        let inner = t.inner.lock().unwrap();
        assert_eq!(inner.turns.len(), KEEP_FINISHED);
    }
}
