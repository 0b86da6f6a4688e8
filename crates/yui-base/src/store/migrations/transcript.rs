//! `transcript`: per preset, the user's and the assistant's speech, with timestamps. Tool traffic
//! is never stored here (it lives only in the request in flight).

pub(super) const V1: &str = r#"
CREATE TABLE transcript (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    preset_id  TEXT NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    text       TEXT NOT NULL,
    turn_id    TEXT,
    at         TEXT NOT NULL
);
CREATE INDEX transcript_preset ON transcript (preset_id, id);
"#;

/// `cut`: speech of a reply that never finished (the stream was cut, the backend failed). It is
/// kept so nothing said is lost, and never sent back as history.
pub(super) const V2: &str = r#"
ALTER TABLE transcript ADD COLUMN cut INTEGER NOT NULL DEFAULT 0;
"#;

/// `speaker`: on a `user` line, the name of the other character whose reply was addressed to this
/// one (an addressed turn); `NULL` when the user typed it. History shows it as `<name>: <text>`.
pub(super) const V3: &str = r#"
ALTER TABLE transcript ADD COLUMN speaker TEXT;
"#;
