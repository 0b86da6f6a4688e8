//! `reminders`: what a character promised to say at a given instant (the `remind` tool,
//! docs/proactive.md). A row is said once: `said_at` is set when its proactive turn starts; one
//! that fell due while YUI was closed is said at the next start, marked late.

pub(super) const V1: &str = r#"
CREATE TABLE reminders (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    preset_id   TEXT NOT NULL,
    text        TEXT NOT NULL,
    due_at      TEXT NOT NULL,   -- RFC 3339, UTC
    created_at  TEXT NOT NULL,
    said_at     TEXT             -- NULL until said
);
CREATE INDEX reminders_pending ON reminders (due_at) WHERE said_at IS NULL;
"#;
