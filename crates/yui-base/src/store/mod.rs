//! The SQLite store: one file, WAL mode, versioned migrations (one module per table), read
//! handles separate from the single write connection.
//!
//! Opening refuses a database written by a newer schema version and reports a damaged file; it
//! never replaces a file it cannot read.

pub mod changes;
pub mod kv;
pub mod migrations;

use crate::error::{CoreError, ErrorCode, Result};
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{SyncSender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a connection waits on a lock held by another process before SQLITE_BUSY.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Read connections kept open (reads run in parallel with the writer in WAL mode).
const READERS: usize = 2;

/// A cheap-to-clone handle on the database.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    /// Wakes the checkpointer after a commit; see [`spawn_checkpointer`].
    checkpoint: Option<Checkpointer>,
    // Fields drop in order: the readers close first so the writer, closing last, checkpoints
    // and removes the -wal file (a read-only handle cannot).
    readers: Mutex<Vec<Connection>>,
    writer: Mutex<Connection>,
    /// Told what changed after a commit ([`Store::changed`]).
    watchers: changes::Watchers,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .finish()
    }
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

impl Store {
    /// Open (creating if missing) the database at `path` and bring its schema up to date.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                CoreError::new(
                    ErrorCode::Store,
                    format!("cannot create data dir {}: {e}", dir.display()),
                )
            })?;
        }
        let mut writer = Connection::open(&path).map_err(|e| corrupt_or(e, &path))?;
        configure(&writer)?;
        // A damaged file, or one from a newer YUI, fails here, before anything is written to it:
        // switching to WAL rewrites header bytes, so the version check must come first.
        migrations::check_version(&writer).map_err(|e| match e.code {
            ErrorCode::StoreCorrupt => corrupt_msg(&path, &e.message),
            _ => e,
        })?;
        let mode: String = writer
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| corrupt_or(e, &path))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(%mode, "WAL mode not available; continuing");
        }
        writer.pragma_update(None, "synchronous", "NORMAL")?;
        // Checkpoints run off the write path (see `spawn_checkpointer`), so a commit never
        // waits on the WAL being copied back and synced.
        writer.pragma_update(None, "wal_autocheckpoint", 0)?;
        migrations::migrate(&mut writer).map_err(|e| match e.code {
            ErrorCode::Store => corrupt_msg(&path, &e.message),
            _ => e,
        })?;
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            let r = Connection::open_with_flags(
                &path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?;
            configure(&r)?;
            readers.push(r);
        }
        let checkpoint = spawn_checkpointer(&path);
        Ok(Self {
            inner: Arc::new(Inner {
                checkpoint,
                path,
                writer: Mutex::new(writer),
                readers: Mutex::new(readers),
                watchers: Default::default(),
            }),
        })
    }

    /// Call `watcher` with every change writers report from now on (see [`changes`]).
    pub fn watch(&self, watcher: changes::Watcher) {
        self.inner.watchers.add(watcher);
    }

    /// Tell the watchers that `change` was committed.
    pub fn changed(&self, change: changes::Change) {
        self.inner.watchers.tell(&change);
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Run `f` on a read handle. Never blocks on the writer (WAL).
    pub fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let conn = self
            .inner
            .readers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop();
        let conn = match conn {
            Some(c) => c,
            None => {
                let c = Connection::open_with_flags(
                    &self.inner.path,
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )?;
                configure(&c)?;
                c
            }
        };
        let out = f(&conn);
        let mut pool = self.inner.readers.lock().unwrap_or_else(|p| p.into_inner());
        if pool.len() < READERS {
            pool.push(conn);
        }
        out
    }

    /// Run `f` in one IMMEDIATE write transaction; committed when `f` returns Ok.
    pub fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.inner.writer.lock().unwrap_or_else(|p| p.into_inner());
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        drop(conn);
        if let Some(cp) = &self.inner.checkpoint {
            cp.poke();
        }
        Ok(out)
    }

    /// `PRAGMA integrity_check`, for tests and diagnostics.
    pub fn integrity_check(&self) -> Result<String> {
        self.read(|c| Ok(c.query_row("PRAGMA integrity_check", [], |r| r.get(0))?))
    }
}

/// How long the checkpointer gathers commits before one PASSIVE checkpoint. Idle costs nothing:
/// the thread sleeps on its channel until a commit arrives.
const CHECKPOINT_DEBOUNCE: Duration = Duration::from_millis(100);

/// A thread with its own connection that runs `PRAGMA wal_checkpoint(PASSIVE)` shortly after
/// commits. SQLite's automatic checkpoint would run inside the committing call and sync the file,
/// which put multi-millisecond stalls on 1 % of `rate_relation` calls (docs/PERFORMANCE.md).
struct Checkpointer {
    /// Capacity 1: one pending wake stands for any number of commits, so a burst of commits
    /// neither queues messages nor wakes the thread more than once.
    wake: SyncSender<()>,
    thread: JoinHandle<()>,
}

impl Checkpointer {
    /// Ask for a checkpoint soon; never blocks the committing thread.
    fn poke(&self) {
        // Full: a wake is already pending. Disconnected: the thread is gone (it logged why);
        // commits stay correct without it.
        let _ = self.wake.try_send(());
    }

    /// Stop the thread without waiting out the debounce: the writer's close checkpoints anyway.
    fn stop(self) {
        drop(self.wake);
        self.thread.thread().unpark();
        let _ = self.thread.join();
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // End the checkpointer before the connections close (fields drop after this), so the
        // writer is the last connection and removes the -wal file on close.
        if let Some(cp) = self.checkpoint.take() {
            cp.stop();
        }
    }
}

fn spawn_checkpointer(path: &Path) -> Option<Checkpointer> {
    let conn = match Connection::open(path).and_then(|c| configure(&c).map(|_| c)) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "no background checkpointer; the WAL grows until close");
            return None;
        }
    };
    let (wake, rx) = std::sync::mpsc::sync_channel::<()>(1);
    let spawned = std::thread::Builder::new()
        .name("yui-checkpoint".into())
        .spawn(move || {
            while rx.recv().is_ok() {
                // Gather the burst; `Checkpointer::stop` unparks early (a spurious wake only
                // checkpoints sooner).
                std::thread::park_timeout(CHECKPOINT_DEBOUNCE);
                // Take the wake left by commits made meanwhile (this checkpoint covers them),
                // then look again: a closed channel means the store is closing.
                let _ = rx.try_recv();
                if let Err(TryRecvError::Disconnected) = rx.try_recv() {
                    return;
                }
                if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                    tracing::debug!(error = %e, "checkpoint skipped");
                }
            }
        });
    match spawned {
        Ok(thread) => Some(Checkpointer { wake, thread }),
        Err(e) => {
            tracing::warn!(error = %e, "cannot start the checkpointer thread");
            None
        }
    }
}

fn corrupt_msg(path: &Path, detail: &str) -> CoreError {
    // `From<rusqlite::Error>` already says "damaged"; keep only SQLite's own words.
    let detail = detail
        .strip_prefix("the database file is damaged or not a YUI database: ")
        .unwrap_or(detail);
    CoreError::new(
        ErrorCode::StoreCorrupt,
        format!(
            "the database {} is damaged or not a YUI database ({detail}); it was left untouched: move it aside to start fresh",
            path.display()
        ),
    )
}

fn corrupt_or(e: rusqlite::Error, path: &Path) -> CoreError {
    match CoreError::from(e) {
        err if err.code == ErrorCode::StoreCorrupt => {
            corrupt_msg(path, &err.message).with_source(err)
        }
        err => err,
    }
}
