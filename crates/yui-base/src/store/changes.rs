//! What changed in the store, told to whoever watches it (the stage turns each change into the
//! event the windows hear). Writers say what they changed after their transaction committed;
//! watchers run on the writer's thread, so they only read and hand the news on.

use std::sync::{Arc, Mutex};

/// One kind of change. Kept small: a watcher reads the fresh state itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The presets table (created, edited, opened, closed, deleted, a new main one).
    Presets,
    /// The settings value stored under this key.
    Setting(String),
    /// A relation value or its log.
    Relations,
    /// A reminder was set (the stage sets its timer to the next one due).
    Reminders,
}

/// A watcher of changes.
pub type Watcher = Arc<dyn Fn(&Change) + Send + Sync>;

/// The store's watchers.
#[derive(Default)]
pub(super) struct Watchers(Mutex<Vec<Watcher>>);

impl Watchers {
    pub(super) fn add(&self, w: Watcher) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(w);
    }

    pub(super) fn tell(&self, change: &Change) {
        // Cloned out first: a watcher may write (and so tell) in turn.
        let all: Vec<Watcher> = self.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for w in all {
            w(change);
        }
    }
}
