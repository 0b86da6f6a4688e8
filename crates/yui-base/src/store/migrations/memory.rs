//! `memories` and the full-text indexes behind long-term memory (docs/memory.md).
//!
//! Per preset: memories (kind, text, importance, pinned, times, the transcript lines they came
//! from), an optional embedding per memory (`memory_vectors`), and the extraction state
//! (`memory_state`: how far the transcript has been read, the last turn's recall). Two FTS5
//! indexes per searched table — `porter unicode61` for BM25 over words, and `trigram`, which
//! finds Chinese and Japanese text that has no spaces between words — are external-content
//! indexes kept in step by triggers, so every write through the one writer connection updates
//! them in the same transaction. Transcript lines are indexed too (existing lines at migration).
//!
//! FTS5 and its trigram tokenizer (SQLite ≥ 3.34) are compiled into rusqlite's bundled SQLite
//! (libsqlite3-sys builds it with `-DSQLITE_ENABLE_FTS5`); no cargo feature is needed.

pub(super) const V1: &str = r#"
CREATE TABLE memories (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    preset_id     TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('fact', 'preference', 'event', 'relationship', 'summary')),
    text          TEXT NOT NULL,
    importance    INTEGER NOT NULL DEFAULT 3 CHECK (importance BETWEEN 1 AND 5),
    pinned        INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    last_used_at  TEXT,
    times_used    INTEGER NOT NULL DEFAULT 0,
    sources       TEXT NOT NULL DEFAULT '[]'   -- JSON array of transcript line ids
);
CREATE INDEX memories_preset ON memories (preset_id, pinned, id);

CREATE TABLE memory_vectors (
    memory_id  INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    model      TEXT NOT NULL,
    vector     BLOB NOT NULL               -- little-endian f32s, L2-normalised
);

CREATE TABLE memory_state (
    preset_id      TEXT PRIMARY KEY,
    extracted_to   INTEGER NOT NULL DEFAULT 0,  -- the last transcript id an extraction has read
    last_turn_id   TEXT,
    last_used      TEXT NOT NULL DEFAULT '[]',  -- JSON array of memory ids the last turn recalled
    failures       INTEGER NOT NULL DEFAULT 0,
    last_error     TEXT
);

CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, content = 'memories', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE memories_tri USING fts5(
    text, content = 'memories', content_rowid = 'id', tokenize = 'trigram'
);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
    INSERT INTO memories_tri (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO memories_tri (memories_tri, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER memories_au AFTER UPDATE OF text ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO memories_tri (memories_tri, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
    INSERT INTO memories_tri (rowid, text) VALUES (new.id, new.text);
END;

CREATE VIRTUAL TABLE transcript_fts USING fts5(
    text, content = 'transcript', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE transcript_tri USING fts5(
    text, content = 'transcript', content_rowid = 'id', tokenize = 'trigram'
);
CREATE TRIGGER transcript_ai AFTER INSERT ON transcript BEGIN
    INSERT INTO transcript_fts (rowid, text) VALUES (new.id, new.text);
    INSERT INTO transcript_tri (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER transcript_ad AFTER DELETE ON transcript BEGIN
    INSERT INTO transcript_fts (transcript_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO transcript_tri (transcript_tri, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER transcript_au AFTER UPDATE OF text ON transcript BEGIN
    INSERT INTO transcript_fts (transcript_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO transcript_tri (transcript_tri, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO transcript_fts (rowid, text) VALUES (new.id, new.text);
    INSERT INTO transcript_tri (rowid, text) VALUES (new.id, new.text);
END;
INSERT INTO transcript_fts (transcript_fts) VALUES ('rebuild');
INSERT INTO transcript_tri (transcript_tri) VALUES ('rebuild');
"#;

/// An index for the rolling summary's lookup on every turn (`longterm::summary`: a character's
/// newest `summary` memory), which otherwise read all of the character's memories (0.8 ms of a
/// recall with 10,000 memories).
pub(super) const V2: &str = r#"
CREATE INDEX memories_kind ON memories (preset_id, kind, id);
"#;
