//! Reminders a character set with the `remind` tool, in the `reminders` table: what to say and
//! when. They survive restarts; each is said once (`said_at`), and one that fell due while YUI
//! was closed is said at the next start, marked late (docs/proactive.md, "Reminders").

use crate::error::{CoreError, Result};
use crate::store::Store;
use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::{params, OptionalExtension};
use serde::Serialize;

/// The most reminders one character may have waiting.
pub const MAX_PENDING: i64 = 20;
/// The longest reminder text, in characters.
pub const MAX_TEXT: usize = 200;

/// One reminder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reminder {
    pub id: i64,
    pub preset_id: String,
    pub text: String,
    pub due_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
}

fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn parse_ts(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Store a reminder for `preset_id`, due at `due`. Refused (storing nothing) when the character
/// has [`MAX_PENDING`] waiting already.
pub fn add(
    store: &Store,
    preset_id: &str,
    text: &str,
    due: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Reminder> {
    let text = text.trim().to_string();
    let id = store.write(|tx| {
        let pending: i64 = tx.query_row(
            "SELECT COUNT(*) FROM reminders WHERE preset_id = ?1 AND said_at IS NULL",
            [preset_id],
            |r| r.get(0),
        )?;
        if pending >= MAX_PENDING {
            return Err(CoreError::invalid(format!(
                "{preset_id} already has {MAX_PENDING} reminders waiting"
            )));
        }
        tx.execute(
            "INSERT INTO reminders (preset_id, text, due_at, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![preset_id, text, ts(due), ts(now)],
        )?;
        Ok(tx.last_insert_rowid())
    })?;
    store.changed(crate::store::changes::Change::Reminders);
    Ok(Reminder {
        id,
        preset_id: preset_id.to_string(),
        text,
        due_at: due,
        created_at: now,
    })
}

fn rows(store: &Store, sql: &str, arg: &str) -> Result<Vec<Reminder>> {
    store.read(|c| {
        let mut stmt = c.prepare(sql)?;
        let rows = stmt.query_map([arg], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, preset_id, text, due, created) = row?;
            // A hand-edited instant that cannot be read is skipped (logged), never a panic.
            match (parse_ts(&due), parse_ts(&created)) {
                (Some(due_at), Some(created_at)) => out.push(Reminder {
                    id,
                    preset_id,
                    text,
                    due_at,
                    created_at,
                }),
                _ => tracing::warn!(id, "a reminder with an unreadable time is skipped"),
            }
        }
        Ok(out)
    })
}

/// Every reminder not said yet, the first due first.
pub fn pending(store: &Store) -> Result<Vec<Reminder>> {
    rows(
        store,
        "SELECT id, preset_id, text, due_at, created_at FROM reminders
         WHERE said_at IS NULL AND ?1 = ?1 ORDER BY due_at, id",
        "",
    )
}

/// `preset_id`'s reminders not said yet, the first due first.
pub fn pending_of(store: &Store, preset_id: &str) -> Result<Vec<Reminder>> {
    rows(
        store,
        "SELECT id, preset_id, text, due_at, created_at FROM reminders
         WHERE said_at IS NULL AND preset_id = ?1 ORDER BY due_at, id",
        preset_id,
    )
}

/// Mark a reminder said (its proactive turn started); whether it was still waiting.
pub fn mark_said(store: &Store, id: i64, at: DateTime<Utc>) -> Result<bool> {
    store.write(|tx| {
        let n = tx.execute(
            "UPDATE reminders SET said_at = ?2 WHERE id = ?1 AND said_at IS NULL",
            params![id, ts(at)],
        )?;
        Ok(n == 1)
    })
}

/// When a reminder was said, if it was.
pub fn said_at(store: &Store, id: i64) -> Result<Option<DateTime<Utc>>> {
    store.read(|c| {
        let s: Option<Option<String>> = c
            .query_row("SELECT said_at FROM reminders WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        Ok(s.flatten().as_deref().and_then(parse_ts))
    })
}
