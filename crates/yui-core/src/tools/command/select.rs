//! Which configured command tools a character declares: the `yui.enabled_client_tools` setting,
//! `{"<preset id>": [names…]}`. A preset with no entry declares the definitions with
//! `defaultEnabled: true`; a non-empty array, exactly the known names in it (unknown ones ignored,
//! repeats once); `[]`, none. Names match exactly, case-sensitively.

use super::config::{Definition, Loaded};
use crate::error::{CoreError, Result};
use crate::store::{kv, Store};
use serde_json::Value;
use std::sync::Arc;

/// One character's selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// No entry: `defaultEnabled` decides.
    Default,
    /// A non-empty list of names.
    List(Vec<String>),
    /// `[]`: none.
    None,
}

impl Selection {
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::List(_) => "list",
            Self::None => "none",
        }
    }
    pub fn list(&self) -> Option<&[String]> {
        match self {
            Self::List(l) => Some(l),
            Self::None => Some(&[]),
            Self::Default => None,
        }
    }
}

// The key's shape is declared with the settings (domain floor); tools read it from there.
pub use crate::settings::enabled_tools::{default_value, validate, KEY};

/// `preset_id`'s selection now.
pub fn get(store: &Store, preset_id: &str) -> Result<Selection> {
    let all = kv::get(store, KEY)?.unwrap_or_else(default_value);
    Ok(of(&all, preset_id))
}

fn of(all: &Value, preset_id: &str) -> Selection {
    match all.get(preset_id).and_then(Value::as_array) {
        None => Selection::Default,
        Some(l) if l.is_empty() => Selection::None,
        Some(l) => Selection::List(
            l.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect(),
        ),
    }
}

/// Store `preset_id`'s selection (`Default` removes its entry).
pub fn set(store: &Store, preset_id: &str, selection: &Selection) -> Result<()> {
    let mut all = kv::get(store, KEY)?.unwrap_or_else(default_value);
    let obj = all
        .as_object_mut()
        .ok_or_else(|| CoreError::invalid("the stored selection is not an object"))?;
    match selection.list() {
        None => {
            obj.remove(preset_id);
        }
        Some(l) => {
            obj.insert(preset_id.to_string(), Value::from(l.to_vec()));
        }
    }
    validate(&all)?;
    kv::put(store, KEY, &all)
}

/// Turn one tool on or off for a character: from its current selection (the defaults when it has
/// none), add or remove `name`, and store the result as an explicit list (`[]` when empty).
pub fn toggle(store: &Store, loaded: &Loaded, preset_id: &str, name: &str, on: bool) -> Result<()> {
    let known: Vec<(String, bool)> = loaded
        .definitions
        .iter()
        .map(|d| (d.name.clone(), d.default_enabled))
        .collect();
    toggle_among(store, &known, preset_id, name, on)
}

/// [`toggle`] over every configured tool a character may declare — command tools and MCP server
/// tools share the one selection — given as (name, declared by default).
pub fn toggle_among(
    store: &Store,
    known: &[(String, bool)],
    preset_id: &str,
    name: &str,
    on: bool,
) -> Result<()> {
    if !known.iter().any(|(n, _)| n == name) {
        return Err(CoreError::not_found(format!(
            "no configured client tool named {name:?}"
        )));
    }
    let mut names: Vec<String> = picked(known, &get(store, preset_id)?)
        .into_iter()
        .filter(|n| n != name)
        .collect();
    if on {
        names.push(name.to_string());
    }
    let sel = if names.is_empty() {
        Selection::None
    } else {
        Selection::List(names)
    };
    set(store, preset_id, &sel)
}

/// The names a selection picks from (name, declared by default), in the given order.
pub fn picked(known: &[(String, bool)], selection: &Selection) -> Vec<String> {
    known
        .iter()
        .filter(|(n, default)| match selection {
            Selection::Default => *default,
            Selection::List(names) => names.iter().any(|x| x == n),
            Selection::None => false,
        })
        .map(|(n, _)| n.clone())
        .collect()
}

/// The definitions a selection picks, in file order.
pub fn selected(loaded: &Loaded, selection: &Selection) -> Vec<Arc<Definition>> {
    loaded
        .definitions
        .iter()
        .filter(|d| match selection {
            Selection::Default => d.default_enabled,
            Selection::List(names) => names.iter().any(|n| n == &d.name),
            Selection::None => false,
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn three_states() {
        let all = json!({"a": [], "b": ["x", "x", "Nope"]});
        assert_eq!(of(&all, "a"), Selection::None);
        assert_eq!(of(&all, "c"), Selection::Default);
        assert_eq!(
            of(&all, "b"),
            Selection::List(vec!["x".into(), "x".into(), "Nope".into()])
        );
        assert!(validate(&json!({"a": [1]})).is_err());
        assert!(validate(&json!([])).is_err());
        assert!(validate(&json!({"a": ["n"]})).is_ok());
    }
}
