//! What the shell keeps in `tauri::State`: the core's store and paths, plus the bookkeeping of
//! window moves (so positions are written once a window rests, not on every pixel).

use crate::windows::WindowLabel;
use std::collections::HashMap;
use std::sync::Mutex;
use yui_core::paths::Paths;
use yui_core::Store;

pub struct AppState {
    pub store: Store,
    pub paths: Paths,
    moves: Mutex<HashMap<WindowLabel, u64>>,
}

impl AppState {
    pub fn new(store: Store, paths: Paths) -> Self {
        Self {
            store,
            paths,
            moves: Mutex::new(HashMap::new()),
        }
    }

    /// Record a move of `label`; returns its generation.
    pub fn bump_move(&self, label: &WindowLabel) -> u64 {
        let mut m = self.moves.lock().unwrap_or_else(|p| p.into_inner());
        let g = m.entry(label.clone()).or_insert(0);
        *g += 1;
        *g
    }

    /// Whether `generation` is still the last move of `label`.
    pub fn is_latest_move(&self, label: &WindowLabel, generation: u64) -> bool {
        let m = self.moves.lock().unwrap_or_else(|p| p.into_inner());
        m.get(label) == Some(&generation)
    }
}
