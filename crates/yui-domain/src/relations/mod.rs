//! Relations: per preset, one directed integer per target (the human or another preset), −20..20,
//! starting at 0, read as five bands. The backend moves a value through `rate_relation`
//! ([`crate::tools::relation`]); the user moves it by hand with the settings slider; the client
//! never moves it on its own (no decay).
//!
//! Rules held here, each inside ONE immediate write transaction so that concurrent windows,
//! processes and handles cannot break them:
//! - one accepted call per preset, target and turn ([`rate`] answers [`RateOutcome::Ignored`]);
//! - at most [`DAILY_CAP`] points of absolute change per preset and target per LOCAL calendar day
//!   (from the passed-in [`Clock`]), counting model changes only;
//! - the range [`MIN`]..=[`MAX`]; a call past the cap or the range is cut to what fits, and a call
//!   cut to nothing changes nothing and is not logged.
//!
//! The slider path ([`set_by_hand`]) is logged as one jump with [`RESERVED_REASON`], spends none
//! of the cap and is held only by the range. Shape and decisions: docs/relations.md.

use crate::clock::Clock;
use crate::error::{CoreError, Result};
use crate::store::Store;
use chrono::SecondsFormat;
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

mod read;
pub use read::{list, relation_line, user_bands, Listing, LogEntry, RelationRow, UserBands};

/// Lowest value.
pub const MIN: i64 = -20;
/// Highest value.
pub const MAX: i64 = 20;
/// Points of absolute model change allowed per preset, target and local calendar day.
pub const DAILY_CAP: i64 = 4;
/// Longest `why`, in characters (Unicode scalar values, after trimming).
pub const REASON_MAX_CHARS: usize = 80;
/// The reason the slider writes. Reserved for the user: a model `why` equal to it (ignoring case
/// and surrounding white space) answers `error: reserved reason`.
pub const RESERVED_REASON: &str = "set by the user";
/// The deltas the model may send.
pub const DELTAS: [i64; 4] = [-2, -1, 1, 2];
/// Per-turn marks older than this are pruned (no turn lasts this long).
const TURN_MARK_TTL_HOURS: i64 = 48;
/// Marks are pruned in batches of about this many hours.
const PRUNE_SLACK_HOURS: i64 = 6;

/// The five bands, by plain comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Band {
    Hostile,
    Cold,
    Neutral,
    Warm,
    Close,
}

impl Band {
    /// hostile ≤ −12, cold ≤ −4, warm ≥ 4, close ≥ 12, else neutral.
    pub fn of(value: i64) -> Self {
        if value <= -12 {
            Self::Hostile
        } else if value <= -4 {
            Self::Cold
        } else if value >= 12 {
            Self::Close
        } else if value >= 4 {
            Self::Warm
        } else {
            Self::Neutral
        }
    }

    /// The band word the model and the UI see.
    pub fn word(self) -> &'static str {
        match self {
            Self::Hostile => "hostile",
            Self::Cold => "cold",
            Self::Neutral => "neutral",
            Self::Warm => "warm",
            Self::Close => "close",
        }
    }
}

impl std::fmt::Display for Band {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// Whom a relation points at. Serialized as `{"kind":"user"}` or `{"kind":"preset","id":"kai"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "id", rename_all = "lowercase")]
pub enum Target {
    /// The human.
    User,
    /// Another preset, by id.
    Preset(String),
}

impl Target {
    fn kind(&self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Preset(_) => "preset",
        }
    }
    fn id(&self) -> &str {
        match self {
            Self::User => "",
            Self::Preset(id) => id,
        }
    }
    fn from_columns(kind: &str, id: String) -> Self {
        if kind == "user" {
            Self::User
        } else {
            Self::Preset(id)
        }
    }
    /// Parse a command-line target: `user` is the human, `preset:<id>` or any other word a
    /// preset id (the prefix form reaches a preset whose id is `user`).
    pub fn parse_cli(s: &str) -> Self {
        match s.strip_prefix("preset:") {
            Some(id) => Self::Preset(id.to_string()),
            None if s == "user" => Self::User,
            None => Self::Preset(s.to_string()),
        }
    }
}

/// Who made a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Model,
    User,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::User => "user",
        }
    }
    /// The `source` column as stored (only [`Self::as_str`] writes it).
    fn from_column(s: &str) -> Self {
        if s == "user" {
            Self::User
        } else {
            Self::Model
        }
    }
}

/// One `toward` enum entry: the label the model sees and the target it maps to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TowardEntry {
    pub label: String,
    pub target: Target,
}

/// The `toward` entries for `preset_id` right now: `user` (the human) first, then the other open
/// presets in display order, named by [`crate::target_names::labels`] (a preset named `user` is
/// listed as `user (character)`, so the bare `user` is always the human).
pub fn toward_entries(store: &Store, preset_id: &str) -> Result<Vec<TowardEntry>> {
    store.read(|c| toward_entries_conn(c, preset_id))
}

fn toward_entries_conn(conn: &Connection, preset_id: &str) -> Result<Vec<TowardEntry>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, name FROM presets WHERE is_open = 1 AND id <> ?1 ORDER BY sort, id",
    )?;
    let rows = stmt
        .query_map([preset_id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out = vec![TowardEntry {
        label: crate::target_names::USER.into(),
        target: Target::User,
    }];
    // The same naming rules as address_character's `to` (one helper for both).
    out.extend(
        crate::target_names::labels(rows)
            .into_iter()
            .map(|(id, label)| TowardEntry {
                label,
                target: Target::Preset(id),
            }),
    );
    Ok(out)
}

/// What [`rate`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateOutcome {
    /// The full delta was applied; the band after it.
    Applied(Band),
    /// The cap or the range cut the delta (possibly to nothing); the band after it.
    Clamped(Band),
    /// A call for this target was already accepted in this turn; nothing changed.
    Ignored,
}

/// Is `why` (already trimmed) the user's reserved reason?
pub fn is_reserved_reason(why: &str) -> bool {
    why.trim().eq_ignore_ascii_case(RESERVED_REASON)
}

/// Clean a model `why`: trimmed, control characters made spaces. `None` when it is empty or
/// longer than [`REASON_MAX_CHARS`] (answered `error: invalid field why`).
pub fn clean_reason(why: &str) -> Option<String> {
    let why: String = why
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let n = why.chars().count();
    (n > 0 && n <= REASON_MAX_CHARS).then_some(why)
}

/// The times one change needs, all from one clock reading.
struct Stamp {
    /// UTC, RFC 3339 ms.
    at: String,
    /// Local calendar day.
    day: String,
    /// Marks older than this may go.
    cutoff: String,
    /// Prune only once the oldest mark is older than this.
    prune_below: String,
}

fn stamp(clock: &dyn Clock) -> Stamp {
    let now = clock.now();
    let at = now.to_rfc3339_opts(SecondsFormat::Millis, true);
    let day = clock.local(now).date_naive().format("%Y-%m-%d").to_string();
    let cutoff = (now - chrono::Duration::hours(TURN_MARK_TTL_HOURS))
        .to_rfc3339_opts(SecondsFormat::Millis, true);
    let prune_below = (now - chrono::Duration::hours(TURN_MARK_TTL_HOURS + PRUNE_SLACK_HOURS))
        .to_rfc3339_opts(SecondsFormat::Millis, true);
    Stamp {
        at,
        day,
        cutoff,
        prune_below,
    }
}

fn current_value(conn: &Connection, preset_id: &str, target: &Target) -> rusqlite::Result<i64> {
    Ok(conn
        .prepare_cached(
            "SELECT value FROM relations WHERE preset_id = ?1 AND target_kind = ?2 AND target_id = ?3",
        )?
        .query_row(params![preset_id, target.kind(), target.id()], |r| r.get(0))
        .optional()?
        .unwrap_or(0))
}

#[allow(clippy::too_many_arguments)]
fn apply(
    conn: &Connection,
    at: &str,
    day: &str,
    preset_id: &str,
    target: &Target,
    delta: i64,
    value: i64,
    reason: &str,
    source: Source,
    turn_id: Option<&str>,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO relations (preset_id, target_kind, target_id, value, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (preset_id, target_kind, target_id)
         DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
    )?
    .execute(params![preset_id, target.kind(), target.id(), value, at])?;
    conn.prepare_cached(
        "INSERT INTO relation_log
           (at, local_day, preset_id, target_kind, target_id, delta, value, reason, source, turn_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        at,
        day,
        preset_id,
        target.kind(),
        target.id(),
        delta,
        value,
        reason,
        source.as_str(),
        turn_id
    ])?;
    Ok(())
}

/// Run `f` in one immediate write transaction, retrying a lock that outlived the busy timeout
/// (the model must never see SQLITE_BUSY for a momentary lock).
fn write_retrying<T>(
    store: &Store,
    mut f: impl FnMut(&rusqlite::Transaction<'_>) -> Result<T>,
) -> Result<T> {
    let mut tries = 0;
    loop {
        match store.write(&mut f) {
            Err(e) if tries < 3 && is_busy(&e) => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20 * tries));
            }
            Ok(out) => {
                // The windows show the new bands (the stage turns this into their event).
                store.changed(crate::store::changes::Change::Relations);
                return Ok(out);
            }
            other => return other,
        }
    }
}

fn is_busy(e: &CoreError) -> bool {
    let m = e.message.to_ascii_lowercase();
    m.contains("database is locked") || m.contains("database is busy")
}

/// A model change: `delta` (one of [`DELTAS`]) toward `target` with the cleaned `reason`, in
/// `turn_id`. Holds the per-turn rule, the daily cap and the range in one transaction.
pub fn rate(
    store: &Store,
    clock: &dyn Clock,
    preset_id: &str,
    target: &Target,
    delta: i64,
    reason: &str,
    turn_id: &str,
) -> Result<RateOutcome> {
    if !DELTAS.contains(&delta) {
        return Err(CoreError::invalid("delta must be one of -2, -1, 1, 2"));
    }
    if is_reserved_reason(reason) {
        return Err(CoreError::invalid("that reason is reserved for the user"));
    }
    let reason =
        clean_reason(reason).ok_or_else(|| CoreError::invalid("reason must be 1..=80 chars"))?;
    let Stamp {
        at,
        day,
        cutoff,
        prune_below,
    } = stamp(clock);
    write_retrying(store, |tx| {
        // The mark is the per-turn rule: a second insert for the same turn is a no-op.
        let marked = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO relation_turns (preset_id, target_kind, target_id, turn_id, at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![preset_id, target.kind(), target.id(), turn_id, at])?;
        if marked == 0 {
            return Ok(RateOutcome::Ignored);
        }
        // Prune old marks in batches (only once the oldest is past the slack), so most calls
        // write no extra pages and the WAL grows less per call.
        let oldest: Option<String> = tx
            .prepare_cached("SELECT MIN(at) FROM relation_turns")?
            .query_row([], |r| r.get(0))?;
        if oldest.is_some_and(|o| o < prune_below) {
            tx.prepare_cached("DELETE FROM relation_turns WHERE at < ?1")?
                .execute([&cutoff])?;
        }
        let value = current_value(tx, preset_id, target)?;
        let spent: i64 = tx
            .prepare_cached(
                "SELECT COALESCE(SUM(ABS(delta)), 0) FROM relation_log
                 WHERE preset_id = ?1 AND target_kind = ?2 AND target_id = ?3
                   AND local_day = ?4 AND source = 'model'",
            )?
            .query_row(params![preset_id, target.kind(), target.id(), day], |r| {
                r.get(0)
            })?;
        let room = (DAILY_CAP - spent).max(0);
        let step = delta.signum() * delta.abs().min(room);
        let new = (value + step).clamp(MIN, MAX);
        let applied = new - value;
        if applied != 0 {
            apply(
                tx,
                &at,
                &day,
                preset_id,
                target,
                applied,
                new,
                &reason,
                Source::Model,
                Some(turn_id),
            )?;
        }
        let band = Band::of(new);
        Ok(if applied == delta {
            RateOutcome::Applied(band)
        } else {
            RateOutcome::Clamped(band)
        })
    })
}

/// The result of a slider move.
#[derive(Debug, Clone, Serialize)]
pub struct SetResult {
    pub preset_id: String,
    pub target: Target,
    pub value: i64,
    pub band: Band,
    /// The jump logged (0 when the value was already there and nothing was logged).
    pub delta: i64,
}

fn preset_exists(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM presets WHERE id = ?1")?
        .query_row([id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The slider: set the value by hand. Logged as one jump with [`RESERVED_REASON`], source
/// `user`; spends none of the daily cap; held only by the range (a value outside −20..20 is
/// refused with `invalid_input`). Works whatever the Relations switch holds.
pub fn set_by_hand(
    store: &Store,
    clock: &dyn Clock,
    preset_id: &str,
    target: &Target,
    value: i64,
) -> Result<SetResult> {
    if !(MIN..=MAX).contains(&value) {
        return Err(CoreError::invalid(format!(
            "a relation value is between {MIN} and {MAX}, not {value}"
        )));
    }
    let Stamp { at, day, .. } = stamp(clock);
    write_retrying(store, |tx| {
        if !preset_exists(tx, preset_id)? {
            return Err(CoreError::not_found(format!(
                "no preset with id {preset_id:?}"
            )));
        }
        if let Target::Preset(t) = target {
            if t == preset_id {
                return Err(CoreError::invalid("a preset has no relation toward itself"));
            }
            if !preset_exists(tx, t)? {
                return Err(CoreError::not_found(format!("no preset with id {t:?}")));
            }
        }
        let old = current_value(tx, preset_id, target)?;
        let delta = value - old;
        if delta != 0 {
            apply(
                tx,
                &at,
                &day,
                preset_id,
                target,
                delta,
                value,
                RESERVED_REASON,
                Source::User,
                None,
            )?;
        }
        Ok(SetResult {
            preset_id: preset_id.to_string(),
            target: target.clone(),
            value,
            band: Band::of(value),
            delta,
        })
    })
}

/// The stored value toward `target` (0 when never moved).
pub fn value(store: &Store, preset_id: &str, target: &Target) -> Result<i64> {
    store.read(|c| Ok(current_value(c, preset_id, target)?))
}

/// Whether a turn event may have moved a relation value: an answered `rate_relation` call that
/// was neither refused (`failed`) nor ignored. The shell then announces the fresh bands.
pub fn changed_by(event: &crate::events::TurnEvent) -> bool {
    matches!(
        event,
        crate::events::TurnEvent::ToolResult { name, result, failed: false, .. }
            if name == crate::names::RATE_RELATION && !result.as_text().starts_with("ignored")
    )
}
