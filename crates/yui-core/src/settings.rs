//! Settings: key → JSON in the `settings` table, with defaults in code. Every known key is listed
//! in [`KNOWN`] with its default and meaning (mirrored in docs/settings.md).

use crate::error::{CoreError, Result};
use crate::store::Store;
use rusqlite::OptionalExtension;
use serde_json::{json, Value};

pub const BROWSER: &str = "yui.browser";
pub const RELATIONS: &str = "yui.relations";
pub const SCREEN: &str = "yui.screen";
pub const BACKEND: &str = "yui.backend";
pub const VOCAB: &str = "yui.vocab";
pub const VOICE: &str = "yui.voice";

/// A known key: its default and what it means.
pub struct Known {
    pub key: &'static str,
    pub default: fn() -> Value,
    pub doc: &'static str,
}

pub const KNOWN: &[Known] = &[
    Known {
        key: BROWSER,
        default: || json!({"enabled": false}),
        doc: "Browser tool switch: lets the model run JavaScript in ego lite. Off by default.",
    },
    Known {
        key: RELATIONS,
        default: || json!({"enabled": true}),
        doc: "Relations switch: rate_relation and the relation: line. On by default.",
    },
    Known {
        key: SCREEN,
        default: || json!({"enabled": false}),
        doc: "Screen-capture switch: look at: screen. Off by default.",
    },
    Known {
        key: crate::avatar::PLACES_KEY,
        default: || json!({"spots": {}, "bed": null}),
        doc: "The body's places the user saved: named spots for move_to and the bed for go_to_bed, each {monitor, x, y} relative to that monitor's work area (docs/avatar.md).",
    },
    Known {
        key: crate::avatar::BODY_KEY,
        default: || json!({"state": "unknown"}),
        doc: "Written by the app: the body's last settled state (what look at: body shows from the CLI).",
    },
    Known {
        key: BACKEND,
        default: crate::backend::default_value,
        doc: "Model backend: base URL, model, transport (chat_completions | responses | push), push URL. The API key is never here: it is in the OS keyring (or the labelled file fallback, see backend.rs).",
    },
    Known {
        key: VOCAB,
        default: crate::vocab::default_value,
        doc: "Expression vocabulary: emotions, motions (reactive/ambient/broker_publish), voice engine and tag table, expression-motion selection (docs/cue-contract.md). generate_express is built from it at every turn.",
    },
    Known {
        key: VOICE,
        default: crate::voice::default_value,
        doc: "Voice switch: speak replies through the OS speech service (speech-dispatcher on Linux). Off by default.",
    },
];

fn known(key: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.key == key)
}

/// Read a key: the stored value, else the default, else `null`.
pub fn get(store: &Store, key: &str) -> Result<Value> {
    let stored: Option<String> = store.read(|c| {
        Ok(
            c.query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()?,
        )
    })?;
    match stored {
        Some(s) => Ok(serde_json::from_str(&s)?),
        None => Ok(known(key).map(|k| (k.default)()).unwrap_or(Value::Null)),
    }
}

/// Write a key. Keys of known switches must keep their shape (`{"enabled": bool}`).
pub fn set(store: &Store, key: &str, value: &Value) -> Result<()> {
    validate(key, value)?;
    let text = serde_json::to_string(value)?;
    store.write(|tx| {
        tx.execute(
            "INSERT INTO settings (key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value,
               updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')",
            [key, &text],
        )?;
        Ok(())
    })
}

fn validate(key: &str, value: &Value) -> Result<()> {
    if key.trim().is_empty() {
        return Err(CoreError::invalid("setting key is empty"));
    }
    if SWITCHES.contains(&key) && !value.get("enabled").is_some_and(Value::is_boolean) {
        return Err(CoreError::invalid(format!(
            "{key} must be {{\"enabled\": true|false}}"
        )));
    }
    if key == BACKEND {
        crate::backend::BackendConfig::from_value(value)?;
    }
    if key == VOCAB {
        crate::vocab::from_value(value)?;
    }
    if key == VOICE {
        crate::voice::from_value(value)?;
    }
    if key == crate::avatar::PLACES_KEY {
        crate::avatar::Places::from_value(value).map_err(CoreError::invalid)?;
    }
    Ok(())
}

/// A switch's state (`{"enabled": bool}`), read at the moment of the call.
pub fn switch_on(store: &Store, key: &str) -> Result<bool> {
    Ok(get(store, key)?
        .get("enabled")
        .and_then(Value::as_bool)
        .unwrap_or(false))
}

/// Every known key with its current value (stored or default), then any other stored keys, as
/// one JSON object ordered by key.
pub fn list(store: &Store) -> Result<serde_json::Map<String, Value>> {
    let stored: Vec<(String, String)> = store.read(|c| {
        let mut stmt = c.prepare("SELECT key, value FROM settings ORDER BY key")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    })?;
    let mut out = serde_json::Map::new();
    for k in KNOWN {
        out.insert(k.key.to_string(), (k.default)());
    }
    for (key, text) in stored {
        // A hand-edited row with bad JSON shows as null rather than hiding every other key.
        out.insert(key, serde_json::from_str(&text).unwrap_or(Value::Null));
    }
    Ok(out)
}

/// The keys of the device-wide switches the user flips (settings window and quick controls).
pub const SWITCHES: [&str; 3] = [BROWSER, RELATIONS, SCREEN];

/// The device-wide switches, as the UI shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Switches {
    pub browser: bool,
    pub relations: bool,
    pub screen: bool,
}

/// Every switch's state now.
pub fn switches(store: &Store) -> Result<Switches> {
    Ok(Switches {
        browser: switch_on(store, BROWSER)?,
        relations: switch_on(store, RELATIONS)?,
        screen: switch_on(store, SCREEN)?,
    })
}

/// Flip the switch `key` (one of [`SWITCHES`]); returns every switch's state after the change.
pub fn set_switch(store: &Store, key: &str, enabled: bool) -> Result<Switches> {
    if !SWITCHES.contains(&key) {
        return Err(CoreError::invalid(format!("{key:?} is not a switch")));
    }
    set(store, key, &json!({ "enabled": enabled }))?;
    switches(store)
}
