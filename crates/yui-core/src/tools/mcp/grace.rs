//! `yui.mcp`: how long a turn waits for MCP servers that are still starting before it declares
//! the tools of those that are ready. A server that never answers `initialize` costs a turn this
//! grace at most, never its whole start timeout; a tool call waits for its own server only.

use crate::error::{CoreError, Result};
use crate::store::{kv, Store};
use serde_json::{json, Value};
use std::time::Duration;

/// The settings key (declared in `crate::settings`).
pub const KEY: &str = "yui.mcp";
/// `turn_grace_ms` when it was never set.
pub const DEFAULT_GRACE_MS: u64 = 1000;
/// The longest grace accepted: a turn must not wait long on what it may not use.
pub const MAX_GRACE_MS: u64 = 1500;

/// The typed `yui.mcp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpSettings {
    /// How long a turn waits for servers still starting (0: not at all).
    pub turn_grace: Duration,
}

impl Default for McpSettings {
    fn default() -> Self {
        Self {
            turn_grace: Duration::from_millis(DEFAULT_GRACE_MS),
        }
    }
}

/// The default value, as stored.
pub fn default_value() -> Value {
    json!({"turn_grace_ms": DEFAULT_GRACE_MS})
}

impl McpSettings {
    /// `{"turn_grace_ms": 0..=1500}`; anything else is refused in words.
    pub fn from_value(v: &Value) -> Result<Self> {
        let bad = || {
            CoreError::invalid(format!(
                "{KEY} must be {{\"turn_grace_ms\": 0..={MAX_GRACE_MS}}}"
            ))
        };
        let obj = v.as_object().ok_or_else(bad)?;
        if obj.keys().any(|k| k != "turn_grace_ms") {
            return Err(bad());
        }
        let ms = match obj.get("turn_grace_ms") {
            None => DEFAULT_GRACE_MS,
            Some(n) => n.as_u64().filter(|&n| n <= MAX_GRACE_MS).ok_or_else(bad)?,
        };
        Ok(Self {
            turn_grace: Duration::from_millis(ms),
        })
    }
}

/// The stored setting; a value that cannot be read keeps the default (and says so in the log).
pub fn load(store: &Store) -> McpSettings {
    match kv::get(store, KEY) {
        Ok(Some(v)) => McpSettings::from_value(&v)
            .inspect_err(|e| tracing::warn!(error = %e.message, "{KEY}: the default is used"))
            .unwrap_or_default(),
        _ => McpSettings::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grace_is_a_bounded_number_of_milliseconds() {
        let ok = |v: Value| McpSettings::from_value(&v).map(|s| s.turn_grace.as_millis());
        assert_eq!(ok(json!({"turn_grace_ms": 0})).unwrap(), 0);
        assert_eq!(ok(json!({"turn_grace_ms": 1500})).unwrap(), 1500);
        assert_eq!(ok(json!({})).unwrap(), 1000);
        assert_eq!(ok(default_value()).unwrap(), 1000);
        for bad in [
            json!({"turn_grace_ms": 1501}),
            json!({"turn_grace_ms": -1}),
            json!({"turn_grace_ms": "1s"}),
            json!({"grace": 10}),
            json!(5),
        ] {
            assert_eq!(
                ok(bad).unwrap_err().message,
                "yui.mcp must be {\"turn_grace_ms\": 0..=1500}"
            );
        }
    }
}
