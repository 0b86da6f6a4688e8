//! What the shell keeps in `tauri::State`: the core's store and paths, plus the bookkeeping of
//! window moves (so positions are written once a window rests, not on every pixel).

use crate::label::WindowLabel;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use yui_core::avatar::BodyState;
use yui_core::clock::SharedClock;
use yui_core::paths::Paths;
use yui_core::stage::Window;
use yui_core::{Store, SystemClock};

/// A window position in physical pixels (x, y).
type Position = (i32, i32);

pub struct AppState {
    pub store: Store,
    pub paths: Paths,
    pub clock: SharedClock,
    /// Per character window: the generation of its last move and the position not yet written.
    moves: Mutex<HashMap<WindowLabel, (u64, Option<Position>)>>,
    /// Positions YUI itself asked for, per window, oldest first (see `avatar.rs`).
    own_moves: Mutex<HashMap<WindowLabel, VecDeque<Position>>>,
    /// Where each character window was when it was hidden for a screen capture.
    capture_hidden: Mutex<HashMap<WindowLabel, Position>>,
    /// Whether the characters are asleep (presence.rs); unset where no idle time is known.
    asleep: std::sync::OnceLock<tokio::sync::watch::Receiver<bool>>,
    /// What the shell observed on the platform, for the stage (stage.rs takes the receiver and
    /// hands each fact to the stage, which tells the windows).
    facts: (
        tokio::sync::mpsc::UnboundedSender<Fact>,
        Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<Fact>>>,
    ),
}

/// A platform fact the windows hear of through the stage (`yui_core::stage`'s `desktop.rs`).
#[derive(Debug)]
pub enum Fact {
    /// The user has been away past `yui.sleep` (`asleep`), or is back (presence.rs).
    Presence { asleep: bool },
    /// A character window went off screen or came back (visibility.rs).
    Shown { window: Window, hidden: bool },
    /// The main character's body changed (avatar.rs).
    Body(BodyState),
    /// A screen capture started or ended (avatar.rs).
    Looking(bool),
}

/// How many of YUI's own positions are remembered per window (an animation's frames).
const OWN_MOVES_KEPT: usize = 128;

impl AppState {
    pub fn new(store: Store, paths: Paths) -> Self {
        Self {
            store,
            paths,
            clock: Arc::new(SystemClock),
            moves: Mutex::new(HashMap::new()),
            own_moves: Mutex::new(HashMap::new()),
            capture_hidden: Mutex::new(HashMap::new()),
            asleep: std::sync::OnceLock::new(),
            facts: {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                (tx, Mutex::new(Some(rx)))
            },
        }
    }

    /// Tell the stage a platform fact (queued until the stage exists).
    pub fn tell(&self, fact: Fact) {
        let _ = self.facts.0.send(fact);
    }

    /// The facts told, for the stage's forwarder (once).
    pub fn take_facts(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<Fact>> {
        self.facts
            .1
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Where the presence watch publishes (set once, at start).
    pub fn set_asleep_watch(&self, rx: tokio::sync::watch::Receiver<bool>) {
        let _ = self.asleep.set(rx);
    }

    /// Whether the characters are asleep now.
    pub fn asleep(&self) -> bool {
        self.asleep.get().is_some_and(|rx| *rx.borrow())
    }

    /// Record a move of `label` to `pos` (not yet written); returns its generation.
    pub fn bump_move(&self, label: &WindowLabel, pos: Position) -> u64 {
        let mut m = self.moves.lock().unwrap_or_else(|p| p.into_inner());
        let e = m.entry(label.clone()).or_insert((0, None));
        e.0 += 1;
        e.1 = Some(pos);
        e.0
    }

    /// The position to write for move `generation` of `label`: `None` if a later move superseded
    /// it or it was already written (flushed). Taking it marks it written.
    pub fn take_move(&self, label: &WindowLabel, generation: u64) -> Option<Position> {
        let mut m = self.moves.lock().unwrap_or_else(|p| p.into_inner());
        m.get_mut(label)
            .filter(|(g, _)| *g == generation)
            .and_then(|(_, pos)| pos.take())
    }

    /// Every position not yet written (for the flush at Quit); marks them written.
    pub fn take_pending_moves(&self) -> Vec<(WindowLabel, Position)> {
        let mut m = self.moves.lock().unwrap_or_else(|p| p.into_inner());
        m.iter_mut()
            .filter_map(|(l, (_, pos))| pos.take().map(|p| (l.clone(), p)))
            .collect()
    }

    /// Record that YUI moves `label` to `pos`.
    pub fn expect_move(&self, label: &WindowLabel, pos: Position) {
        let mut m = self.own_moves.lock().unwrap_or_else(|p| p.into_inner());
        let q = m.entry(label.clone()).or_default();
        if q.len() == OWN_MOVES_KEPT {
            q.pop_front();
        }
        q.push_back(pos);
    }

    /// Whether a move of `label` to `pos` is one YUI asked for; it and the older ones are
    /// forgotten (the window system may skip frames, never reorder them).
    pub fn is_expected_move(&self, label: &WindowLabel, pos: Position) -> bool {
        let mut m = self.own_moves.lock().unwrap_or_else(|p| p.into_inner());
        let Some(q) = m.get_mut(label) else {
            return false;
        };
        match q.iter().position(|p| *p == pos) {
            Some(i) => {
                q.drain(..=i);
                true
            }
            None => false,
        }
    }

    /// Remember (`Some`) or take back (`None`) where `label` was when hidden for a capture.
    pub fn hidden_for_capture(
        &self,
        label: &WindowLabel,
        pos: Option<Position>,
    ) -> Option<Position> {
        let mut m = self
            .capture_hidden
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match pos {
            Some(p) => m.insert(label.clone(), p),
            None => m.remove(label),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> AppState {
        let dir = std::env::temp_dir().join(format!("yui-state-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let paths = Paths::resolve(Some(dir));
        AppState::new(Store::open(paths.db_path()).unwrap(), paths)
    }

    #[test]
    fn own_moves_are_recognised_and_user_moves_are_not() {
        let s = state();
        let main = WindowLabel::Main;
        for p in [(10, 10), (20, 20), (30, 30)] {
            s.expect_move(&main, p);
        }
        // The window system skipped a frame: (20, 20) is still YUI's, and (10, 10) is gone.
        assert!(s.is_expected_move(&main, (20, 20)));
        assert!(!s.is_expected_move(&main, (10, 10)));
        assert!(!s.is_expected_move(&main, (25, 25)), "a drag");
        assert!(s.is_expected_move(&main, (30, 30)));
        assert!(
            !s.is_expected_move(&main, (30, 30)),
            "each expected move counts once"
        );
        assert!(!s.is_expected_move(&WindowLabel::Pet("kai".into()), (30, 30)));
    }
}
