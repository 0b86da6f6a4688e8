//! A server's `tools/list` as YUI's client tools: each tool named `mcp__<server>__<tool>` (kept to
//! what every backend accepts, `[A-Za-z0-9_-]{1,64}`), its input schema checked, and the ones that
//! cannot be declared skipped with a diagnostic.

use crate::tools::GENERATE_EXPRESS;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Arc;

/// Tools declared from one server at most (backends refuse long tool lists: OpenAI takes 128 in
/// all); the rest are skipped with a diagnostic.
pub const MAX_TOOLS_PER_SERVER: usize = 64;
/// The longest tool name every backend accepts.
pub const MAX_NAME: usize = 64;

/// One server tool as a client tool.
#[derive(Clone)]
pub struct ToolDef {
    /// What the model calls: `mcp__<server>__<tool>`.
    pub name: String,
    /// The server's own name for it (what `tools/call` sends).
    pub tool: String,
    pub description: String,
    /// The input schema as the model sees it (root `"type": "object"`).
    pub parameters: Value,
    pub validator: Arc<jsonschema::Validator>,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name)
            .field("tool", &self.tool)
            .finish()
    }
}

/// What a server's list gave: the tools to declare, and why others are not.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub tools: Vec<Arc<ToolDef>>,
    pub diagnostics: Vec<String>,
}

/// The client tool name of `tool` on `server`: characters other than letters, digits, `_` and `-`
/// become `_`; a name over 64 characters keeps its first 55 and ends in `_` and 8 hex digits of a
/// hash of the whole tool name (so two long names stay apart).
pub fn exposed_name(server: &str, tool: &str) -> String {
    let mut n = format!("mcp__{server}__");
    n.extend(tool.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            c
        } else {
            '_'
        }
    }));
    if n.len() > MAX_NAME {
        // FNV-1a: stable across runs and platforms (std's hasher is not).
        let hash = tool.bytes().fold(0x811c_9dc5u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
        });
        n.truncate(MAX_NAME - 9);
        n.push_str(&format!("_{hash:08x}"));
    }
    n
}

/// The schema the model gets for a server's `inputSchema`: an object schema as is; a root without
/// `type` gets `"type": "object"` (MCP arguments are always an object); any other root is refused.
pub(crate) fn object_schema(input: &Map<String, Value>) -> Result<Value, String> {
    let mut schema = input.clone();
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None => {
            schema.insert("type".into(), Value::String("object".into()));
        }
        Some(t) => {
            return Err(format!(
                "its input schema has \"type\": {t}; tool arguments are an object"
            ))
        }
    }
    if !schema.contains_key("properties") {
        schema.insert("properties".into(), Value::Object(Map::new()));
    }
    Ok(Value::Object(schema))
}

/// Build the client tools of `server` from its tool list. `taken` holds names already declared
/// elsewhere (built-in and command tools): a tool that would take one is skipped.
pub fn build(server: &str, tools: &[rmcp::model::Tool], taken: &HashSet<String>) -> Listing {
    let mut out = Listing::default();
    let mut seen = HashSet::new();
    for t in tools {
        let name = exposed_name(server, &t.name);
        let skip = |why: String| format!("tool {:?} is not declared: {why}", t.name.as_ref());
        if t.name.is_empty() {
            out.diagnostics
                .push("a tool with an empty name is not declared".into());
            continue;
        }
        if name.ends_with(GENERATE_EXPRESS) {
            out.diagnostics.push(skip(format!(
                "{name} ends in generate_express (such calls play as expression cues)"
            )));
            continue;
        }
        if taken.contains(&name) || !seen.insert(name.clone()) {
            out.diagnostics
                .push(skip(format!("{name} is already the name of another tool")));
            continue;
        }
        let parameters = match object_schema(&t.input_schema) {
            Ok(p) => p,
            Err(e) => {
                out.diagnostics.push(skip(e));
                continue;
            }
        };
        let validator = match jsonschema::validator_for(&parameters) {
            Ok(v) => Arc::new(v),
            Err(e) => {
                out.diagnostics
                    .push(skip(format!("its input schema is not usable: {e}")));
                continue;
            }
        };
        if out.tools.len() == MAX_TOOLS_PER_SERVER {
            out.diagnostics.push(format!(
                "the server lists more than {MAX_TOOLS_PER_SERVER} tools: only the first {MAX_TOOLS_PER_SERVER} are declared"
            ));
            break;
        }
        let description = t
            .description
            .as_deref()
            .filter(|d| !d.trim().is_empty())
            .or(t.title.as_deref())
            .map(str::to_string)
            .unwrap_or_else(|| format!("The {} tool of the MCP server {server}.", t.name));
        out.tools.push(Arc::new(ToolDef {
            name,
            tool: t.name.to_string(),
            description,
            parameters,
            validator,
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, schema: Value) -> rmcp::model::Tool {
        let Value::Object(m) = schema else { panic!() };
        rmcp::model::Tool::new(name.to_string(), "d", Arc::new(m))
    }

    #[test]
    fn names_are_kept_to_what_backends_accept() {
        assert_eq!(
            exposed_name("time", "get_current_time"),
            "mcp__time__get_current_time"
        );
        assert_eq!(exposed_name("s", "a.b c/é"), "mcp__s__a_b_c__");
        let long = exposed_name("server", &"x".repeat(100));
        assert_eq!(long.len(), 64);
        assert_ne!(
            long,
            exposed_name("server", &format!("{}y", "x".repeat(99)))
        );
        assert!(long
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    }

    #[test]
    fn schemas_collisions_and_express_names() {
        let taken: HashSet<String> = ["mcp__s__taken".to_string()].into();
        let l = build(
            "s",
            &[
                tool(
                    "ok",
                    json!({"type": "object", "properties": {"a": {"type": "string"}}}),
                ),
                tool("untyped", json!({})),
                tool("stringy", json!({"type": "string"})),
                tool("taken", json!({"type": "object"})),
                tool("a.b", json!({"type": "object"})),
                tool("a_b", json!({"type": "object"})),
                tool("my_generate_express", json!({"type": "object"})),
                tool(
                    "broken",
                    json!({"type": "object", "properties": {"a": {"type": 5}}}),
                ),
            ],
            &taken,
        );
        let names: Vec<&str> = l.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["mcp__s__ok", "mcp__s__untyped", "mcp__s__a_b"]);
        assert_eq!(
            l.tools[1].parameters,
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(l.diagnostics.len(), 5, "{:?}", l.diagnostics);
        assert!(l.diagnostics[0].contains("\"type\": \"string\""));
    }

    #[test]
    fn a_long_list_is_cut_with_a_diagnostic() {
        let tools: Vec<_> = (0..500)
            .map(|i| tool(&format!("t{i}"), json!({"type": "object"})))
            .collect();
        let l = build("s", &tools, &HashSet::new());
        assert_eq!(l.tools.len(), MAX_TOOLS_PER_SERVER);
        assert_eq!(l.diagnostics.len(), 1);
    }
}
