//! Long-term memory (docs/memory.md): per character, memories the core keeps across days and
//! restarts, recalled into every turn's client context and written by a background extraction
//! when a conversation pauses. The user sees, edits, pins and forgets every one of them.
//!
//! - this file: the stored [`Memory`], and what the user (Settings → Memory, `yui memory`) does
//!   with them: list, add, edit, pin, forget, forget all, export, the last turn's recall;
//! - `config.rs`: the `yui.memory` setting;
//! - `search.rs`: the query terms over the FTS5 indexes (words and trigrams), RRF fusion, cosine;
//! - `bm25.rs`: BM25 ranking of an index's matches from their postings (cheaper than `rank`);
//! - `recall.rs`: what a turn recalls within its token budget, and the history window's size;
//! - `extract.rs`: the extraction request, its parsing and applying;
//! - `export.rs`: saving the export as a file;
//! - `embed.rs`: optional embeddings (`POST {base}/embeddings`) and the stand-in embedder;
//! - `schedule.rs`: when extraction runs (pauses, lines about to leave the window).
//!
//! Every write goes through the store's one writer; the FTS indexes follow by trigger in the same
//! transaction, and a memory's vector goes with it by cascade.

pub mod bm25;
pub mod config;
pub mod embed;
pub mod export;
pub mod extract;
pub mod recall;
pub mod schedule;
pub mod search;

use crate::error::{CoreError, Result};
use crate::store::Store;
use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub use config::Config;
pub use recall::{for_turn, Recalled};

/// The longest memory text accepted (characters).
pub const MAX_TEXT: usize = 1000;

/// What a memory is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A fact about the user (name, pets, work, where they live).
    Fact,
    /// Something the user likes or dislikes, or wants done a certain way.
    Preference,
    /// Something that happened or is planned.
    Event,
    /// How the user and this character (or another character) stand.
    Relationship,
    /// The rolling summary of older conversation (one per character).
    Summary,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Fact,
        Kind::Preference,
        Kind::Event,
        Kind::Relationship,
        Kind::Summary,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Fact => "fact",
            Kind::Preference => "preference",
            Kind::Event => "event",
            Kind::Relationship => "relationship",
            Kind::Summary => "summary",
        }
    }
}

impl std::str::FromStr for Kind {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == s.trim())
            .ok_or_else(|| {
                CoreError::invalid(format!(
                    "kind must be fact, preference, event, relationship or summary, not {s:?}"
                ))
            })
    }
}

/// One stored memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub id: i64,
    pub preset_id: String,
    pub kind: Kind,
    pub text: String,
    /// 1 (trivia) to 5 (never forget).
    pub importance: u8,
    /// Always recalled; never changed or retired by extraction.
    pub pinned: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub times_used: i64,
    /// The transcript line ids it came from.
    pub sources: Vec<i64>,
}

/// A memory to add.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct NewMemory {
    pub kind: Kind,
    pub text: String,
    #[serde(default = "default_importance")]
    pub importance: u8,
    #[serde(default)]
    pub pinned: bool,
    #[serde(default)]
    pub sources: Vec<i64>,
}

fn default_importance() -> u8 {
    3
}

impl NewMemory {
    pub fn new(kind: Kind, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
            importance: 3,
            pinned: false,
            sources: Vec::new(),
        }
    }
}

/// What an edit changes (`None`: unchanged).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Edit {
    pub text: Option<String>,
    pub kind: Option<Kind>,
    pub importance: Option<u8>,
    pub pinned: Option<bool>,
}

pub(crate) const COLUMNS: &str = "id, preset_id, kind, text, importance, pinned, created_at, \
     updated_at, last_used_at, times_used, sources";

pub(crate) fn from_row(r: &Row<'_>) -> rusqlite::Result<Memory> {
    let kind: String = r.get(2)?;
    let sources: String = r.get(10)?;
    Ok(Memory {
        id: r.get(0)?,
        preset_id: r.get(1)?,
        kind: kind.parse().unwrap_or(Kind::Fact),
        text: r.get(3)?,
        importance: r.get::<_, i64>(4)?.clamp(1, 5) as u8,
        pinned: r.get(5)?,
        created_at: time(&r.get::<_, String>(6)?),
        updated_at: time(&r.get::<_, String>(7)?),
        last_used_at: r.get::<_, Option<String>>(8)?.map(|s| time(&s)),
        times_used: r.get(9)?,
        sources: serde_json::from_str(&sources).unwrap_or_default(),
    })
}

fn time(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

pub(crate) fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub(crate) fn check_text(text: &str) -> Result<String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(CoreError::invalid("a memory's text is empty"));
    }
    if t.chars().count() > MAX_TEXT {
        return Err(CoreError::invalid(format!(
            "a memory's text is longer than {MAX_TEXT} characters"
        )));
    }
    Ok(t.to_string())
}

fn check_importance(i: u8) -> Result<u8> {
    match i {
        1..=5 => Ok(i),
        _ => Err(CoreError::invalid(
            "importance must be a whole number from 1 to 5",
        )),
    }
}

pub(crate) fn must_preset(c: &Connection, preset_id: &str) -> Result<()> {
    c.query_row("SELECT 1 FROM presets WHERE id = ?1", [preset_id], |_| {
        Ok(())
    })
    .optional()?
    .ok_or_else(|| CoreError::not_found(format!("no preset with id {preset_id:?}")))
}

/// Every memory of `preset_id`: pinned first, then the most recently changed.
pub fn list(store: &Store, preset_id: &str) -> Result<Vec<Memory>> {
    store.read(|c| {
        must_preset(c, preset_id)?;
        let mut stmt = c.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM memories WHERE preset_id = ?1
             ORDER BY pinned DESC, updated_at DESC, id DESC"
        ))?;
        let rows = stmt.query_map([preset_id], from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    })
}

/// One memory by id.
pub fn get(store: &Store, id: i64) -> Result<Memory> {
    store.read(|c| get_in(c, id))
}

pub(crate) fn get_in(c: &Connection, id: i64) -> Result<Memory> {
    c.query_row(
        &format!("SELECT {COLUMNS} FROM memories WHERE id = ?1"),
        [id],
        from_row,
    )
    .optional()?
    .ok_or_else(|| CoreError::not_found(format!("no memory with id {id}")))
}

/// Add a memory to `preset_id`.
pub fn add(store: &Store, now: DateTime<Utc>, preset_id: &str, new: &NewMemory) -> Result<Memory> {
    let text = check_text(&new.text)?;
    let importance = check_importance(new.importance)?;
    let id = store.write(|tx| {
        must_preset(tx, preset_id)?;
        insert(
            tx,
            now,
            preset_id,
            new.kind,
            &text,
            importance,
            new.pinned,
            &new.sources,
        )
    })?;
    get(store, id)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn insert(
    c: &Connection,
    now: DateTime<Utc>,
    preset_id: &str,
    kind: Kind,
    text: &str,
    importance: u8,
    pinned: bool,
    sources: &[i64],
) -> Result<i64> {
    let at = stamp(now);
    c.execute(
        "INSERT INTO memories (preset_id, kind, text, importance, pinned, created_at, updated_at, sources)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)",
        params![
            preset_id,
            kind.as_str(),
            text,
            importance,
            pinned,
            at,
            serde_json::to_string(sources)?
        ],
    )?;
    Ok(c.last_insert_rowid())
}

/// Change a memory's text, kind, importance or pin. A changed text drops its vector (it no
/// longer matches; the embedder makes a new one).
pub fn edit(store: &Store, now: DateTime<Utc>, id: i64, edit: &Edit) -> Result<Memory> {
    let text = edit.text.as_deref().map(check_text).transpose()?;
    let importance = edit.importance.map(check_importance).transpose()?;
    store.write(|tx| {
        let old = get_in(tx, id)?;
        tx.execute(
            "UPDATE memories SET text = ?2, kind = ?3, importance = ?4, pinned = ?5, updated_at = ?6
             WHERE id = ?1",
            params![
                id,
                text.as_deref().unwrap_or(&old.text),
                edit.kind.unwrap_or(old.kind).as_str(),
                importance.unwrap_or(old.importance),
                edit.pinned.unwrap_or(old.pinned),
                stamp(now)
            ],
        )?;
        if text.as_deref().is_some_and(|t| t != old.text) {
            tx.execute("DELETE FROM memory_vectors WHERE memory_id = ?1", [id])?;
        }
        Ok(())
    })?;
    get(store, id)
}

/// Pin (always recalled, never changed by extraction) or unpin a memory.
pub fn pin(store: &Store, now: DateTime<Utc>, id: i64, pinned: bool) -> Result<Memory> {
    edit(
        store,
        now,
        id,
        &Edit {
            pinned: Some(pinned),
            ..Edit::default()
        },
    )
}

/// Forget one memory: its row, its index entries (triggers) and its vector (cascade), in one
/// transaction. It never reaches a request again.
pub fn forget(store: &Store, id: i64) -> Result<Memory> {
    let old = get(store, id)?;
    store.write(|tx| {
        tx.execute("DELETE FROM memory_vectors WHERE memory_id = ?1", [id])?;
        if tx.execute("DELETE FROM memories WHERE id = ?1", [id])? == 0 {
            return Err(CoreError::not_found(format!("no memory with id {id}")));
        }
        Ok(())
    })?;
    Ok(old)
}

/// Forget every memory of `preset_id` (and its last-turn record); the transcript stays. Returns
/// how many were forgotten.
pub fn forget_all(store: &Store, preset_id: &str) -> Result<usize> {
    store.write(|tx| {
        must_preset(tx, preset_id)?;
        tx.execute(
            "DELETE FROM memory_vectors WHERE memory_id IN
             (SELECT id FROM memories WHERE preset_id = ?1)",
            [preset_id],
        )?;
        let n = tx.execute("DELETE FROM memories WHERE preset_id = ?1", [preset_id])?;
        tx.execute(
            "UPDATE memory_state SET last_used = '[]' WHERE preset_id = ?1",
            [preset_id],
        )?;
        Ok(n)
    })
}

/// Inside a preset's delete: its memories, vectors and state.
pub(crate) fn delete_preset(tx: &Connection, preset_id: &str) -> Result<()> {
    tx.execute(
        "DELETE FROM memory_vectors WHERE memory_id IN
         (SELECT id FROM memories WHERE preset_id = ?1)",
        [preset_id],
    )?;
    tx.execute("DELETE FROM memories WHERE preset_id = ?1", [preset_id])?;
    tx.execute("DELETE FROM memory_state WHERE preset_id = ?1", [preset_id])?;
    Ok(())
}

/// Every memory of `preset_id` as one JSON document (Settings → Memory → Export).
pub fn export(store: &Store, now: DateTime<Utc>, preset_id: &str) -> Result<Value> {
    let memories = list(store, preset_id)?;
    Ok(json!({
        "preset_id": preset_id,
        "exported_at": stamp(now),
        "memories": memories,
    }))
}

/// The memories the last turn of `preset_id` recalled (those still stored), and its turn id.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LastUsed {
    pub turn_id: Option<String>,
    pub memories: Vec<Memory>,
}

pub fn last_used(store: &Store, preset_id: &str) -> Result<LastUsed> {
    store.read(|c| {
        must_preset(c, preset_id)?;
        let row: Option<(Option<String>, String)> = c
            .query_row(
                "SELECT last_turn_id, last_used FROM memory_state WHERE preset_id = ?1",
                [preset_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((turn_id, ids)) = row else {
            return Ok(LastUsed {
                turn_id: None,
                memories: Vec::new(),
            });
        };
        let ids: Vec<i64> = serde_json::from_str(&ids).unwrap_or_default();
        let memories = ids
            .into_iter()
            .filter_map(|id| get_in(c, id).ok())
            .collect();
        Ok(LastUsed { turn_id, memories })
    })
}

/// The rolling summary of `preset_id`, if extraction has written one.
pub fn summary(c: &Connection, preset_id: &str) -> Result<Option<Memory>> {
    Ok(c.query_row(
        &format!(
            "SELECT {COLUMNS} FROM memories WHERE preset_id = ?1 AND kind = 'summary'
             ORDER BY id DESC LIMIT 1"
        ),
        [preset_id],
        from_row,
    )
    .optional()?)
}

/// The user's search (Settings → Memory, `yui memory search`): `preset_id`'s memories best
/// matching `query`.
pub fn search_memories(
    store: &Store,
    preset_id: &str,
    query: &str,
    limit: usize,
) -> Result<Vec<Memory>> {
    store.read(|c| {
        must_preset(c, preset_id)?;
        search::memories(c, preset_id, query, None, limit.clamp(1, 200))
    })
}

/// One character's memory as Settings → Memory shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overview {
    pub preset_id: String,
    pub memories: Vec<Memory>,
    pub last_used: LastUsed,
    /// Remembering paused for this character (its switch).
    pub paused: bool,
    /// Remembering on at all (`yui.memory.enabled`).
    pub enabled: bool,
}

pub fn overview(store: &Store, preset_id: &str) -> Result<Overview> {
    let cfg = config::load(store);
    Ok(Overview {
        preset_id: preset_id.to_string(),
        memories: list(store, preset_id)?,
        last_used: last_used(store, preset_id)?,
        paused: cfg.paused.iter().any(|p| p == preset_id),
        enabled: cfg.enabled,
    })
}

/// Pause or resume remembering for `preset_id`; its overview after.
pub fn set_paused(store: &Store, preset_id: &str, paused: bool) -> Result<Overview> {
    store.read(|c| must_preset(c, preset_id))?;
    config::set_paused(store, preset_id, paused)?;
    overview(store, preset_id)
}
