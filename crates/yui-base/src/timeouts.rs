//! The waits that keep a request from hanging (`yui.timeouts`): every transport, the doctor and
//! the settings read them from here.

use std::time::Duration;

/// Timeouts that keep a turn from hanging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// TCP/TLS connect.
    pub connect: Duration,
    /// No response headers for this long ends the request (a server loading a model may take a
    /// while before it answers).
    pub headers: Duration,
    /// No bytes of the body for this long ends the request.
    pub stall: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            headers: Duration::from_secs(120),
            stall: Duration::from_secs(60),
        }
    }
}

/// The settings key of the waits (declared in `yui_core::settings`).
pub const TIMEOUTS_KEY: &str = "yui.timeouts";

impl Timeouts {
    /// The waits in `yui.timeouts` (`connect_secs`, `headers_secs`, `stall_secs`); a missing
    /// or unreadable field keeps its default.
    pub fn from_value(v: &serde_json::Value) -> Self {
        let d = Self::default();
        let secs = |k: &str, dflt: Duration| {
            v.get(k)
                .and_then(serde_json::Value::as_u64)
                .filter(|s| *s > 0)
                .map(Duration::from_secs)
                .unwrap_or(dflt)
        };
        Self {
            connect: secs("connect_secs", d.connect),
            headers: secs("headers_secs", d.headers),
            stall: secs("stall_secs", d.stall),
        }
    }

    /// The waits configured in settings ([`TIMEOUTS_KEY`]).
    pub fn configured(store: &crate::store::Store) -> Self {
        match crate::store::kv::get(store, TIMEOUTS_KEY) {
            Ok(Some(v)) => Self::from_value(&v),
            Ok(None) => Self::default(),
            Err(e) => {
                tracing::warn!(error = %e, "yui.timeouts unreadable: default waits");
                Self::default()
            }
        }
    }

    /// `yui.timeouts`' default value.
    pub fn default_value() -> serde_json::Value {
        let d = Self::default();
        serde_json::json!({
            "connect_secs": d.connect.as_secs(),
            "headers_secs": d.headers.as_secs(),
            "stall_secs": d.stall.as_secs(),
        })
    }

    /// Check a `yui.timeouts` value: an object of positive whole seconds, known fields only.
    pub fn validate(v: &serde_json::Value) -> Result<(), crate::error::CoreError> {
        use crate::error::CoreError;
        let obj = v
            .as_object()
            .ok_or_else(|| CoreError::invalid("yui.timeouts must be an object of seconds"))?;
        for (k, val) in obj {
            if !matches!(k.as_str(), "connect_secs" | "headers_secs" | "stall_secs") {
                return Err(CoreError::invalid(format!(
                    "yui.timeouts: unknown field {k:?}"
                )));
            }
            if !val.as_u64().is_some_and(|s| (1..=3600).contains(&s)) {
                return Err(CoreError::invalid(format!(
                    "yui.timeouts.{k} must be whole seconds from 1 to 3600"
                )));
            }
        }
        Ok(())
    }
}
