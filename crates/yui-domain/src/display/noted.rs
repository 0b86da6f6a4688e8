//! The display choice's one-time note (`Choice::note`: under XWayland, that windows of native
//! Wayland apps cannot be perched on), said once as the main character's bubble and remembered
//! in `yui.display.noted` (the backends whose note was said), so it is never said again. The log
//! and Settings → General keep saying it.

use super::Choice;
use crate::error::{CoreError, Result};
use crate::store::{kv, Store};
use serde_json::{json, Value};

/// The settings key: the backends (`Backend::key`) whose note the user was shown.
pub const KEY: &str = "yui.display.noted";

pub fn default_value() -> Value {
    json!([])
}

/// The stored list, checked.
pub fn from_value(v: &Value) -> Result<Vec<String>> {
    serde_json::from_value(v.clone()).map_err(|e| {
        CoreError::invalid(format!("{KEY} must be a list of backend names: {e}")).with_source(e)
    })
}

/// `choice`'s note the first time it is asked for, remembered at once (before it is shown: a
/// note said twice is worse than one lost to a crash); `None` when it has none or was said.
pub fn take(store: &Store, choice: &Choice) -> Result<Option<&'static str>> {
    let Some(note) = choice.note() else {
        return Ok(None);
    };
    let name = choice.backend.key();
    // A value this version cannot read counts as nothing said yet.
    let mut said = kv::get(store, KEY)?
        .and_then(|v| from_value(&v).ok())
        .unwrap_or_default();
    if said.iter().any(|s| s == name) {
        return Ok(None);
    }
    said.push(name.to_string());
    kv::put(store, KEY, &json!(said))?;
    Ok(Some(note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::{Asked, Backend, Found, Preference, Reason, XWAYLAND_NOTE};

    fn choice(backend: Backend) -> Choice {
        Choice {
            backend,
            reason: Reason {
                asked: Asked::Auto,
                found: Found::NotAsked,
            },
            preference: Preference::Auto,
            outputs: Vec::new(),
        }
    }

    #[test]
    fn the_xwayland_note_is_said_once_and_never_again_and_other_backends_keep_theirs() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("yui.db")).unwrap();
        assert_eq!(take(&store, &choice(Backend::X11)).unwrap(), None);
        assert_eq!(take(&store, &choice(Backend::LayerShell)).unwrap(), None);
        let xw = choice(Backend::Xwayland);
        assert_eq!(take(&store, &xw).unwrap(), Some(XWAYLAND_NOTE));
        assert_eq!(take(&store, &xw).unwrap(), None);
        // Reopened (the next start): still remembered.
        drop(store);
        let store = Store::open(dir.path().join("yui.db")).unwrap();
        assert_eq!(take(&store, &xw).unwrap(), None);
        assert!(take(&store, &choice(Backend::Wayland)).unwrap().is_some());
        assert_eq!(
            kv::get(&store, KEY).unwrap().unwrap(),
            json!(["xwayland", "wayland"])
        );
    }
}
