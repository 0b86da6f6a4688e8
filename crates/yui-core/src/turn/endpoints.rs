//! What the client remembers about an endpoint (base URL + model), table `endpoints`: whether it
//! refuses Responses chaining. A server that answers a chained request with a 4xx naming
//! `previous_response_id` (llama.cpp: "llama.cpp does not support 'previous_response_id'") is
//! noted once; later turns send the conversation rebuilt from the transcript instead.

use crate::error::Result;
use crate::store::Store;
use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::OptionalExtension;

fn key(base_url: &str, model: &str) -> String {
    format!("{} {model}", base_url.trim_end_matches('/'))
}

/// Whether Responses turns against this endpoint may chain on `previous_response_id`.
pub fn chains(store: &Store, base_url: &str, model: &str) -> Result<bool> {
    let k = key(base_url, model);
    let no: Option<bool> = store.read(|c| {
        Ok(c.query_row(
            "SELECT no_chain FROM endpoints WHERE endpoint = ?1",
            [&k],
            |r| r.get(0),
        )
        .optional()?)
    })?;
    Ok(!no.unwrap_or(false))
}

/// Remember that this endpoint refuses chaining, with the server's words.
pub fn note_no_chain(
    store: &Store,
    base_url: &str,
    model: &str,
    detail: &str,
    at: DateTime<Utc>,
) -> Result<()> {
    let k = key(base_url, model);
    let at = at.to_rfc3339_opts(SecondsFormat::Millis, true);
    store.write(|tx| {
        tx.execute(
            "INSERT INTO endpoints (endpoint, no_chain, detail, noted_at) VALUES (?1, 1, ?2, ?3)
             ON CONFLICT(endpoint) DO UPDATE SET no_chain = 1, detail = excluded.detail,
               noted_at = excluded.noted_at",
            [&k, detail, &at],
        )?;
        Ok(())
    })
}

/// Forget what was noted (the user changed servers behind the same URL).
pub fn forget(store: &Store, base_url: &str, model: &str) -> Result<()> {
    let k = key(base_url, model);
    store.write(|tx| {
        tx.execute("DELETE FROM endpoints WHERE endpoint = ?1", [&k])?;
        Ok(())
    })
}
