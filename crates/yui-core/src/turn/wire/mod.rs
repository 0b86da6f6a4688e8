//! Wire types of the two request transports: what the client sends and what it tolerates back.

pub mod chat;
pub mod push;
pub mod responses;

use serde::{Deserialize, Deserializer};

/// Tool-call arguments as servers send them: a string (the norm), or a JSON object some servers
/// send instead, which is kept as its JSON text.
pub(crate) fn de_arguments<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    de_text(d)
}

/// Ids of any form: a string, a number, or absent.
pub(crate) fn de_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    de_text(d)
}

/// A string as is, `null`/absent as `None`, any other JSON value as its JSON text.
fn de_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s),
        Some(other) => Some(other.to_string()),
    })
}
