//! Giving the allocator's free memory back to the system once the characters fall quiet.
//!
//! glibc's malloc keeps the pages a burst of turns freed in its per-thread arenas: the app held
//! ~2 MiB more after 300 turns though what it had allocated during them was at most ~0.5 MiB at
//! once, and `malloc_trim` gave the 2 MiB back (docs/PERFORMANCE.md, "Memory soak"). So when
//! no turn has run for a while the process trims once. A trim only follows activity: an idle
//! app never wakes for it.

use crate::stage::StageEvent;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long the stage stays idle before the trim: longer than the pause between the turns of
/// one exchange, so a conversation is not trimmed between every line.
pub const QUIET: Duration = Duration::from_secs(10);

/// Trims once after each stretch of activity has been followed by [`Trimmer::quiet`]'s delay.
#[derive(Clone)]
pub struct Trimmer {
    /// Bumped by every call; a pending trim runs only if nothing happened after it was asked.
    generation: Arc<AtomicU64>,
    delay: Duration,
    trim: Arc<dyn Fn() + Send + Sync>,
}

impl Trimmer {
    /// The process's own trimmer: [`release_free_memory`] after [`QUIET`].
    pub fn new() -> Self {
        Self::with(QUIET, || {
            let released = release_free_memory();
            tracing::debug!(released, "memory: trimmed after the turns");
        })
    }

    /// A trimmer that calls `trim` `delay` after the stage went quiet (tests pass their own).
    pub fn with(delay: Duration, trim: impl Fn() + Send + Sync + 'static) -> Self {
        Self {
            generation: Arc::new(AtomicU64::new(0)),
            delay,
            trim: Arc::new(trim),
        }
    }

    /// Follow the stage: [`StageEvent::Idle`] asks for a trim, a turn's event (or an addressed
    /// turn starting) postpones it. Notices about turns that ended — playback finished (the
    /// bubble reports it after the turn, so after the idle), relations changed, a push
    /// connection's state — do neither: taking them for activity dropped the trim after the
    /// last turn of a soak, which then kept ~3 MiB of glibc's free pages.
    pub fn observe(&self, ev: &StageEvent) {
        match ev {
            StageEvent::Idle => self.quiet(),
            StageEvent::Turn { .. }
            | StageEvent::CharacterAddressed { .. }
            | StageEvent::Speaking { .. }
            | StageEvent::LipSync { .. } => self.busy(),
            StageEvent::PlaybackFinished { .. }
            | StageEvent::Waiting { .. }
            | StageEvent::Connection { .. }
            | StageEvent::PresetsChanged { .. }
            | StageEvent::SwitchesChanged { .. }
            | StageEvent::VocabChanged { .. }
            | StageEvent::RelationsChanged { .. }
            | StageEvent::SettingsChanged { .. }
            | StageEvent::SpeechEnded { .. }
            | StageEvent::Mic { .. }
            | StageEvent::Heard { .. }
            | StageEvent::HeardLater { .. }
            | StageEvent::Presence { .. }
            | StageEvent::Shown { .. }
            | StageEvent::Body { .. }
            | StageEvent::Looking { .. }
            | StageEvent::ModelPull { .. } => {}
        }
    }

    /// Something is happening (a turn's event): a pending trim waits for the next quiet.
    pub fn busy(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// No turn runs any more: trim after the delay unless [`Trimmer::busy`] comes first.
    /// Needs a tokio runtime (the shell's forwarder runs on one).
    pub fn quiet(&self) {
        let asked = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let (generation, delay, trim) = (self.generation.clone(), self.delay, self.trim.clone());
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if generation.load(Ordering::SeqCst) == asked {
                trim();
            }
        });
    }
}

impl Default for Trimmer {
    fn default() -> Self {
        Self::new()
    }
}

/// Return the allocator's free pages to the system. True when some memory was released; false
/// where there is nothing to do (not glibc).
pub fn release_free_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim only walks and madvises the allocator's own free lists.
        unsafe { libc::malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn counting(delay: Duration) -> (Trimmer, Arc<AtomicUsize>) {
        let n = Arc::new(AtomicUsize::new(0));
        let m = n.clone();
        let t = Trimmer::with(delay, move || {
            m.fetch_add(1, Ordering::SeqCst);
        });
        (t, n)
    }

    async fn settle(n: &AtomicUsize, want: usize) -> usize {
        for _ in 0..100 {
            if n.load(Ordering::SeqCst) >= want {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        n.load(Ordering::SeqCst)
    }

    #[tokio::test]
    async fn trims_once_after_the_quiet() {
        let (t, n) = counting(Duration::from_millis(30));
        t.busy();
        t.quiet();
        assert_eq!(settle(&n, 1).await, 1);
        // Nothing asked since: no second trim.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(n.load(Ordering::SeqCst), 1);
    }

    fn speech() -> StageEvent {
        StageEvent::Turn {
            to: Vec::new(),
            preset_id: "yui".into(),
            turn_id: "t1".into(),
            window: crate::WindowKind::Main,
            origin: crate::stage::Origin::User,
            event: crate::events::TurnEvent::Speech { delta: "hi".into() },
        }
    }

    #[tokio::test]
    async fn the_stage_going_idle_trims_and_a_turn_event_postpones_it() {
        let (t, n) = counting(Duration::from_millis(200));
        t.observe(&StageEvent::Idle);
        t.observe(&speech());
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(n.load(Ordering::SeqCst), 0);
        t.observe(&StageEvent::Idle);
        assert_eq!(settle(&n, 1).await, 1);
    }

    #[tokio::test]
    async fn notices_after_the_idle_do_not_drop_the_trim() {
        // The bubble reports playback finished after the turn ended, so after the stage's idle.
        let (t, n) = counting(Duration::from_millis(100));
        t.observe(&speech());
        t.observe(&StageEvent::Idle);
        t.observe(&StageEvent::PlaybackFinished {
            preset_id: "yui".into(),
            turn_id: "t1".into(),
        });
        t.observe(&StageEvent::SettingsChanged {
            key: "yui.voice".into(),
        });
        assert_eq!(settle(&n, 1).await, 1);
    }

    #[tokio::test]
    async fn activity_or_a_later_quiet_replaces_a_pending_trim() {
        let (t, n) = counting(Duration::from_millis(200));
        t.quiet();
        t.busy(); // a turn started: the pending trim is dropped
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(n.load(Ordering::SeqCst), 0);
        // Two quiets in a row trim once, after the last.
        t.quiet();
        t.quiet();
        assert_eq!(settle(&n, 1).await, 1);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(n.load(Ordering::SeqCst), 1);
    }
}
