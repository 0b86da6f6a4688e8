//! How a declared tool is written on the wire, per request transport (the schema the
//! vocabulary, the registry and the doctor all declare).

use serde_json::{json, Value};

/// A declared tool, nested: `{"type":"function","function":{name, description, parameters}}`.
pub fn chat(name: &str, description: &str, parameters: &Value) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": parameters,
        }
    })
}

/// A declared tool on the realtime session (`session.tools`): flattened, without `strict`.
pub fn realtime(name: &str, description: &str, parameters: &Value) -> Value {
    json!({
        "type": "function",
        "name": name,
        "description": description,
        "parameters": parameters,
    })
}

/// A declared tool, flattened, with `"strict": false`.
pub fn responses(name: &str, description: &str, parameters: &Value) -> Value {
    json!({
        "type": "function",
        "name": name,
        "description": description,
        "parameters": parameters,
        "strict": false,
    })
}
