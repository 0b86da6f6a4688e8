//! `relations`: per preset, one directed integer per target (the human or another preset), the
//! log of every accepted change, and the per-turn marks that hold the one-call-per-turn rule.
//! Logic lives in `yui_core::relations`; the shape is documented in docs/relations.md.
//!
//! A target is `(target_kind, target_id)`: `('user', '')` is the human, `('preset', <id>)` another
//! preset, so a preset whose id is `user` never collides with the human. No foreign keys to
//! `presets`: a preset row rewritten by its owner must not cascade into the relation history.

pub(super) const V1: &str = r#"
CREATE TABLE relations (
    preset_id   TEXT NOT NULL,
    target_kind TEXT NOT NULL CHECK (target_kind IN ('user', 'preset')),
    target_id   TEXT NOT NULL DEFAULT '',
    value       INTEGER NOT NULL DEFAULT 0 CHECK (value BETWEEN -20 AND 20),
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (preset_id, target_kind, target_id)
) WITHOUT ROWID;

CREATE TABLE relation_log (
    id          INTEGER PRIMARY KEY,         -- rowid: never deleted, so it only grows
    at          TEXT NOT NULL,               -- UTC, RFC 3339 with milliseconds
    local_day   TEXT NOT NULL,               -- YYYY-MM-DD in the user's local time at `at`
    preset_id   TEXT NOT NULL,
    target_kind TEXT NOT NULL CHECK (target_kind IN ('user', 'preset')),
    target_id   TEXT NOT NULL DEFAULT '',
    delta       INTEGER NOT NULL CHECK (delta <> 0),
    value       INTEGER NOT NULL CHECK (value BETWEEN -20 AND 20),
    reason      TEXT NOT NULL,
    source      TEXT NOT NULL CHECK (source IN ('model', 'user')),
    turn_id     TEXT
);
CREATE INDEX relation_log_day ON relation_log (preset_id, target_kind, target_id, local_day);

CREATE TABLE relation_turns (
    preset_id   TEXT NOT NULL,
    target_kind TEXT NOT NULL,
    target_id   TEXT NOT NULL,
    turn_id     TEXT NOT NULL,
    at          TEXT NOT NULL,
    PRIMARY KEY (preset_id, target_kind, target_id, turn_id)
) WITHOUT ROWID;
CREATE INDEX relation_turns_at ON relation_turns (at);
"#;
