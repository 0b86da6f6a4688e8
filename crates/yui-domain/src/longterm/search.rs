//! Finding memories and transcript lines: BM25 over the FTS5 indexes, fused by reciprocal-rank
//! fusion (RRF) with the trigram index (Chinese and Japanese, which have no spaces between
//! words) and, when an embeddings model is set, cosine similarity over the stored vectors.
//!
//! A query is cut into words (Latin, Cyrillic…: lower-cased, common words dropped) and CJK runs
//! (cut into overlapping trigrams; a two-character run is looked up with `LIKE` among memories).
//! Every term is a quoted FTS5 string, so nothing the user typed is read as query syntax.

use super::{bm25, from_row, Memory, COLUMNS};
use crate::error::Result;
use rusqlite::{params, Connection};
use std::collections::HashMap;

/// RRF's constant (the usual 60): a document's fused score is Σ 1 / (K + rank).
pub const RRF_K: f64 = 60.0;
/// Candidates each ranked list contributes.
pub const CANDIDATES: usize = 30;
/// The most word terms and trigram terms one query uses (bounds the cost of a long message).
const MAX_WORDS: usize = 24;
const MAX_TRIGRAMS: usize = 48;

/// Words too common to say what a message is about.
const STOP: &[&str] = &[
    "a", "about", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by",
    "can", "could", "did", "do", "does", "doing", "for", "from", "had", "has", "have", "he", "her",
    "here", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "my",
    "no", "not", "now", "of", "oh", "ok", "on", "or", "our", "remember", "she", "so", "some",
    "tell", "that", "the", "their", "them", "then", "there", "they", "this", "to", "too", "up",
    "us", "was", "we", "were", "what", "when", "where", "which", "who", "why", "will", "with",
    "would", "yes", "you", "your", "know", "again", "still", "really", "please", "yeah", "hey",
    "hi", "like", "get", "got", "one", "ll", "re", "ve", "don", "didn", "isn", "im",
];

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF   // Hiragana, Katakana
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified
        | 0xAC00..=0xD7AF // Hangul
        | 0xF900..=0xFAFF // compatibility ideographs
        | 0x20000..=0x2FFFF)
}

/// A query cut into its terms.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Terms {
    pub words: Vec<String>,
    pub trigrams: Vec<String>,
    /// Two-character CJK runs (too short for the trigram index).
    pub pairs: Vec<String>,
}

impl Terms {
    pub fn of(text: &str) -> Self {
        let mut t = Terms::default();
        let mut word = String::new();
        let mut run: Vec<char> = Vec::new();
        let flush = |word: &mut String, run: &mut Vec<char>, t: &mut Terms| {
            if !word.is_empty() {
                let w = word.to_lowercase();
                if w.chars().count() >= 2
                    && !STOP.contains(&w.as_str())
                    && !t.words.contains(&w)
                    && t.words.len() < MAX_WORDS
                {
                    t.words.push(w);
                }
                word.clear();
            }
            match run.len() {
                0 | 1 => {}
                2 => {
                    let p: String = run.iter().collect();
                    if !t.pairs.contains(&p) {
                        t.pairs.push(p);
                    }
                }
                n => {
                    for i in 0..n - 2 {
                        let g: String = run[i..i + 3].iter().collect();
                        if !t.trigrams.contains(&g) && t.trigrams.len() < MAX_TRIGRAMS {
                            t.trigrams.push(g);
                        }
                    }
                }
            }
            run.clear();
        };
        for c in text.chars() {
            if is_cjk(c) {
                if !word.is_empty() {
                    let mut r = Vec::new();
                    flush(&mut word, &mut r, &mut t);
                }
                run.push(c);
            } else if c.is_alphanumeric() {
                if !run.is_empty() {
                    let mut w = String::new();
                    flush(&mut w, &mut run, &mut t);
                }
                word.push(c);
            } else {
                flush(&mut word, &mut run, &mut t);
            }
        }
        flush(&mut word, &mut run, &mut t);
        t
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.trigrams.is_empty() && self.pairs.is_empty()
    }
}

/// A term in more rows than this (any character's) says nothing about what a message is about
/// and would make BM25 rank most of the table: it is left out of the query. Counting stops at
/// the cap, so the check costs one short read of the term's doclist.
pub const COMMON: usize = 2000;

/// Rows an index may grow by before its cached term counts are counted again.
const DF_EPOCH_ROWS: i64 = 512;
/// Cached term counts kept at most (the map is emptied when full).
const DF_CACHE_MAX: usize = 8192;

/// How many rows (capped at [`COMMON`] + 1) hold each term, per database, index and term,
/// counted again once the index has grown by [`DF_EPOCH_ROWS`] rows. Counting a common term
/// reads 2,001 doclist entries; the same words come back turn after turn (profiled: without
/// the cache this counting was most of a recall over 100,000 lines).
type DfKey = (String, String, String);
static DF: std::sync::LazyLock<std::sync::Mutex<HashMap<DfKey, (i64, usize)>>> =
    std::sync::LazyLock::new(Default::default);

/// The most terms one FTS5 query keeps: the rarest (fewest rows), earlier ones (the message's
/// own words come before the last exchange's) first on a tie. Every term adds its whole
/// doclist to what ranking reads; the rare ones say the most.
pub const MAX_QUERY_TERMS: usize = 6;

/// The most postings (rows holding a term, summed over the terms) one ranking reads: the
/// rarest terms are kept until the next would pass it (the rarest is always kept). Reading a
/// posting costs about 0.2 µs, so this bounds a query of common words (a CJK sentence's 48
/// trigrams, six words each in 2,000 lines) at about a millisecond per index.
pub const MAX_POSTINGS: usize = 4000;

/// `terms` without those found in more than [`COMMON`] rows of the index `fts` over `table`,
/// rarest first, at most `keep` and [`MAX_POSTINGS`] rows in all; each with its row count.
fn rare(
    c: &Connection,
    fts: &str,
    table: &str,
    terms: &[String],
    keep: usize,
) -> Result<Vec<(String, usize)>> {
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let db = c.path().unwrap_or_default().to_string();
    let top: i64 = c
        .prepare_cached(&format!("SELECT ifnull(max(id), 0) FROM {table}"))?
        .query_row([], |r| r.get(0))?;
    let epoch = top / DF_EPOCH_ROWS;
    let mut stmt = c.prepare_cached(&format!(
        "SELECT count(*) FROM (SELECT rowid FROM {fts} WHERE {fts} MATCH ?1 LIMIT ?2)"
    ))?;
    let mut out = Vec::with_capacity(terms.len());
    for t in terms {
        let key = (db.clone(), fts.to_string(), t.clone());
        let cached = DF
            .lock()
            .ok()
            .and_then(|m| m.get(&key).copied())
            .filter(|(e, _)| *e == epoch);
        let n = match cached {
            Some((_, n)) => n,
            None => {
                let q = format!("\"{}\"", t.replace('"', "\"\""));
                let n: i64 = stmt.query_row(params![q, COMMON as i64 + 1], |r| r.get(0))?;
                // A term in no row is not cached: counting it again is one empty seek, and a
                // name said for the first time must count as soon as its memory is written.
                if n == 0 {
                    continue;
                }
                if let Ok(mut m) = DF.lock() {
                    if m.len() >= DF_CACHE_MAX {
                        m.clear();
                    }
                    m.insert(key, (epoch, n as usize));
                }
                n as usize
            }
        };
        // Terms in no row would only take the place of ones that match.
        if n > 0 && n <= COMMON {
            out.push((n, t.clone()));
        }
    }
    out.sort_by_key(|(n, _)| *n); // stable: ties keep the query's order
    out.truncate(keep);
    let mut postings = 0;
    let mut kept = Vec::with_capacity(out.len());
    for (n, t) in out {
        postings += n;
        if !kept.is_empty() && postings > MAX_POSTINGS {
            break;
        }
        kept.push((t, n));
    }
    Ok(kept)
}

/// Ranked id lists for `terms` over `table` (`memories` or `transcript`).
pub fn lists(
    c: &Connection,
    table: &str,
    preset_id: &str,
    terms: &Terms,
    below: i64,
) -> Result<Vec<Vec<i64>>> {
    let mut out = Vec::new();
    let (fts, tri) = (format!("{table}_fts"), format!("{table}_tri"));
    for (index, words, keep) in [
        (&fts, &terms.words, MAX_QUERY_TERMS),
        (&tri, &terms.trigrams, MAX_TRIGRAMS),
    ] {
        let kept = rare(c, index, table, words, keep)?;
        if !kept.is_empty() {
            out.push(bm25::ranked(
                c, index, table, preset_id, &kept, below, CANDIDATES,
            )?);
        }
    }
    if table == "memories" && !terms.pairs.is_empty() {
        // Few rows per character: a scan is cheap, and the trigram index cannot match 2 chars.
        let mut ids = Vec::new();
        let mut stmt = c.prepare_cached(
            "SELECT id FROM memories WHERE preset_id = ?1 AND instr(text, ?2) > 0
             ORDER BY importance DESC, id DESC LIMIT ?3",
        )?;
        for p in &terms.pairs {
            let rows = stmt.query_map(params![preset_id, p, CANDIDATES as i64], |r| {
                r.get::<_, i64>(0)
            })?;
            for id in rows {
                let id = id?;
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        out.push(ids);
    }
    Ok(out)
}

/// Reciprocal-rank fusion of ranked lists: ids by Σ 1/(K + rank), best first (ties: newer id).
pub fn rrf(lists: &[Vec<i64>]) -> Vec<(i64, f64)> {
    let mut score: HashMap<i64, f64> = HashMap::new();
    for list in lists {
        for (rank, id) in list.iter().enumerate() {
            *score.entry(*id).or_default() += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut v: Vec<(i64, f64)> = score.into_iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    v
}

/// Ids of `preset_id`'s memories whose stored vector (of `model`) is closest to `query`, by
/// cosine (vectors are stored normalised: a dot product), best first. Brute force: fine to 10⁵.
pub fn nearest(
    c: &Connection,
    preset_id: &str,
    model: &str,
    query: &[f32],
    limit: usize,
) -> Result<Vec<i64>> {
    let mut stmt = c.prepare_cached(
        "SELECT v.memory_id, v.vector FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
         WHERE m.preset_id = ?1 AND v.model = ?2",
    )?;
    let mut scored: Vec<(i64, f32)> = Vec::new();
    let rows = stmt.query_map(params![preset_id, model], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
    })?;
    for row in rows {
        let (id, blob) = row?;
        if blob.len() != query.len() * 4 {
            continue; // another dimension: stale, re-embedded in the background
        }
        let dot: f32 = blob
            .chunks_exact(4)
            .zip(query)
            .map(|(b, q)| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) * q)
            .sum();
        scored.push((id, dot));
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.truncate(limit);
    Ok(scored.into_iter().map(|(id, _)| id).collect())
}

/// The user's search (Settings → Memory, `yui memory search`): `preset_id`'s memories best
/// first, by RRF of the BM25 lists (and the vectors' list when `vector` is given).
pub fn memories(
    c: &Connection,
    preset_id: &str,
    query: &str,
    vector: Option<(&str, &[f32])>,
    limit: usize,
) -> Result<Vec<Memory>> {
    let terms = Terms::of(query);
    let mut ls = lists(c, "memories", preset_id, &terms, i64::MAX)?;
    if let Some((model, v)) = vector {
        ls.push(nearest(c, preset_id, model, v, CANDIDATES)?);
    }
    let mut stmt = c.prepare_cached(&format!("SELECT {COLUMNS} FROM memories WHERE id = ?1"))?;
    let mut out = Vec::new();
    for (id, _) in rrf(&ls).into_iter().take(limit) {
        out.push(stmt.query_row([id], from_row)?);
    }
    Ok(out)
}
