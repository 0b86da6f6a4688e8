//! What one turn remembers (docs/memory.md, docs/client-context.md): pinned memories always,
//! the rolling summary, then the memories and older transcript lines most relevant to the
//! user's message and the last exchange, within `yui.memory.recall_tokens`; and how many recent
//! lines the history window carries within `yui.memory.history_tokens`.
//!
//! Recall reads only (two read handles, no writer wait); [`for_turn`] then records which
//! memories were used, in one small write. It never fails a turn: an error recalls nothing.

use super::search::{self, Terms};
use super::{from_row, summary, Config, Memory, COLUMNS};
use crate::error::Result;
use crate::store::Store;
use crate::transcript::{self, Entry, Role};
use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension};

/// The most lines a history window holds, however short they are.
pub const MAX_HISTORY_LINES: usize = 400;
/// The history window when recall fails (the old fixed window).
pub const FALLBACK_LINES: usize = 40;
/// The longest transcript snippet (characters) an `earlier:` line quotes.
pub const SNIPPET_CHARS: usize = 240;

/// A token estimate good enough for budgets without a tokenizer: ASCII text ≈ 4 characters a
/// token, every other character (CJK, accents, emoji) one token.
pub fn tokens(s: &str) -> usize {
    let (mut ascii, mut other) = (0usize, 0usize);
    for c in s.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
    }
    ascii.div_ceil(4) + other
}

/// What a turn recalled: the client-context lines and the ids behind them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recalled {
    pub lines: Vec<String>,
    /// Memories used (pinned, summary and relevant), in line order.
    pub memory_ids: Vec<i64>,
    /// Transcript lines quoted as `earlier:`.
    pub line_ids: Vec<i64>,
    /// The estimated tokens of `lines`.
    pub tokens: usize,
}

/// `memory: <text>` (newlines folded to spaces).
pub fn memory_line(m: &Memory) -> String {
    format!("memory: {}", one_line(&m.text))
}

/// `earlier: <YYYY-MM-DD> <who>: "<text>"` — `who` is `user`, `you` (this character) or the
/// other character's name; the text is a JSON string, cut to [`SNIPPET_CHARS`].
pub fn earlier_line(e: &Entry) -> String {
    let who = match (&e.role, &e.speaker) {
        (Role::Assistant, _) => "you".to_string(),
        (Role::User, Some(name)) => name.clone(),
        (Role::User, None) => "user".to_string(),
    };
    let mut text: String = one_line(&e.text).chars().take(SNIPPET_CHARS).collect();
    if e.text.chars().count() > SNIPPET_CHARS {
        text.push('…');
    }
    format!(
        "earlier: {} {who}: {}",
        e.at.format("%Y-%m-%d"),
        serde_json::Value::from(text)
    )
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Recall for `preset_id` against `query`, within `budget` tokens. `below`: transcript lines
/// from this id on are in the history window already and are not quoted. `vector`: the query's
/// embedding and its model, fused by RRF when given.
pub fn recall(
    c: &Connection,
    preset_id: &str,
    query: &str,
    below: i64,
    budget: usize,
    vector: Option<(&str, &[f32])>,
) -> Result<Recalled> {
    let mut out = Recalled::default();
    let push = |out: &mut Recalled, line: String, always: bool| -> bool {
        let t = tokens(&line) + 1;
        if !always && out.tokens + t > budget {
            return false;
        }
        out.tokens += t;
        out.lines.push(line);
        true
    };
    // Pinned memories always go, whatever the budget.
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM memories WHERE preset_id = ?1 AND pinned = 1 AND kind != 'summary'
         ORDER BY importance DESC, id"
    ))?;
    let pinned = stmt
        .query_map([preset_id], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for m in &pinned {
        push(&mut out, memory_line(m), true);
        out.memory_ids.push(m.id);
    }
    if let Some(s) = summary(c, preset_id)? {
        if push(&mut out, format!("summary: {}", one_line(&s.text)), false) {
            out.memory_ids.push(s.id);
        }
    }
    let terms = Terms::of(query);
    if terms.is_empty() && vector.is_none() {
        return Ok(out);
    }
    let mut mem_lists = search::lists(c, "memories", preset_id, &terms, i64::MAX)?;
    if let Some((model, v)) = vector {
        mem_lists.push(search::nearest(c, preset_id, model, v, search::CANDIDATES)?);
    }
    let line_lists = search::lists(c, "transcript", preset_id, &terms, below)?;
    // Memories and snippets interleave by fused score; memories first on a tie (they are the
    // distilled form of the same lines).
    let mut ranked: Vec<(f64, bool, i64)> = search::rrf(&mem_lists)
        .into_iter()
        .map(|(id, s)| (s, true, id))
        .chain(
            search::rrf(&line_lists)
                .into_iter()
                .map(|(id, s)| (s * 0.9, false, id)),
        )
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
    let mut mstmt = c.prepare_cached(&format!("SELECT {COLUMNS} FROM memories WHERE id = ?1"))?;
    let mut lstmt = c.prepare_cached(
        "SELECT id, preset_id, role, text, turn_id, at, cut, speaker FROM transcript WHERE id = ?1",
    )?;
    let mut quoted: Vec<String> = Vec::new();
    for (_, is_memory, id) in ranked {
        if is_memory {
            if out.memory_ids.contains(&id) {
                continue;
            }
            let m = mstmt.query_row([id], from_row)?;
            if m.kind == super::Kind::Summary {
                continue;
            }
            if push(&mut out, memory_line(&m), false) {
                out.memory_ids.push(id);
                quoted.push(m.text.to_lowercase());
            }
        } else {
            let e = lstmt.query_row([id], entry_row)?;
            // A line a recalled memory already says adds nothing.
            let lower = e.text.to_lowercase();
            if quoted.iter().any(|q| q == &lower) {
                continue;
            }
            if push(&mut out, earlier_line(&e), false) {
                out.line_ids.push(id);
            }
        }
        if out.tokens >= budget {
            break;
        }
    }
    Ok(out)
}

fn entry_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Entry> {
    let role: String = r.get(2)?;
    let at: String = r.get(5)?;
    Ok(Entry {
        id: r.get(0)?,
        preset_id: r.get(1)?,
        role: if role == "assistant" {
            Role::Assistant
        } else {
            Role::User
        },
        text: r.get(3)?,
        turn_id: r.get(4)?,
        at: DateTime::parse_from_rfc3339(&at)
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default(),
        cut: r.get(6)?,
        speaker: r.get(7)?,
    })
}

/// How many of `lines` (oldest first) the history window keeps: the newest that fit in
/// `budget` tokens, at least the newest line.
pub fn window_len(lines: &[Entry], budget: usize) -> usize {
    let mut used = 0;
    let mut n = 0;
    for e in lines.iter().rev() {
        used += tokens(&e.history_text()) + 4; // + the message's own overhead
        if n > 0 && used > budget {
            break;
        }
        n += 1;
    }
    n
}

/// A turn's memory: how many history lines it carries, and its recall (client-context lines).
/// Reads `yui.memory`, the recent transcript and the indexes, then records the memories used
/// (`last_used_at`, `times_used`, the last turn's list). Never fails: an error is logged and
/// the turn goes on with the plain line limit and no recall.
pub fn for_turn(
    store: &Store,
    now: DateTime<Utc>,
    preset_id: &str,
    turn_id: &str,
    message: &str,
    vector: Option<(&str, &[f32])>,
) -> (usize, Recalled) {
    let cfg = super::config::load(store);
    match build(store, &cfg, preset_id, message, vector) {
        Ok((n, r)) => {
            if let Err(e) = record(store, now, preset_id, turn_id, &r.memory_ids) {
                tracing::warn!(error = %e, "the memories used could not be recorded");
            }
            (n, r)
        }
        Err(e) => {
            tracing::warn!(preset = %preset_id, error = %e, "recall left out of the turn");
            (FALLBACK_LINES, Recalled::default())
        }
    }
}

/// The history window as it stands now (oldest first): the lines a turn with no message of its
/// own would carry, within `yui.memory.history_tokens` ([`window_len`], what [`for_turn`] sizes a
/// turn's `history_limit` with). A new realtime session is seeded with it.
pub fn history_now(store: &Store, preset_id: &str) -> Result<Vec<Entry>> {
    let cfg = super::config::load(store);
    let mut recent = transcript::recent(store, preset_id, MAX_HISTORY_LINES)?;
    let n = window_len(&recent, cfg.history_tokens);
    Ok(recent.split_off(recent.len() - n))
}

/// [`for_turn`] without the write: the history window's length and the recall.
pub fn build(
    store: &Store,
    cfg: &Config,
    preset_id: &str,
    message: &str,
    vector: Option<(&str, &[f32])>,
) -> Result<(usize, Recalled)> {
    let recent = transcript::recent(store, preset_id, MAX_HISTORY_LINES)?;
    let n = window_len(&recent, cfg.history_tokens);
    let window = &recent[recent.len() - n..];
    let below = window.first().map_or(i64::MAX, |e| e.id);
    // The message, and the last exchange (what "it" and "that" point to).
    let mut query = message.to_string();
    for e in window.iter().rev().take(2) {
        query.push('\n');
        query.push_str(&e.text);
    }
    let r = store.read(|c| recall(c, preset_id, &query, below, cfg.recall_tokens, vector))?;
    Ok((n, r))
}

pub(crate) fn record(
    store: &Store,
    now: DateTime<Utc>,
    preset_id: &str,
    turn_id: &str,
    ids: &[i64],
) -> Result<()> {
    let at = super::stamp(now);
    store.write(|tx| {
        // The same turn recorded again (recalled anew with its embedding): only the difference
        // counts, so a turn uses each memory once.
        let before: Vec<i64> = tx
            .query_row(
                "SELECT last_used FROM memory_state WHERE preset_id = ?1 AND last_turn_id = ?2",
                params![preset_id, turn_id],
                |r| r.get::<_, String>(0),
            )
            .optional()?
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        let mut up = tx.prepare_cached(
            "UPDATE memories SET last_used_at = ?2, times_used = times_used + 1 WHERE id = ?1",
        )?;
        for id in ids.iter().filter(|id| !before.contains(id)) {
            up.execute(params![id, at])?;
        }
        let mut down = tx.prepare_cached(
            "UPDATE memories SET times_used = max(times_used - 1, 0) WHERE id = ?1",
        )?;
        for id in before.iter().filter(|id| !ids.contains(id)) {
            down.execute([id])?;
        }
        tx.execute(
            "INSERT INTO memory_state (preset_id, last_turn_id, last_used) VALUES (?1, ?2, ?3)
             ON CONFLICT(preset_id) DO UPDATE SET last_turn_id = excluded.last_turn_id,
               last_used = excluded.last_used",
            params![preset_id, turn_id, serde_json::to_string(ids)?],
        )?;
        Ok(())
    })
}
