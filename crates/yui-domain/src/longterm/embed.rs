//! Optional embeddings: when `yui.memory.embeddings` names a model, memories are embedded with
//! `POST {base}/embeddings` (OpenAI-compatible) and stored as little-endian f32 blobs,
//! L2-normalised, so cosine is a dot product ([`super::search::nearest`]). [`backfill`] embeds
//! what has no vector of the current model (new memories, edited ones, or all of them after a
//! model change) and runs in the background, never in a turn.
//!
//! A turn's message is embedded before the turn ([`recall_turn`], from `turn::run`) within
//! `embeddings.timeout_ms`; a slow or failing server leaves the turn its words-only recall.
//!
//! [`stand_in`] is a deterministic embedding with no model (hashed words and character
//! trigrams): the recall-quality benchmark's second column, and tests.

use crate::error::{CoreError, ErrorCode, Result};
use crate::store::Store;
use rusqlite::params;
use serde_json::{json, Value};

/// The stand-in's dimension.
pub const STAND_IN_DIM: usize = 256;
/// Memories embedded per request.
const BATCH: usize = 32;

/// Scale `v` to unit length (a zero vector stays zero).
pub fn normalise(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A deterministic stand-in embedding: each lower-cased word (a trailing `s` dropped) and each
/// character trigram of the text hashed into [`STAND_IN_DIM`] signed buckets, normalised. It
/// captures overlap of words and word parts, not meaning.
pub fn stand_in(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; STAND_IN_DIM];
    let mut add = |feature: &str, w: f32| {
        let h = fnv(feature);
        let sign = if h & 1 == 0 { 1.0 } else { -1.0 };
        v[(h >> 1) as usize % STAND_IN_DIM] += sign * w;
    };
    let lower = text.to_lowercase();
    for word in lower.split(|c: char| !c.is_alphanumeric()) {
        if word.chars().count() < 2 {
            continue;
        }
        add(word.strip_suffix('s').unwrap_or(word), 1.0);
        let chars: Vec<char> = word.chars().collect();
        for g in chars.windows(3) {
            add(&g.iter().collect::<String>(), 0.5);
        }
    }
    normalise(&mut v);
    v
}

/// Embed `texts` with `model` at `{base}/embeddings`; one vector each, normalised.
pub async fn embed(
    http: &reqwest::Client,
    base: &str,
    api_key: Option<&str>,
    model: &str,
    texts: &[String],
) -> Result<Vec<Vec<f32>>> {
    let url = format!("{}/embeddings", base.trim_end_matches('/'));
    let mut req = http
        .post(&url)
        .timeout(std::time::Duration::from_secs(60))
        .json(&json!({ "model": model, "input": texts }));
    if let Some(k) = api_key.filter(|k| !k.is_empty()) {
        req = req.bearer_auth(k);
    }
    let fail = |m: String| CoreError::new(ErrorCode::Backend, format!("embeddings: {m}"));
    let resp = req.send().await.map_err(|e| fail(e.to_string()))?;
    let status = resp.status();
    let body: Value = resp.json().await.map_err(|e| fail(e.to_string()))?;
    if !status.is_success() {
        return Err(fail(format!("{url} answered {status}")));
    }
    let data = body
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| fail("the answer has no data[]".into()))?;
    let mut out = vec![Vec::new(); texts.len()];
    for (i, d) in data.iter().enumerate() {
        let idx = d.get("index").and_then(Value::as_u64).unwrap_or(i as u64) as usize;
        let mut v: Vec<f32> = d
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| fail("an item has no embedding".into()))?
            .iter()
            .map(|x| x.as_f64().unwrap_or(0.0) as f32)
            .collect();
        normalise(&mut v);
        if let Some(slot) = out.get_mut(idx) {
            *slot = v;
        }
    }
    if out.iter().any(Vec::is_empty) {
        return Err(fail("fewer embeddings than inputs".into()));
    }
    Ok(out)
}

/// Store `v` as memory `id`'s vector of `model` (replacing any other).
pub fn put(store: &Store, id: i64, model: &str, v: &[f32]) -> Result<()> {
    store.write(|tx| {
        // The memory may have been forgotten meanwhile: then nothing is stored.
        tx.execute(
            "INSERT INTO memory_vectors (memory_id, model, vector)
             SELECT id, ?2, ?3 FROM memories WHERE id = ?1
             ON CONFLICT(memory_id) DO UPDATE SET model = excluded.model, vector = excluded.vector",
            params![id, model, to_blob(v)],
        )?;
        Ok(())
    })
}

/// Memories (id, text) with no vector of `model`, oldest first.
pub fn missing(store: &Store, model: &str, limit: usize) -> Result<Vec<(i64, String)>> {
    store.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT m.id, m.text FROM memories m LEFT JOIN memory_vectors v
               ON v.memory_id = m.id AND v.model = ?1
             WHERE v.memory_id IS NULL ORDER BY m.id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![model, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    })
}

/// Embed every memory without a vector of `model` (a model change re-embeds them all). Returns
/// how many were embedded; stops at the first failed request (what was stored stays).
pub async fn backfill(
    store: &Store,
    http: &reqwest::Client,
    base: &str,
    api_key: Option<&str>,
    model: &str,
) -> Result<usize> {
    let mut done = 0;
    loop {
        let batch = missing(store, model, BATCH)?;
        if batch.is_empty() {
            return Ok(done);
        }
        let texts: Vec<String> = batch.iter().map(|(_, t)| t.clone()).collect();
        let vectors = embed(http, base, api_key, model, &texts).await?;
        for ((id, _), v) in batch.iter().zip(&vectors) {
            put(store, *id, model, v)?;
        }
        done += batch.len();
    }
}

/// What a turn asks of recall: its preset, turn, message and the chat backend (the embeddings
/// server defaults to it).
#[derive(Debug, Clone, Copy)]
pub struct TurnAsk<'a> {
    pub preset_id: &'a str,
    pub turn_id: &'a str,
    pub message: &'a str,
    pub base_url: &'a str,
    pub api_key: Option<&'a str>,
}

/// With an embeddings model set, the turn's memory lines recalled again using the message's vector
/// (fused with BM25 by RRF; docs/memory.md). `turn::prepare` recalled by words alone (it is
/// synchronous); `turn::run` calls this first. The wait is `embeddings.timeout_ms`: a server that
/// is slow, down or answers nonsense, or a stop, leaves the turn as prepared (`None`), with one
/// plain log line.
pub async fn recall_turn(
    store: &Store,
    http: &reqwest::Client,
    now: chrono::DateTime<chrono::Utc>,
    req: TurnAsk<'_>,
    cancel: &tokio_util::sync::CancellationToken,
) -> Option<Vec<String>> {
    let cfg = super::config::load(store);
    let e = cfg.embeddings.as_ref()?;
    if req.message.trim().is_empty() {
        return None;
    }
    let base = e.base_url.as_deref().unwrap_or(req.base_url);
    let key = req.api_key;
    let texts = [req.message.to_string()];
    let wait = std::time::Duration::from_millis(e.timeout_ms);
    let asked = tokio::time::timeout(wait, embed(http, base, key, &e.model, &texts));
    let vector = tokio::select! {
        _ = cancel.cancelled() => return None,
        r = asked => match r {
            Err(_) => {
                tracing::info!(
                    preset = %req.preset_id,
                    "the embeddings server did not answer within {} ms; this turn recalls by words only",
                    e.timeout_ms
                );
                return None;
            }
            Ok(Err(err)) => {
                tracing::info!(
                    preset = %req.preset_id,
                    "the message could not be embedded ({}); this turn recalls by words only",
                    err.message
                );
                return None;
            }
            Ok(Ok(mut v)) => v.pop()?,
        },
    };
    let built = super::recall::build(
        store,
        &cfg,
        req.preset_id,
        req.message,
        Some((&e.model, &vector)),
    );
    let (_, recalled) = match built {
        Ok(b) => b,
        Err(err) => {
            tracing::warn!(preset = %req.preset_id, error = %err, "recall with the embedding failed");
            return None;
        }
    };
    let used = &recalled.memory_ids;
    if let Err(err) = super::recall::record(store, now, req.preset_id, req.turn_id, used) {
        tracing::warn!(error = %err, "the memories used could not be recorded");
    }
    Some(recalled.lines)
}
