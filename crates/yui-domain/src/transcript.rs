//! The transcript: per preset, what the user said, what other characters said to it (addressed
//! turns, marked with the speaker's name) and what the character answered, with timestamps. The
//! next Chat Completions turn is rebuilt from it. Tool traffic is never stored here (it lives
//! only in the request in flight).
//!
//! Each [`append`] is its own committed transaction, so a line is on disk as soon as it returns
//! and a later failure in the same turn cannot take it back.

use crate::error::{CoreError, Result};
use crate::store::Store;
use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

/// Who spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

impl std::str::FromStr for Role {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "user" => Ok(Role::User),
            "assistant" => Ok(Role::Assistant),
            other => Err(CoreError::invalid(format!(
                "role must be user or assistant, not {other:?}"
            ))),
        }
    }
}

/// One stored line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Increases with every append: the chronological order.
    pub id: i64,
    pub preset_id: String,
    pub role: Role,
    pub text: String,
    pub turn_id: Option<String>,
    pub at: DateTime<Utc>,
    /// A reply that never finished (cut stream, failed backend): kept, never sent as history.
    #[serde(default)]
    pub cut: bool,
    /// On a `user` line: the other character who said it (an addressed turn); `None`: the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaker: Option<String>,
}

impl Entry {
    /// The text as history carries it: another character's words are prefixed with its name
    /// (`Kai: …`), so the model tells them from the user's.
    pub fn history_text(&self) -> std::borrow::Cow<'_, str> {
        match &self.speaker {
            Some(name) => format!("{name}: {}", self.text).into(),
            None => self.text.as_str().into(),
        }
    }
}

/// Store one line of speech for `preset_id`; returns its id. Committed before it returns.
pub fn append(
    store: &Store,
    preset_id: &str,
    role: Role,
    text: &str,
    turn_id: Option<&str>,
    at: DateTime<Utc>,
) -> Result<i64> {
    append_marked(store, preset_id, role, text, turn_id, at, false)
}

/// Store what another character (`speaker`, its name) said to `preset_id` in an addressed turn:
/// a `user` line marked with the speaker.
pub fn append_from(
    store: &Store,
    preset_id: &str,
    speaker: &str,
    text: &str,
    turn_id: Option<&str>,
    at: DateTime<Utc>,
) -> Result<i64> {
    insert(
        store,
        preset_id,
        Role::User,
        text,
        turn_id,
        at,
        false,
        Some(speaker),
    )
}

/// [`append`], marking the line `cut` when the reply never finished.
pub fn append_marked(
    store: &Store,
    preset_id: &str,
    role: Role,
    text: &str,
    turn_id: Option<&str>,
    at: DateTime<Utc>,
    cut: bool,
) -> Result<i64> {
    insert(store, preset_id, role, text, turn_id, at, cut, None)
}

#[allow(clippy::too_many_arguments)]
fn insert(
    store: &Store,
    preset_id: &str,
    role: Role,
    text: &str,
    turn_id: Option<&str>,
    at: DateTime<Utc>,
    cut: bool,
    speaker: Option<&str>,
) -> Result<i64> {
    let at = at.to_rfc3339_opts(SecondsFormat::Millis, true);
    store.write(|tx| {
        let known = tx
            .query_row("SELECT 1 FROM presets WHERE id = ?1", [preset_id], |_| {
                Ok(())
            })
            .optional()?
            .is_some();
        if !known {
            return Err(CoreError::not_found(format!(
                "no preset with id {preset_id:?}"
            )));
        }
        tx.execute(
            "INSERT INTO transcript (preset_id, role, text, turn_id, at, cut, speaker)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![preset_id, role.as_str(), text, turn_id, at, cut, speaker],
        )?;
        Ok(tx.last_insert_rowid())
    })
}

/// What ends a reply the user interrupted by speaking (barge-in), in the transcript and so in
/// the next turn's history (docs/client-context.md, "Interrupted replies").
pub const INTERRUPTED_MARKER: &str = "[interrupted by the user]";

/// The stored reply of `turn_id` as the user heard it before speaking over it: `heard` followed
/// by [`INTERRUPTED_MARKER`]. It goes back as history (no longer `cut`), so the model knows what
/// the user heard and that they cut in. Whether a reply of that turn was stored.
pub fn interrupt_reply(store: &Store, preset_id: &str, turn_id: &str, heard: &str) -> Result<bool> {
    let heard = heard.trim_end();
    let text = if heard.is_empty() {
        INTERRUPTED_MARKER.to_string()
    } else {
        format!("{heard} {INTERRUPTED_MARKER}")
    };
    store.write(|tx| {
        let n = tx.execute(
            "UPDATE transcript SET text = ?1, cut = 0
             WHERE preset_id = ?2 AND turn_id = ?3 AND role = 'assistant'",
            params![text, preset_id, turn_id],
        )?;
        Ok(n > 0)
    })
}

/// The user's words of `turn_id`, spoken and transcribed after their turn had started without
/// them: they replace the `placeholder` stored for them (and only it). Whether a line changed.
pub fn fill_spoken(
    store: &Store,
    preset_id: &str,
    turn_id: &str,
    placeholder: &str,
    words: &str,
) -> Result<bool> {
    store.write(|tx| {
        let n = tx.execute(
            "UPDATE transcript SET text = ?1
             WHERE preset_id = ?2 AND turn_id = ?3 AND role = 'user' AND text = ?4",
            params![words, preset_id, turn_id, placeholder],
        )?;
        Ok(n > 0)
    })
}

/// The last `limit` lines of `preset_id` that go back as history, oldest first (cut replies are
/// left out).
pub fn recent(store: &Store, preset_id: &str, limit: usize) -> Result<Vec<Entry>> {
    Ok(query(store, preset_id, limit, None, false)?.entries)
}

/// The last `limit` lines of `preset_id`, cut replies included (marked), oldest first.
pub fn lines(store: &Store, preset_id: &str, limit: usize) -> Result<Vec<Entry>> {
    Ok(query(store, preset_id, limit, None, true)?.entries)
}

/// The longest page [`page`] returns.
pub const MAX_PAGE: usize = 500;

/// One page of a character's history, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Page {
    pub entries: Vec<Entry>,
    /// Whether older lines exist: ask again with `before` = the first entry's id.
    pub more: bool,
}

/// A page of a phone's history: `limit` lines (30 when unsaid, at most 100) before `before`.
pub fn phone_page(
    store: &Store,
    preset_id: &str,
    limit: Option<usize>,
    before: Option<i64>,
) -> Result<Page> {
    page(store, preset_id, limit.unwrap_or(30).clamp(1, 100), before)
}

/// The `limit` lines of `preset_id` just before the line with id `before` (the newest lines when
/// `before` is `None`), oldest first, and whether older lines exist; cut replies included
/// (marked). A history window pages back by passing the first id it shows as the next `before`;
/// lines appended meanwhile never shift a page, because the cursor is an id, not an offset.
pub fn page(store: &Store, preset_id: &str, limit: usize, before: Option<i64>) -> Result<Page> {
    query(store, preset_id, limit, before, true)
}

fn query(
    store: &Store,
    preset_id: &str,
    limit: usize,
    before: Option<i64>,
    with_cut: bool,
) -> Result<Page> {
    // One more than asked: whether it comes back says if older lines exist.
    let want = i64::try_from(limit.saturating_add(1)).unwrap_or(i64::MAX);
    let before = before.unwrap_or(i64::MAX);
    let mut rows = store.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT id, preset_id, role, text, turn_id, at, cut, speaker FROM transcript
             WHERE preset_id = ?1 AND id < ?2 AND (?4 OR cut = 0) ORDER BY id DESC LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![preset_id, before, want, with_cut], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, bool>(6)?,
                r.get::<_, Option<String>>(7)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, preset_id, role, text, turn_id, at, cut, speaker) = row?;
            let at = DateTime::parse_from_rfc3339(&at)
                .map_err(|e| CoreError::internal(format!("transcript row {id}: bad time: {e}")))?
                .with_timezone(&Utc);
            out.push(Entry {
                id,
                preset_id,
                role: role.parse()?,
                text,
                turn_id,
                at,
                cut,
                speaker,
            });
        }
        Ok(out)
    })?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    rows.reverse();
    Ok(Page {
        entries: rows,
        more,
    })
}
