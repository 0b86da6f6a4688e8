//! When the once-a-day presence triggers last went (`morning`, `night`: local dates), kept in
//! `yui.proactive.said` so that "once a day" holds across restarts: YUI started again in the
//! same morning does not say good morning twice. Written by the stage's presence watch
//! (yui-core `stage/proactive/triggers.rs`).

use crate::error::{CoreError, Result};
use crate::store::{kv, Store};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The settings key (declared in `settings::KNOWN`, written by the app).
pub const KEY: &str = "yui.proactive.said";

/// The local dates the morning and night triggers last went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Said {
    pub morning: Option<NaiveDate>,
    pub night: Option<NaiveDate>,
}

pub fn default_value() -> Value {
    json!({"morning": null, "night": null})
}

/// The stored value, checked.
pub fn from_value(v: &Value) -> Result<Said> {
    serde_json::from_value(v.clone()).map_err(|e| {
        CoreError::invalid(format!(
            "{KEY} must be {{\"morning\": \"YYYY-MM-DD\" or null, \"night\": \"YYYY-MM-DD\" or null}}: {e}"
        ))
        .with_source(e)
    })
}

impl Said {
    /// What is stored; nothing, or a value this version cannot read, counts as never said (one
    /// greeting too many is better than a trigger that never goes again).
    pub fn load(store: &Store) -> Self {
        match kv::get(store, KEY) {
            Ok(Some(v)) => from_value(&v).unwrap_or_default(),
            _ => Self::default(),
        }
    }

    pub fn save(&self, store: &Store) -> Result<()> {
        kv::put(store, KEY, &serde_json::to_value(self)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_across_opens_and_a_bad_value_reads_as_never_said() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("yui.db");
        let day = NaiveDate::from_ymd_opt(2026, 12, 7).unwrap();
        {
            let store = Store::open(&path).unwrap();
            assert_eq!(Said::load(&store), Said::default());
            let said = Said {
                morning: Some(day),
                night: None,
            };
            said.save(&store).unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(Said::load(&store).morning, Some(day));
        assert_eq!(
            kv::get(&store, KEY).unwrap().unwrap(),
            json!({"morning": "2026-12-07", "night": null})
        );
        kv::put(&store, KEY, &json!({"morning": "yesterday"})).unwrap();
        assert_eq!(Said::load(&store), Said::default());
        assert!(from_value(&json!({"morning": "yesterday"}))
            .unwrap_err()
            .message
            .starts_with("yui.proactive.said must be"));
        assert!(from_value(&default_value()).is_ok());
    }
}
