//! BM25 ranking of one FTS5 index's matches, computed here instead of by FTS5's `rank`.
//!
//! FTS5's `bm25()` costs about 1 µs a matched row: for every row it runs a statement on the
//! index's `%_docsize` table and rebuilds the row's phrase instances, and `ORDER BY rank` scores
//! every match before it can keep the best (profiled: 2.9 of a recall's 4.2 ms, 2,468 rows of
//! 10,000 memories). Here each query term's postings are read once (`MATCH '"term"'`, rowids
//! only: about 0.2 µs a row), a row's score starts as the sum of its terms' IDF, and only the
//! best [`OVERFETCH`] × the rows wanted by that sum have their length read (one statement
//! over `%_docsize`, joined to their table to keep this character's rows) for the final score.
//!
//! The score is FTS5's `bm25()` with every term counted once per row (chat lines and memories
//! rarely say a word twice): Σ idf(t) · (k1 + 1) / (1 + k1 · (1 − b + b · |D| / avgdl)), with
//! FTS5's constants and IDF (`ln((N − n + 0.5) / (n + 0.5))`, at least 10⁻⁶). N, the total
//! token count and each row's length come from the index's shadow tables, whose formats the
//! FTS5 documentation gives (Appendix B): `%_data` row 1 holds N and the tokens per column as
//! varints, `%_docsize` one varint per column for each row.

use crate::error::Result;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::HashMap;

/// How many times `limit` rows are scored by length at a time, best by their terms' IDF first
/// (other characters' rows and the history window's lines are dropped there).
pub const OVERFETCH: usize = 8;

/// FTS5's `bm25()` constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// A SQLite varint at the start of `b` (big-endian 7-bit groups; a ninth byte gives 8 bits):
/// its value and length, or `None` when `b` ends inside it.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for (i, &byte) in b.iter().enumerate().take(9) {
        if i == 8 {
            return Some(((v << 8) | u64::from(byte), 9));
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// The sum of the varints in `b` (a row's tokens over all columns), `None` if `b` is cut.
fn varint_sum(mut b: &[u8]) -> Option<u64> {
    let mut sum = 0u64;
    while !b.is_empty() {
        let (v, n) = varint(b)?;
        sum = sum.saturating_add(v);
        b = &b[n..];
    }
    Some(sum)
}

/// The index's row count N and mean row length in tokens (FTS5's "averages" record).
fn averages(c: &Connection, fts: &str) -> Result<(f64, f64)> {
    let block: Option<Vec<u8>> = c
        .prepare_cached(&format!("SELECT block FROM {fts}_data WHERE id = 1"))?
        .query_row([], |r| r.get(0))
        .optional()?;
    let parsed = block.and_then(|b| {
        let (rows, n) = varint(&b)?;
        Some((rows, varint_sum(&b[n..])?))
    });
    Ok(match parsed {
        Some((rows, tokens)) if rows > 0 => (rows as f64, tokens as f64 / rows as f64),
        // An empty or unreadable record: lengths then count for nothing (every row average).
        _ => (1.0, 1.0),
    })
}

/// FTS5's IDF of a term found in `n` of `rows` rows.
fn idf(rows: f64, n: usize) -> f64 {
    let v = ((rows - n as f64 + 0.5) / (n as f64 + 0.5)).ln();
    if v <= 0.0 {
        1e-6
    } else {
        v
    }
}

/// Ids of `preset_id`'s rows in `table` matching any of `terms` (each with the number of rows
/// that hold it) in its FTS5 index `fts`, best BM25 first, at most `limit`. `below`: only rows
/// with a smaller id; cut transcript lines are never found. `overfetch` rows are scored by
/// length at a time ([`OVERFETCH`] × `limit`), best IDF sum first, until `limit` of them are
/// this character's.
pub fn ranked(
    c: &Connection,
    fts: &str,
    table: &str,
    preset_id: &str,
    terms: &[(String, usize)],
    below: i64,
    limit: usize,
) -> Result<Vec<i64>> {
    if terms.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let (rows, avgdl) = averages(c, fts)?;
    let mut sum: HashMap<i64, f64> = HashMap::new();
    let mut post = c.prepare_cached(&format!("SELECT rowid FROM {fts} WHERE {fts} MATCH ?1"))?;
    for (term, n) in terms {
        let w = idf(rows, *n);
        let q = format!("\"{}\"", term.replace('"', "\"\""));
        let ids = post.query_map([q], |r| r.get::<_, i64>(0))?;
        for id in ids {
            *sum.entry(id?).or_default() += w;
        }
    }
    let mut order: Vec<(i64, f64)> = sum.into_iter().collect();
    // Ties: the older row first, the order FTS5's `rank` leaves them in.
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let extra = if table == "transcript" {
        " AND t.cut = 0"
    } else {
        ""
    };
    // CROSS JOIN keeps the id list outside: one rowid lookup per candidate.
    let mut sized = c.prepare_cached(&format!(
        "SELECT t.id, d.sz FROM json_each(?1) j CROSS JOIN {table} t ON t.id = j.value
         LEFT JOIN {fts}_docsize d ON d.id = t.id
         WHERE t.preset_id = ?2 AND t.id < ?3{extra}"
    ))?;
    let mut scored: Vec<(i64, f64)> = Vec::new();
    for chunk in order.chunks(limit * OVERFETCH) {
        let ids: Vec<i64> = chunk.iter().map(|(id, _)| *id).collect();
        let found = sized.query_map(
            params![serde_json::to_string(&ids)?, preset_id, below],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Option<Vec<u8>>>(1)?)),
        )?;
        let idf_of: HashMap<i64, f64> = chunk.iter().copied().collect();
        for row in found {
            let (id, sz) = row?;
            let len = sz
                .as_deref()
                .and_then(varint_sum)
                .map_or(avgdl, |n| n as f64);
            let norm = (K1 + 1.0) / (1.0 + K1 * (1.0 - B + B * len / avgdl));
            scored.push((id, idf_of.get(&id).copied().unwrap_or(0.0) * norm));
        }
        if scored.len() >= limit {
            break;
        }
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(limit);
    Ok(scored.into_iter().map(|(id, _)| id).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_read_as_sqlite_writes_them() {
        assert_eq!(varint(&[0x0e]), Some((14, 1)));
        assert_eq!(varint(&[0xce, 0x10]), Some((10_000, 2)));
        assert_eq!(varint(&[0x88, 0xc5, 0x60]), Some((140_000, 3)));
        assert_eq!(varint(&[0xff; 9]), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x81]), None);
        assert_eq!(varint_sum(&[0x03, 0x81, 0x00]), Some(131));
        assert_eq!(varint_sum(&[0x03, 0x81]), None);
    }

    #[test]
    fn idf_is_fts5s() {
        assert!((idf(10_000.0, 449) - (9551.5f64 / 449.5).ln()).abs() < 1e-12);
        assert_eq!(idf(10.0, 9), 1e-6);
    }
}
