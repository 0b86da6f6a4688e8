//! `settings`: key → JSON value. Defaults live in code (`yui_core::settings`), not in rows, so a
//! missing row reads as the default.

pub(super) const V1: &str = r#"
CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
"#;
