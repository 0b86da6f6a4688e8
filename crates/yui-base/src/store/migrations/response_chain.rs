//! `response_chain`: per preset, the Responses chain a turn continues — the id of the previous
//! turn's last response and the `function_call_output` items that answer the calls that response
//! left unanswered (a cue-only call beside speech, or the round-trip cap). They are sent ahead of
//! the next user message whenever that id is sent, so a server that checks tool pairing accepts
//! the chain, and they survive a restart. The row is dropped on a session reset and on the retry
//! that follows a 404 for the id.

pub(super) const V1: &str = r#"
CREATE TABLE response_chain (
    preset_id   TEXT PRIMARY KEY,
    response_id TEXT NOT NULL,
    pending     TEXT NOT NULL DEFAULT '[]',  -- JSON array of function_call_output items
    updated_at  TEXT NOT NULL
);
"#;
