//! Versioned schema migrations. `PRAGMA user_version` holds the schema version; each step is one
//! table's module. A database whose version is newer than [`SCHEMA_VERSION`] is refused.

mod endpoints;
mod memory;
mod presets;
mod relations;
mod reminders;
mod response_chain;
mod settings;
mod transcript;

use crate::error::{CoreError, ErrorCode, Result};
use rusqlite::Connection;

/// One migration step: brings the schema from `version - 1` to `version`.
struct Step {
    version: i64,
    name: &'static str,
    sql: &'static str,
}

/// Every step in order. Append only: never edit a released step.
const STEPS: &[Step] = &[
    Step {
        version: 1,
        name: "presets",
        sql: presets::V1,
    },
    Step {
        version: 2,
        name: "settings",
        sql: settings::V1,
    },
    Step {
        version: 3,
        name: "transcript",
        sql: transcript::V1,
    },
    Step {
        version: 4,
        name: "relations",
        sql: relations::V1,
    },
    Step {
        version: 5,
        name: "response_chain",
        sql: response_chain::V1,
    },
    Step {
        version: 6,
        name: "transcript_cut",
        sql: transcript::V2,
    },
    Step {
        version: 7,
        name: "endpoints",
        sql: endpoints::V1,
    },
    Step {
        version: 8,
        name: "transcript_speaker",
        sql: transcript::V3,
    },
    Step {
        version: 9,
        name: "memory",
        sql: memory::V1,
    },
    Step {
        version: 10,
        name: "memory_kind_index",
        sql: memory::V2,
    },
    Step {
        version: 11,
        name: "reminders",
        sql: reminders::V1,
    },
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = STEPS[STEPS.len() - 1].version;

/// Read `user_version` and refuse a database written by a newer schema. Called before anything
/// is written to the file (even before WAL mode is set), so a refused file stays byte-identical.
pub fn check_version(conn: &Connection) -> Result<i64> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > SCHEMA_VERSION {
        return Err(CoreError::new(
            ErrorCode::StoreTooNew,
            format!(
                "this database was written by a newer YUI (schema version {current}, this build knows {SCHEMA_VERSION}); update YUI or use another --data-dir"
            ),
        ));
    }
    Ok(current)
}

pub fn migrate(conn: &mut Connection) -> Result<()> {
    migrate_to(conn, SCHEMA_VERSION)
}

/// Apply the steps up to `target` only. Tests use it to build a database as an older YUI left it.
#[doc(hidden)]
pub fn migrate_to(conn: &mut Connection, target: i64) -> Result<()> {
    let current = check_version(conn)?;
    for step in STEPS
        .iter()
        .filter(|s| s.version > current && s.version <= target)
    {
        let tx = conn.transaction()?;
        tx.execute_batch(step.sql).map_err(|e| {
            CoreError::new(
                ErrorCode::Store,
                format!("migration {} ({}) failed: {e}", step.version, step.name),
            )
        })?;
        tx.pragma_update(None, "user_version", step.version)?;
        tx.commit()?;
        tracing::info!(version = step.version, name = step.name, "migrated");
    }
    Ok(())
}
