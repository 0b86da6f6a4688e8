//! Reading relations: the listing `yui relation list` and the settings panel show, the quick
//! controls' bands toward the user, and the `relation:` line of a turn's client context.

use super::{current_value, toward_entries_conn, Band, Source, Target};
use crate::error::{CoreError, Result};
use crate::settings;
use crate::store::Store;
use rusqlite::params;
use serde::Serialize;
use std::collections::BTreeMap;

/// One value in a listing.
#[derive(Debug, Clone, Serialize)]
pub struct RelationRow {
    pub preset_id: String,
    pub preset_name: String,
    pub target: Target,
    /// The target's display name: `user` for the human, else the preset's name.
    pub target_name: String,
    pub value: i64,
    pub band: Band,
}

/// One accepted change.
#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    pub id: i64,
    /// UTC, RFC 3339.
    pub at: String,
    /// The local calendar day the change counted in.
    pub local_day: String,
    pub preset_id: String,
    pub target: Target,
    pub delta: i64,
    pub value: i64,
    pub band: Band,
    pub reason: String,
    pub source: Source,
    pub turn_id: Option<String>,
}

/// Values, bands and log, as `yui relation list` and the settings panel show them.
#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    /// The Relations switch.
    pub enabled: bool,
    pub relations: Vec<RelationRow>,
    /// Newest first.
    pub log: Vec<LogEntry>,
}

/// Every preset's (or one preset's) values toward the human and every other preset, with the log
/// (newest first, at most `log_limit` entries).
pub fn list(store: &Store, preset: Option<&str>, log_limit: usize) -> Result<Listing> {
    let enabled = settings::switch_on(store, settings::RELATIONS)?;
    store.read(|c| {
        let presets: Vec<(String, String)> = c
            .prepare("SELECT id, name FROM presets ORDER BY sort, id")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        if let Some(p) = preset {
            if !presets.iter().any(|(id, _)| id == p) {
                return Err(CoreError::not_found(format!("no preset with id {p:?}")));
            }
        }
        let mut relations = Vec::new();
        for (id, name) in presets
            .iter()
            .filter(|(id, _)| preset.is_none() || preset == Some(id.as_str()))
        {
            let targets = std::iter::once((Target::User, "user".to_string())).chain(
                presets
                    .iter()
                    .filter(|(other, _)| other != id)
                    .map(|(o, n)| (Target::Preset(o.clone()), n.clone())),
            );
            for (target, target_name) in targets {
                let value = current_value(c, id, &target)?;
                relations.push(RelationRow {
                    preset_id: id.clone(),
                    preset_name: name.clone(),
                    target,
                    target_name,
                    value,
                    band: Band::of(value),
                });
            }
        }
        let mut stmt = c.prepare(
            "SELECT id, at, local_day, preset_id, target_kind, target_id, delta, value, reason,
                    source, turn_id
             FROM relation_log WHERE (?1 IS NULL OR preset_id = ?1) ORDER BY id DESC LIMIT ?2",
        )?;
        let log = stmt
            .query_map(params![preset, log_limit as i64], |r| {
                let value: i64 = r.get(7)?;
                Ok(LogEntry {
                    id: r.get(0)?,
                    at: r.get(1)?,
                    local_day: r.get(2)?,
                    preset_id: r.get(3)?,
                    target: Target::from_columns(&r.get::<_, String>(4)?, r.get(5)?),
                    delta: r.get(6)?,
                    value,
                    band: Band::of(value),
                    reason: r.get(8)?,
                    source: Source::from_column(&r.get::<_, String>(9)?),
                    turn_id: r.get(10)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Listing {
            enabled,
            relations,
            log,
        })
    })
}

/// What the quick controls show: each preset's band toward the user, and whether relations are
/// on (while off the rows show no band).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserBands {
    pub enabled: bool,
    /// preset id → band toward the human, for every preset.
    pub bands: BTreeMap<String, Band>,
}

/// Every preset's band toward the human (for the quick controls' preset rows).
pub fn user_bands(store: &Store) -> Result<UserBands> {
    let enabled = settings::switch_on(store, settings::RELATIONS)?;
    store.read(|c| {
        let mut stmt = c.prepare(
            "SELECT p.id, COALESCE(r.value, 0) FROM presets p
             LEFT JOIN relations r
               ON r.preset_id = p.id AND r.target_kind = 'user' AND r.target_id = ''",
        )?;
        let bands = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, Band::of(r.get(1)?))))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(UserBands { enabled, bands })
    })
}

/// The `relation:` line of a turn of `preset_id` (format in docs/relations.md): `None` while the
/// Relations switch is off. Lists the same entries, in the same order and with the same labels,
/// as the `toward` enum, each with its band word:
/// `relation: user: warm; Kai: neutral`.
pub fn relation_line(store: &Store, preset_id: &str) -> Result<Option<String>> {
    if !settings::switch_on(store, settings::RELATIONS)? {
        return Ok(None);
    }
    store.read(|c| {
        let entries = toward_entries_conn(c, preset_id)?;
        let mut parts = Vec::with_capacity(entries.len());
        for e in entries {
            let v = current_value(c, preset_id, &e.target)?;
            parts.push(format!("{}: {}", e.label, Band::of(v).word()));
        }
        Ok(Some(format!("relation: {}", parts.join("; "))))
    })
}
