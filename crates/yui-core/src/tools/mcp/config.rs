//! MCP server definitions: read from the user's own `<OS config dir>/yui/mcp.json` (or
//! `$YUI_CONFIG_DIR/mcp.json`) in the format Claude Desktop uses, checked entry by entry. An
//! invalid entry is skipped with a diagnostic; its valid siblings stay.

use crate::tools::command::config::{
    config_path as command_config_path, home_dir, resolve, string_list, string_map,
};
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub const CONFIG_FILE: &str = "mcp.json";
/// `timeoutMs` when an entry gives none: how long one `tools/call` (and the start) may take.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// A server name is part of every tool name (`mcp__<server>__<tool>`, at most 64 characters).
pub const MAX_SERVER_NAME: usize = 32;

/// How YUI reaches one server.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "transport", rename_all = "lowercase")]
pub enum Transport {
    /// A child process speaking JSON-RPC lines over its stdin/stdout.
    Stdio {
        /// As configured.
        command: String,
        /// What is started: a path from home for a `command` with `/`, else the bare name (looked
        /// up on `PATH` when started).
        #[serde(skip)]
        program: PathBuf,
        args: Vec<String>,
        /// Added to YUI's environment. Only the names are shown (values may be secrets).
        #[serde(serialize_with = "names_only")]
        env: Vec<(String, String)>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP at `url`.
    Http {
        url: String,
        /// Sent with every request. Only the names are shown (values may be secrets).
        #[serde(serialize_with = "names_only")]
        headers: Vec<(String, String)>,
    },
}

fn names_only<S: serde::Serializer>(v: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|(k, _)| k))
}

/// One valid server entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerDef {
    pub name: String,
    #[serde(flatten)]
    pub transport: Transport,
    pub timeout_ms: u64,
    /// Whether a character with no selection of its own declares this server's tools.
    pub default_enabled: bool,
    /// `"disabled": true`: listed, never started.
    pub disabled: bool,
}

impl ServerDef {
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }
    /// `mcp__<server>__`: the start of every tool name of this server.
    pub fn prefix(&self) -> String {
        format!("mcp__{}__", self.name)
    }
}

/// What one read of `mcp.json` gave.
#[derive(Debug, Clone, Default)]
pub struct McpConfig {
    /// The file read (`None`: no config dir could be found).
    pub path: Option<PathBuf>,
    /// The servers that passed, in file order.
    pub servers: Vec<Arc<ServerDef>>,
    /// `mcpServers.<name>: why it was skipped`, and problems with the file as a whole.
    pub diagnostics: Vec<String>,
}

/// `mcp.json` beside `client-tools.json` (the same config dir and `YUI_CONFIG_DIR` override).
pub fn config_path() -> Option<PathBuf> {
    command_config_path().map(|p| p.with_file_name(CONFIG_FILE))
}

/// Read the user's `mcp.json` (see [`config_path`]).
pub fn load_default() -> McpConfig {
    match config_path() {
        Some(p) => load(&p, home_dir().as_deref()),
        None => McpConfig {
            diagnostics: vec!["no config directory: set YUI_CONFIG_DIR".into()],
            ..McpConfig::default()
        },
    }
}

/// Read `path`; `command`s with `/` resolve from `home`. A missing file is no servers and no
/// diagnostics.
pub fn load(path: &Path, home: Option<&Path>) -> McpConfig {
    let mut out = McpConfig {
        path: Some(path.to_path_buf()),
        ..McpConfig::default()
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return out,
        Err(e) => {
            out.diagnostics
                .push(format!("cannot read {}: {e}", path.display()));
            return out;
        }
    };
    let (servers, diagnostics) = parse(&text, home);
    out.servers = servers;
    out.diagnostics = diagnostics;
    out
}

/// Parse the text of `mcp.json`: the servers that pass, in file order, and the diagnostics.
pub fn parse(text: &str, home: Option<&Path>) -> (Vec<Arc<ServerDef>>, Vec<String>) {
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return (Vec::new(), vec![format!("mcp.json is not valid JSON: {e}")]),
    };
    let Some(root) = root.as_object() else {
        return (Vec::new(), vec!["mcp.json must hold a JSON object".into()]);
    };
    match root.get("mcpServers") {
        None => return (Vec::new(), Vec::new()),
        Some(Value::Object(_)) => {}
        Some(_) => {
            return (
                Vec::new(),
                vec![r#"mcpServers must be an object: {"NAME": {…}}"#.into()],
            )
        }
    };
    // Read again keeping the file's order (a serde_json map may sort its keys).
    let entries = serde_json::from_str::<InOrder>(text)
        .map(|o| o.0)
        .unwrap_or_default();
    let mut servers = Vec::new();
    let mut diags = Vec::new();
    for (name, entry) in &entries {
        if servers.iter().any(|s: &Arc<ServerDef>| s.name == *name) {
            diags.push(format!(
                "mcpServers.{name}: a server of this name comes earlier"
            ));
            continue;
        }
        match parse_entry(name, entry, home) {
            Ok(s) => servers.push(Arc::new(s)),
            Err(m) => diags.push(format!("mcpServers.{name}: {m}")),
        }
    }
    (servers, diags)
}

/// The root object with `mcpServers` as (name, entry) pairs in file order.
#[derive(Default)]
struct InOrder(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for InOrder {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Root {
            #[serde(rename = "mcpServers")]
            servers: Pairs,
        }
        struct Pairs(Vec<(String, Value)>);
        impl<'de> serde::Deserialize<'de> for Pairs {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = Pairs;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("an object")
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut m: A,
                    ) -> Result<Pairs, A::Error> {
                        let mut v = Vec::new();
                        while let Some(pair) = m.next_entry::<String, Value>()? {
                            v.push(pair);
                        }
                        Ok(Pairs(v))
                    }
                }
                d.deserialize_map(V)
            }
        }
        Ok(InOrder(Root::deserialize(d)?.servers.0))
    }
}

fn parse_entry(name: &str, entry: &Value, home: Option<&Path>) -> Result<ServerDef, String> {
    check_server_name(name)?;
    let Some(obj) = entry.as_object() else {
        return Err("an entry must be a JSON object".into());
    };
    let kind = opt_str(obj, "type")?;
    let transport = match (obj.get("command"), obj.get("url"), kind.as_deref()) {
        (_, _, Some("sse")) => {
            return Err("the old SSE transport is not supported: give the server's streamable HTTP endpoint (\"url\")".into())
        }
        (Some(_), Some(_), _) => return Err("give either command (stdio) or url (HTTP), not both".into()),
        (None, None, _) => return Err("command (stdio) or url (streamable HTTP) is required".into()),
        (Some(_), None, None | Some("stdio")) => stdio(obj, home)?,
        (None, Some(_), None | Some("http" | "streamable-http" | "streamableHttp")) => http(obj)?,
        (_, _, Some(t)) => return Err(format!("type {t:?} does not match the entry (stdio needs command, http needs url)")),
    };
    let timeout_ms = match obj.get("timeoutMs") {
        None => DEFAULT_TIMEOUT_MS,
        Some(v) => v
            .as_u64()
            .filter(|&n| n > 0)
            .ok_or("timeoutMs must be a positive integer (milliseconds)")?,
    };
    Ok(ServerDef {
        name: name.to_string(),
        transport,
        timeout_ms,
        default_enabled: opt_bool(obj, "defaultEnabled")?.unwrap_or(true),
        disabled: opt_bool(obj, "disabled")?.unwrap_or(false),
    })
}

fn stdio(obj: &Map<String, Value>, home: Option<&Path>) -> Result<Transport, String> {
    let command = match obj.get("command") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => return Err("command must be a non-empty string".into()),
    };
    let args = string_list(obj, "args")?;
    let env = string_map(obj, "env")?;
    if let Some((k, _)) = env
        .iter()
        .find(|(k, _)| k.is_empty() || k.contains(['=', '\0']))
    {
        return Err(format!("env: {k:?} is not a variable name"));
    }
    let cwd = match opt_str(obj, "cwd")? {
        None => None,
        Some(c) => Some(resolve(&c, home)?),
    };
    let program = resolve(&command, home)?;
    Ok(Transport::Stdio {
        command,
        program,
        args,
        env,
        cwd,
    })
}

fn http(obj: &Map<String, Value>) -> Result<Transport, String> {
    let url = opt_str(obj, "url")?.unwrap_or_default();
    let parsed = reqwest::Url::parse(&url).map_err(|e| format!("url {url:?}: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("url {url:?}: use http:// or https://"));
    }
    let headers = string_map(obj, "headers")?;
    for (k, v) in &headers {
        http::HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| format!("headers: {k:?} is not a header name"))?;
        http::HeaderValue::from_str(v)
            .map_err(|_| format!("headers: the value of {k} is not a valid header value"))?;
    }
    Ok(Transport::Http { url, headers })
}

/// A server name: 1–32 letters, digits, `_` or `-` (it becomes part of tool names), without `__`
/// (which separates server and tool in them).
pub(crate) fn check_server_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_SERVER_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !name.contains("__");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a server name: use 1-{MAX_SERVER_NAME} letters, digits, _ or - (no \"__\")"
        ))
    }
}

fn opt_str(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

fn opt_bool(obj: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(format!("{key} must be true or false")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(entry: &str) -> Result<ServerDef, String> {
        let text = format!(r#"{{"mcpServers": {{"s": {entry}}}}}"#);
        let (servers, diags) = parse(&text, Some(Path::new("/home/u")));
        match (servers.first(), diags.first()) {
            (Some(s), None) => Ok((**s).clone()),
            (_, Some(d)) => Err(d.clone()),
            _ => Err("nothing".into()),
        }
    }

    #[test]
    fn claude_desktop_entries() {
        let s = one(r#"{"command":"npx","args":["-y","x"],"env":{"K":"v"}}"#).unwrap();
        assert_eq!(s.timeout_ms, DEFAULT_TIMEOUT_MS);
        assert!(s.default_enabled && !s.disabled);
        match s.transport {
            Transport::Stdio {
                program, args, env, ..
            } => {
                assert_eq!(program, PathBuf::from("npx"));
                assert_eq!(args, ["-y", "x"]);
                assert_eq!(env, [("K".to_string(), "v".to_string())]);
            }
            t => panic!("{t:?}"),
        }
        let s = one(r#"{"url":"http://127.0.0.1:1/mcp","headers":{"Authorization":"Bearer t"},"timeoutMs":5}"#)
            .unwrap();
        assert_eq!(s.timeout_ms, 5);
        assert!(matches!(s.transport, Transport::Http { .. }));
        // Only header names are shown.
        let shown = serde_json::to_value(&s).unwrap();
        assert_eq!(shown["headers"], serde_json::json!(["Authorization"]));
        assert_eq!(shown["transport"], "http");
        let s = one(r#"{"command":"./bin/srv"}"#).unwrap();
        assert!(
            matches!(s.transport, Transport::Stdio { program, .. } if program == Path::new("/home/u/bin/srv"))
        );
    }

    #[test]
    fn bad_entries_say_why_and_siblings_stay() {
        for (entry, want) in [
            (r#"{}"#, "command (stdio) or url"),
            (r#"{"command":"a","url":"http://x/"}"#, "not both"),
            (r#"{"type":"sse","url":"http://x/"}"#, "SSE"),
            (r#"{"url":"ftp://x/"}"#, "http://"),
            (r#"{"url":"nope"}"#, "url"),
            (r#"{"command":""}"#, "non-empty"),
            (r#"{"command":"a","args":[1]}"#, "args"),
            (r#"{"command":"a","env":{"K":1}}"#, "env.K"),
            (r#"{"command":"a","timeoutMs":0}"#, "timeoutMs"),
            (
                r#"{"url":"http://x/","headers":{"a b":"c"}}"#,
                "header name",
            ),
            (r#"{"type":"http","command":"a"}"#, "does not match"),
            (r#"[]"#, "JSON object"),
        ] {
            let e = one(entry).unwrap_err();
            assert!(e.contains(want), "{entry}: {e}");
            assert!(e.starts_with("mcpServers.s: "), "{e}");
        }
        let (servers, diags) = parse(
            r#"{"mcpServers": {"bad name": {"command":"a"}, "a__b": {"command":"a"}, "ok": {"command":"a"}}}"#,
            None,
        );
        assert_eq!(servers.len(), 1);
        assert_eq!(diags.len(), 2);
        assert_eq!(parse("{", None).1.len(), 1);
        assert_eq!(parse(r#"{"mcpServers": []}"#, None).1.len(), 1);
        assert!(parse(r#"{"other": 1}"#, None) == (Vec::new(), Vec::new()));
    }
}
