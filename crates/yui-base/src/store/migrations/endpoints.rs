//! `endpoints`: what the client learned about a backend endpoint (base URL + model): today only
//! that it refuses Responses chaining (`previous_response_id`), so later turns go stateless at
//! once instead of failing first.

pub(super) const V1: &str = r#"
CREATE TABLE endpoints (
    endpoint   TEXT PRIMARY KEY,   -- "<base_url> <model>"
    no_chain   INTEGER NOT NULL DEFAULT 0,
    detail     TEXT NOT NULL DEFAULT '',
    noted_at   TEXT NOT NULL
);
"#;
