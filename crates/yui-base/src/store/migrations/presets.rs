//! `presets`: the characters. Two defaults are seeded so two characters are on screen at first run.

pub(super) const V1: &str = r#"
CREATE TABLE presets (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    persona       TEXT NOT NULL DEFAULT '',
    avatar        TEXT NOT NULL DEFAULT '{}',   -- JSON: {"kind":"builtin","palette":...} or sprite folder
    voice         TEXT NOT NULL DEFAULT '{}',   -- JSON: voice engine settings
    is_open       INTEGER NOT NULL DEFAULT 0,
    is_main       INTEGER NOT NULL DEFAULT 0,   -- the preset shown in the main window
    pos_x         INTEGER,
    pos_y         INTEGER,
    sort          INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
INSERT INTO presets (id, name, persona, avatar, is_open, is_main, sort) VALUES
 ('yui', 'Yui', 'You are Yui, a cheerful desktop companion who lives on the user''s screen. Speak briefly and warmly.', '{"kind":"builtin","palette":"rose"}', 1, 1, 0),
 ('kai', 'Kai', 'You are Kai, Yui''s calm and curious friend who also lives on the desktop. Speak briefly, with dry humour.', '{"kind":"builtin","palette":"sky"}', 1, 0, 1);
"#;
