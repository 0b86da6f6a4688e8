//! One lock per task-space name, process-wide, so it outlives any one call, window or webview
//! reload. A run holds its space's lock until its CLI has exited and its screenshots are
//! collected: runs in one space go one at a time, runs in different spaces run in parallel.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::Mutex as AsyncMutex;

type Locks = Mutex<HashMap<String, Arc<AsyncMutex<()>>>>;

static LOCKS: OnceLock<Locks> = OnceLock::new();

/// The lock of a task space (created on first use; there is one space per preset, so the map
/// stays small and entries are never removed).
pub fn space_lock(space: &str) -> Arc<AsyncMutex<()>> {
    let map = LOCKS.get_or_init(Locks::default);
    // A poisoned map only means another thread panicked while inserting: the map is still sound.
    let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
    map.entry(space.to_string()).or_default().clone()
}

/// Whether a run currently holds the space (for diagnostics and tests).
pub fn is_held(space: &str) -> bool {
    space_lock(space).try_lock().is_err()
}
