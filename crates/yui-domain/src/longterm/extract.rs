//! Extraction (docs/memory.md, "When memories are written"): the transcript lines of one
//! character not yet read are sent, with the closest existing memories and the rolling summary,
//! to the character's own backend in ONE non-streaming request with the fixed [`PROMPT`]. The
//! answer is a JSON object of operations — `add`, `update`, `delete` against the memories shown,
//! and the new `summary` — applied in one transaction together with the read cursor.
//!
//! A failed, stopped or cut answer (`finish_reason` `length`, unreadable JSON) changes nothing:
//! the cursor stays and the same lines are read again next time. A line marked cut is never
//! shown to the model. Pinned memories are shown but never changed by extraction.

use super::search;
use super::{check_text, from_row, get_in, summary, Kind, Memory, COLUMNS};
use crate::backend::Backend;
use crate::backend::{OneShot, Transport};
use crate::error::{CoreError, ErrorCode, Result};
use crate::store::Store;
use crate::transcript::{Entry, Role};
use chrono::{DateTime, Utc};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The fixed system prompt of every extraction request.
pub const PROMPT: &str = "You maintain the long-term memory of a character in a conversation app. \
You are given the character's existing memories (each with an id), the current summary of older \
conversation, and new conversation lines. Lines marked \"user\" are the user's words, \"you\" are \
the character's own words, and \"<name> (character)\" are another character speaking to this one; \
remember only what was said to or by this character.\n\
Answer with ONE JSON object and nothing else:\n\
{\"add\": [{\"kind\": \"fact|preference|event|relationship\", \"text\": \"...\", \"importance\": 1-5, \"lines\": [line ids]}],\n\
 \"update\": [{\"id\": <memory id>, \"text\": \"...\", \"importance\": 1-5}],\n\
 \"delete\": [{\"id\": <memory id>}],\n\
 \"summary\": \"...\"}\n\
Rules: add only lasting things worth remembering days later (names, people, pets, places, work, \
likes and dislikes, plans, events, how the user feels about the character), each one short \
self-contained sentence in the third person (\"The user's cat is named Mochi.\"). When a new \
line changes or contradicts an existing memory, UPDATE that memory instead of adding another; \
DELETE a memory the user says is wrong or asks to be forgotten. Never add what is already \
remembered. Ignore small talk. \"summary\" is the rolling summary of the whole conversation so \
far (the old summary with the new lines folded in), at most 120 words. Use empty lists when \
there is nothing to change.";

/// Lines read per extraction (more wait for the next one).
pub const MAX_LINES: usize = 60;
/// Existing memories shown as candidates for update and delete.
pub const CLOSEST: usize = 20;
/// How long one extraction request may take.
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// What one extraction reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub preset_id: String,
    pub name: String,
    /// The lines shown (never a cut one), oldest first.
    pub lines: Vec<Entry>,
    /// The last transcript id read (cut lines included): the cursor after success.
    pub last_id: i64,
    pub closest: Vec<Memory>,
    pub summary: Option<Memory>,
}

/// What an extraction did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    pub lines: usize,
    pub added: Vec<i64>,
    pub updated: Vec<i64>,
    pub deleted: Vec<i64>,
    pub summary: bool,
    /// Why nothing was asked (paused, off, nothing new, a push backend).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// The lines of `preset_id` after its cursor, or `None` when there are none.
pub fn pending(store: &Store, preset_id: &str) -> Result<Option<Pending>> {
    store.read(|c| {
        let name: String = c
            .query_row("SELECT name FROM presets WHERE id = ?1", [preset_id], |r| {
                r.get(0)
            })
            .optional()?
            .ok_or_else(|| CoreError::not_found(format!("no preset with id {preset_id:?}")))?;
        let cursor: i64 = c
            .query_row(
                "SELECT extracted_to FROM memory_state WHERE preset_id = ?1",
                [preset_id],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0);
        let mut stmt = c.prepare_cached(
            "SELECT id, role, text, at, cut, speaker, turn_id FROM transcript
             WHERE preset_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![preset_id, cursor, MAX_LINES as i64], |r| {
            let at: String = r.get(3)?;
            Ok(Entry {
                id: r.get(0)?,
                preset_id: preset_id.to_string(),
                role: if r.get::<_, String>(1)? == "assistant" {
                    Role::Assistant
                } else {
                    Role::User
                },
                text: r.get(2)?,
                at: DateTime::parse_from_rfc3339(&at)
                    .map(|t| t.with_timezone(&Utc))
                    .unwrap_or_default(),
                cut: r.get(4)?,
                speaker: r.get(5)?,
                turn_id: r.get(6)?,
            })
        })?;
        let all = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        let Some(last_id) = all.last().map(|e| e.id) else {
            return Ok(None);
        };
        let lines: Vec<Entry> = all.into_iter().filter(|e| !e.cut).collect();
        let text: String = lines.iter().map(|e| format!("{}\n", e.text)).collect();
        let mut closest = search::memories(c, preset_id, &text, None, CLOSEST)?;
        closest.retain(|m| m.kind != Kind::Summary);
        if closest.len() < CLOSEST {
            // Few matches: show the most important others too, so duplicates are seen.
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM memories WHERE preset_id = ?1 AND kind != 'summary'
                 ORDER BY pinned DESC, importance DESC, updated_at DESC LIMIT ?2"
            ))?;
            for m in stmt.query_map(params![preset_id, CLOSEST as i64], from_row)? {
                let m = m?;
                if closest.len() < CLOSEST && !closest.iter().any(|x| x.id == m.id) {
                    closest.push(m);
                }
            }
        }
        Ok(Some(Pending {
            preset_id: preset_id.to_string(),
            name,
            lines,
            last_id,
            closest,
            summary: summary(c, preset_id)?,
        }))
    })
}

/// The user message of the request: the character, memories, summary and new lines.
pub fn user_message(p: &Pending) -> String {
    let mut s = format!("Character: {}\n\nExisting memories:\n", p.name);
    if p.closest.is_empty() {
        s.push_str("(none)\n");
    }
    for m in &p.closest {
        let pin = if m.pinned { " (pinned)" } else { "" };
        s.push_str(&format!("{}: {}{pin}: {}\n", m.id, m.kind.as_str(), m.text));
    }
    s.push_str("\nCurrent summary: ");
    s.push_str(p.summary.as_ref().map_or("(none)", |m| m.text.as_str()));
    s.push_str("\n\nNew lines:\n");
    for e in &p.lines {
        let who = match (&e.role, &e.speaker) {
            (Role::Assistant, _) => "you".to_string(),
            (Role::User, Some(n)) => format!("{n} (character)"),
            (Role::User, None) => "user".to_string(),
        };
        s.push_str(&format!("[line {}] {who}: {}\n", e.id, e.text));
    }
    s
}

/// The Chat Completions body of one extraction (non-streaming).
pub fn request_body(model: &str, p: &Pending) -> Value {
    json!({
        "model": model,
        "messages": [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": user_message(p)},
        ],
        "stream": false,
        "temperature": 0,
    })
}

/// The operations an answer asks for.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Ops {
    pub add: Vec<AddOp>,
    pub update: Vec<UpdateOp>,
    pub delete: Vec<DeleteOp>,
    pub summary: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct AddOp {
    #[serde(default = "fact")]
    pub kind: String,
    pub text: String,
    #[serde(default)]
    pub importance: Option<i64>,
    #[serde(default)]
    pub lines: Vec<i64>,
}

fn fact() -> String {
    "fact".into()
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UpdateOp {
    pub id: i64,
    pub text: String,
    #[serde(default)]
    pub importance: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct DeleteOp {
    pub id: i64,
}

/// Read the answer's operations: the JSON object in `content` (a Markdown fence or words
/// around it are tolerated). Unreadable: an error, and nothing changes.
pub fn parse(content: &str) -> Result<Ops> {
    let (Some(a), Some(b)) = (content.find('{'), content.rfind('}')) else {
        return Err(CoreError::new(
            ErrorCode::Backend,
            "the extraction answer holds no JSON object",
        ));
    };
    if b < a {
        return Err(CoreError::new(
            ErrorCode::Backend,
            "the extraction answer is cut",
        ));
    }
    serde_json::from_str(&content[a..=b]).map_err(|e| {
        CoreError::new(
            ErrorCode::Backend,
            format!("the extraction answer is not the expected JSON: {e}"),
        )
    })
}

fn importance(i: Option<i64>) -> u8 {
    i.unwrap_or(3).clamp(1, 5) as u8
}

/// Apply `ops` for `p` in one transaction and move the cursor past its lines. Only the memories
/// shown (and not pinned) may be updated or deleted; an `add` that repeats a stored memory's
/// text (or the old text of one this answer updates or deletes) is skipped; `lines` outside the shown lines are dropped.
pub fn apply(store: &Store, now: DateTime<Utc>, p: &Pending, ops: &Ops) -> Result<Report> {
    let shown = |id: i64| p.closest.iter().any(|m| m.id == id && !m.pinned);
    let line_ids: Vec<i64> = p.lines.iter().map(|e| e.id).collect();
    let at = super::stamp(now);
    store.write(|tx| {
        let mut r = Report {
            lines: p.lines.len(),
            ..Report::default()
        };
        // Texts this answer retires: an `add` repeating one is the stale fact coming back.
        let mut retired: Vec<String> = Vec::new();
        for d in &ops.delete {
            if let Some(m) = p.closest.iter().find(|m| m.id == d.id) {
                retired.push(m.text.to_lowercase());
            }
            if shown(d.id)
                && tx.execute(
                    "DELETE FROM memories WHERE id = ?1 AND preset_id = ?2",
                    params![d.id, p.preset_id],
                )? == 1
            {
                r.deleted.push(d.id);
            }
        }
        for u in &ops.update {
            let Ok(text) = check_text(&u.text) else { continue };
            if !shown(u.id) || r.deleted.contains(&u.id) {
                continue;
            }
            let old = get_in(tx, u.id)?;
            retired.push(old.text.to_lowercase());
            tx.execute(
                "UPDATE memories SET text = ?2, importance = ?3, updated_at = ?4 WHERE id = ?1",
                params![u.id, text, u.importance.map_or(old.importance, |i| importance(Some(i))), at],
            )?;
            if text != old.text {
                tx.execute("DELETE FROM memory_vectors WHERE memory_id = ?1", [u.id])?;
            }
            r.updated.push(u.id);
        }
        for a in &ops.add {
            let Ok(text) = check_text(&a.text) else { continue };
            let kind = match a.kind.parse::<Kind>() {
                Ok(Kind::Summary) | Err(_) => Kind::Fact,
                Ok(k) => k,
            };
            let dup: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM memories WHERE preset_id = ?1 AND lower(text) = lower(?2))",
                params![p.preset_id, text],
                |r| r.get(0),
            )?;
            if dup || retired.contains(&text.to_lowercase()) {
                continue;
            }
            let sources: Vec<i64> = a.lines.iter().copied().filter(|l| line_ids.contains(l)).collect();
            let id = super::insert(tx, now, &p.preset_id, kind, &text, importance(a.importance), false, &sources)?;
            r.added.push(id);
        }
        if let Some(s) = ops.summary.as_deref().and_then(|s| check_text(s).ok()) {
            match &p.summary {
                Some(old) => {
                    tx.execute(
                        "UPDATE memories SET text = ?2, updated_at = ?3 WHERE id = ?1",
                        params![old.id, s, at],
                    )?;
                }
                None => {
                    super::insert(tx, now, &p.preset_id, Kind::Summary, &s, 3, false, &line_ids)?;
                }
            }
            r.summary = true;
        }
        advance(tx, &p.preset_id, p.last_id)?;
        Ok(r)
    })
}

fn advance(tx: &rusqlite::Connection, preset_id: &str, to: i64) -> Result<()> {
    tx.execute(
        "INSERT INTO memory_state (preset_id, extracted_to, failures, last_error) VALUES (?1, ?2, 0, NULL)
         ON CONFLICT(preset_id) DO UPDATE SET extracted_to = MAX(extracted_to, excluded.extracted_to),
           failures = 0, last_error = NULL",
        params![preset_id, to],
    )?;
    Ok(())
}

fn failed(store: &Store, preset_id: &str, error: &str) {
    let r = store.write(|tx| {
        tx.execute(
            "INSERT INTO memory_state (preset_id, failures, last_error) VALUES (?1, 1, ?2)
             ON CONFLICT(preset_id) DO UPDATE SET failures = failures + 1, last_error = ?2",
            params![preset_id, error],
        )?;
        Ok(())
    });
    if let Err(e) = r {
        tracing::warn!(error = %e, "the extraction failure could not be recorded");
    }
}

/// Why a backend gets no extraction request ("a push backend takes no extraction request").
fn no_request(t: Transport) -> String {
    format!("a {} backend takes no extraction request", t.as_str())
}

/// Send one extraction request and return the answer's text; a cut answer is an error.
pub async fn ask(
    http: &reqwest::Client,
    backend: &Backend,
    p: &Pending,
    cancel: &CancellationToken,
) -> Result<String> {
    let fail = |m: String| CoreError::new(ErrorCode::Backend, format!("extraction: {m}"));
    let (url, body) = match backend.transport.one_shot() {
        Some(OneShot::ChatCompletions) => (
            backend.endpoint("chat/completions"),
            request_body(&backend.model, p),
        ),
        Some(OneShot::Responses) => (
            backend.endpoint("responses"),
            json!({"model": backend.model, "instructions": PROMPT,
                   "input": user_message(p), "stream": false, "store": false}),
        ),
        None => return Err(fail(no_request(backend.transport))),
    };
    let mut req = http.post(&url).timeout(TIMEOUT).json(&body);
    if let Some(k) = backend.api_key.as_deref().filter(|k| !k.is_empty()) {
        req = req.bearer_auth(k);
    }
    let answer = async {
        let resp = req.send().await.map_err(|e| fail(e.to_string()))?;
        let status = resp.status();
        let text = resp
            .text()
            .await
            .map_err(|e| fail(format!("the answer was cut: {e}")))?;
        if !status.is_success() {
            return Err(fail(format!("{url} answered {status}")));
        }
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| fail(format!("the answer is not JSON (cut?): {e}")))?;
        content_of(&v).map_err(fail)
    };
    tokio::select! {
        _ = cancel.cancelled() => Err(fail("stopped".into())),
        r = answer => r,
    }
}

/// The text of a non-streaming answer (Chat Completions or Responses); a cut one is an error.
fn content_of(v: &Value) -> std::result::Result<String, String> {
    if let Some(choice) = v.pointer("/choices/0") {
        if choice.get("finish_reason").and_then(Value::as_str) == Some("length") {
            return Err("the answer was cut (finish_reason length)".into());
        }
        return choice
            .pointer("/message/content")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| "the answer has no message content".into());
    }
    if v.get("status").and_then(Value::as_str) == Some("incomplete") {
        return Err("the answer was cut (status incomplete)".into());
    }
    let mut out = String::new();
    for item in v
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for part in item
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(t) = part.get("text").and_then(Value::as_str) {
                out.push_str(t);
            }
        }
    }
    if out.is_empty() {
        return Err("the answer has no output text".into());
    }
    Ok(out)
}

/// Run one extraction for `preset_id` now: read the pending lines, ask, apply. Skipped (and
/// reported so) when remembering is off or paused for it, or nothing new was said. A failure
/// changes no memory and leaves the cursor, so the same lines are read next time.
pub async fn run(
    store: &Store,
    now: impl Fn() -> DateTime<Utc>,
    http: &reqwest::Client,
    backend: &Backend,
    preset_id: &str,
    cancel: &CancellationToken,
) -> Result<Report> {
    let cfg = super::config::load(store);
    let skipped = |why: &str| Report {
        skipped: Some(why.to_string()),
        ..Report::default()
    };
    if !cfg.enabled {
        return Ok(skipped("remembering is off (yui.memory.enabled)"));
    }
    if !cfg.remembers(preset_id) {
        return Ok(skipped("remembering is paused for this character"));
    }
    let Some(p) = pending(store, preset_id)? else {
        return Ok(skipped("nothing new was said"));
    };
    if p.lines.is_empty() {
        // Only cut lines: nothing to read, move past them.
        store.write(|tx| advance(tx, preset_id, p.last_id))?;
        return Ok(skipped("nothing new was said"));
    }
    if backend.transport.one_shot().is_none() {
        return Ok(skipped(&no_request(backend.transport)));
    }
    let answer = match ask(http, backend, &p, cancel).await {
        Ok(a) => a,
        Err(e) => {
            failed(store, preset_id, &e.message);
            return Err(e);
        }
    };
    let ops = match parse(&answer) {
        Ok(o) => o,
        Err(e) => {
            failed(store, preset_id, &e.message);
            return Err(e);
        }
    };
    if cancel.is_cancelled() {
        return Err(CoreError::new(ErrorCode::Backend, "extraction: stopped"));
    }
    apply(store, now(), &p, &ops)
}
