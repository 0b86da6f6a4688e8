//! The `settings` table as raw JSON values by key. Domain modules (backend, voice, vocabulary,
//! avatar, timeouts, command-tool selection) read and write their own keys through this, with
//! their own defaults and checks, so they never depend on `yui_core::settings`, which declares every
//! key once and depends on them for its validators and defaults (no import cycle).

use super::Store;
use crate::error::Result;
use rusqlite::OptionalExtension;
use serde_json::Value;

/// The stored value of `key`, or `None` when it was never stored.
pub fn get(store: &Store, key: &str) -> Result<Option<Value>> {
    let stored: Option<String> = store.read(|c| {
        Ok(
            c.query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()?,
        )
    })?;
    Ok(match stored {
        Some(s) => Some(serde_json::from_str(&s)?),
        None => None,
    })
}

/// Store `value` under `key` (the caller has checked it).
pub fn put(store: &Store, key: &str, value: &Value) -> Result<()> {
    let text = serde_json::to_string(value)?;
    store.write(|tx| {
        tx.execute(
            "INSERT INTO settings (key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value,
               updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')",
            [key, &text],
        )?;
        Ok(())
    })?;
    store.changed(super::changes::Change::Setting(key.to_string()));
    Ok(())
}
