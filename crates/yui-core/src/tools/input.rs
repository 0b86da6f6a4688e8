//! Typed inputs for the fixed-schema client tools: each tool declares a `#[derive(Deserialize)]`
//! struct of [`Field`]s and reads its call's `arguments` with [`parse`], in one place.
//!
//! serde's own error text never reaches the model: a [`Field`] never fails to deserialize (a
//! value of the wrong shape is [`Field::Invalid`]), and arguments that are not an object read as
//! every field absent. Each tool then maps absent and invalid fields to its contract's strings
//! (`../shared/spec/client-tools.md`), in the contract's order.

use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;
use serde_json::Value;

/// One argument of a call, as given.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Field<T> {
    /// Not given, or `null`.
    #[default]
    Absent,
    /// Given, but not a `T`.
    Invalid,
    /// Given as a `T`.
    Given(T),
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Null => Field::Absent,
            v => serde_json::from_value(v).map_or(Field::Invalid, Field::Given),
        })
    }
}

impl<T> Field<T> {
    /// The value when given, else `None` (absent and invalid alike).
    pub fn given(self) -> Option<T> {
        match self {
            Field::Given(v) => Some(v),
            _ => None,
        }
    }

    /// A given value that fails `keep` counts as invalid.
    pub fn check(self, keep: impl FnOnce(&T) -> bool) -> Self {
        match self {
            Field::Given(v) if !keep(&v) => Field::Invalid,
            other => other,
        }
    }
}

impl Field<String> {
    /// A blank (empty or whitespace) string counts as invalid.
    pub fn nonblank(self) -> Self {
        self.check(|s| !s.trim().is_empty())
    }
}

/// A number with no fraction (`2` and `2.0` alike) as an `i64`, else `None`.
pub fn whole(n: f64) -> Option<i64> {
    (n.fract() == 0.0 && n.is_finite()).then_some(n as i64)
}

/// A call's arguments as the tool's input type. Arguments that are not an object (or that the
/// type refuses) read as the type's default: every field absent.
pub fn parse<T: DeserializeOwned + Default>(args: &Value) -> T {
    if !args.is_object() {
        return T::default();
    }
    T::deserialize(args).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Default, Deserialize)]
    struct Input {
        #[serde(default)]
        name: Field<String>,
        #[serde(default)]
        n: Field<f64>,
    }

    #[test]
    fn fields_read_absent_invalid_or_given() {
        let i: Input = parse(&json!({"name": "a", "n": 2.0, "extra": 1}));
        assert_eq!(i.name, Field::Given("a".into()));
        assert_eq!(i.n.given().and_then(whole), Some(2));
        let i: Input = parse(&json!({"name": 3, "n": null}));
        assert_eq!(i.name, Field::Invalid);
        assert_eq!(i.n, Field::Absent);
        let i: Input = parse(&json!(["not", "an", "object"]));
        assert_eq!((i.name, i.n), (Field::Absent, Field::Absent));
        let i: Input = parse(&json!({"name": "  ", "n": 1.5}));
        assert_eq!(i.name.nonblank(), Field::Invalid);
        assert_eq!(i.n.given().and_then(whole), None);
    }
}
