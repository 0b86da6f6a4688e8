//! The stored Responses chain of each preset: the id the next turn sends as
//! `previous_response_id`, and the `function_call_output` items answering the calls that response
//! left unanswered (table `response_chain`). Kept in SQLite so a restart keeps the chain valid.

use crate::error::Result;
use crate::store::Store;
use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::OptionalExtension;
use serde_json::Value;

/// A preset's chain.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    pub response_id: String,
    /// `function_call_output` items, sent ahead of the next user message with the id.
    pub pending: Vec<Value>,
}

/// The stored chain of `preset_id`, if any. A row whose `pending` is not a JSON array reads as
/// having none (the id alone still chains).
pub fn load(store: &Store, preset_id: &str) -> Result<Option<Chain>> {
    let row: Option<(String, String)> = store.read(|c| {
        Ok(c.query_row(
            "SELECT response_id, pending FROM response_chain WHERE preset_id = ?1",
            [preset_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
    })?;
    Ok(row.map(|(response_id, pending)| Chain {
        response_id,
        pending: serde_json::from_str::<Vec<Value>>(&pending).unwrap_or_default(),
    }))
}

/// Replace the chain of `preset_id` with `response_id` and its unanswered outputs.
pub fn save(
    store: &Store,
    preset_id: &str,
    response_id: &str,
    pending: &[Value],
    at: DateTime<Utc>,
) -> Result<()> {
    let pending = serde_json::to_string(pending)?;
    let at = at.to_rfc3339_opts(SecondsFormat::Millis, true);
    store.write(|tx| {
        tx.execute(
            "INSERT INTO response_chain (preset_id, response_id, pending, updated_at)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(preset_id) DO UPDATE SET response_id = excluded.response_id,
               pending = excluded.pending, updated_at = excluded.updated_at",
            [preset_id, response_id, &pending, &at],
        )?;
        Ok(())
    })
}

/// Drop the chain (session reset, or the retry after a 404): the id and its stored outputs go
/// together.
pub fn reset(store: &Store, preset_id: &str) -> Result<()> {
    store.write(|tx| {
        tx.execute(
            "DELETE FROM response_chain WHERE preset_id = ?1",
            [preset_id],
        )?;
        Ok(())
    })
}
