//! Command client tool definitions: read from the user's global config file
//! `<OS config dir>/yui/client-tools.json` (or `$YUI_CONFIG_DIR/client-tools.json`), checked
//! entry by entry. An invalid entry is skipped with a diagnostic; its valid siblings stay.

use crate::tools::{
    ADDRESS_CHARACTER, BODY_ACTION, BROWSER, GENERATE_EXPRESS, LOOK, RATE_RELATION,
};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Overrides the config dir (`<OS config dir>/yui`): tests and portable setups.
pub const CONFIG_DIR_ENV: &str = "YUI_CONFIG_DIR";
pub const CONFIG_FILE: &str = "client-tools.json";
/// `executionTimeoutMs` when a definition gives none.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// The names of YUI's own tools: a definition may not take one.
pub const BUILT_IN: &[&str] = &[
    GENERATE_EXPRESS,
    RATE_RELATION,
    ADDRESS_CHARACTER,
    BROWSER,
    BODY_ACTION,
    LOOK,
];

/// One valid definition.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    pub name: String,
    pub default_enabled: bool,
    pub description: String,
    /// The object JSON Schema, passed to the model as is and checked against every call.
    pub parameters: Value,
    /// As configured.
    pub command: String,
    /// What is started: a path from home for a `command` with `/`, else the bare name (looked up
    /// on `PATH` when invoked).
    pub program: PathBuf,
    pub args: Vec<String>,
    pub execution_timeout_ms: u64,
}

impl Definition {
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.execution_timeout_ms)
    }
}

/// A problem with the file or with one entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The entry's position in `clientTools` (`None`: the file as a whole).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// The entry's name, when it has a usable one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.index, &self.name) {
            (Some(i), Some(n)) => write!(f, "clientTools[{i}] ({n}): {}", self.message),
            (Some(i), None) => write!(f, "clientTools[{i}]: {}", self.message),
            _ => write!(f, "{}", self.message),
        }
    }
}

/// What one read of the config gave.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The file read (`None`: no config dir could be found).
    pub path: Option<PathBuf>,
    /// The definitions that passed, in file order.
    pub definitions: Vec<Arc<Definition>>,
    pub diagnostics: Vec<Diagnostic>,
    /// `--no-client-tools`: the definitions are listed but none is declared.
    pub disabled: bool,
}

impl Loaded {
    pub fn get(&self, name: &str) -> Option<&Arc<Definition>> {
        self.definitions.iter().find(|d| d.name == name)
    }
}

/// `$YUI_CONFIG_DIR/client-tools.json`, else `<OS config dir>/yui/client-tools.json`.
pub fn config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CONFIG_DIR_ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir).join(CONFIG_FILE));
    }
    directories::BaseDirs::new().map(|b| b.config_dir().join("yui").join(CONFIG_FILE))
}

/// The user's home (the root `command` paths resolve from).
pub fn home_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf())
}

/// Read the user's config (see [`config_path`]).
pub fn load_default() -> Loaded {
    match config_path() {
        Some(p) => load(&p, home_dir().as_deref()),
        None => Loaded {
            diagnostics: vec![Diagnostic {
                index: None,
                name: None,
                message: "no config directory: set YUI_CONFIG_DIR".into(),
            }],
            ..Loaded::default()
        },
    }
}

/// Read `path`; `command`s with `/` resolve from `home`. A missing file is no tools and no
/// diagnostics.
pub fn load(path: &Path, home: Option<&Path>) -> Loaded {
    let mut out = Loaded {
        path: Some(path.to_path_buf()),
        ..Loaded::default()
    };
    let file_problem = |out: &mut Loaded, message: String| {
        out.diagnostics.push(Diagnostic {
            index: None,
            name: None,
            message,
        })
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return out,
        Err(e) => {
            file_problem(&mut out, format!("cannot read {}: {e}", path.display()));
            return out;
        }
    };
    let root: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            file_problem(
                &mut out,
                format!("{} is not valid JSON: {e}", path.display()),
            );
            return out;
        }
    };
    let entries = match root.get("clientTools") {
        _ if !root.is_object() => {
            file_problem(&mut out, "the file must hold a JSON object".into());
            return out;
        }
        None => return out,
        Some(Value::Array(a)) => a,
        Some(_) => {
            file_problem(&mut out, "clientTools must be an array".into());
            return out;
        }
    };
    let (defs, diags) = parse_entries(entries, home);
    out.definitions = defs;
    out.diagnostics.extend(diags);
    out
}

/// Check every entry; names must be unique (the first keeps it), not a built-in tool's, not
/// ending in `generate_express`.
pub fn parse_entries(
    entries: &[Value],
    home: Option<&Path>,
) -> (Vec<Arc<Definition>>, Vec<Diagnostic>) {
    let mut defs = Vec::new();
    let mut diags = Vec::new();
    let mut seen = HashSet::new();
    for (i, entry) in entries.iter().enumerate() {
        let name = entry
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_string);
        let problem = |message: String| Diagnostic {
            index: Some(i),
            name: name.clone(),
            message,
        };
        match parse_entry(entry, home) {
            Err(m) => diags.push(problem(m)),
            Ok(d) if !seen.insert(d.name.clone()) => diags.push(problem(format!(
                "duplicate name {:?}: an earlier entry has it",
                d.name
            ))),
            Ok(d) => defs.push(Arc::new(d)),
        }
    }
    (defs, diags)
}

fn parse_entry(entry: &Value, home: Option<&Path>) -> Result<Definition, String> {
    let Some(obj) = entry.as_object() else {
        return Err("an entry must be a JSON object".into());
    };
    let name = required_str(obj, "name")?;
    check_name(&name)?;
    let default_enabled = match obj.get("defaultEnabled") {
        Some(Value::Bool(b)) => *b,
        None => return Err("defaultEnabled is required (true or false)".into()),
        Some(_) => return Err("defaultEnabled must be true or false".into()),
    };
    let description = required_str(obj, "description")?;
    let parameters = match obj.get("parameters") {
        None => return Err("parameters is required (an object JSON Schema)".into()),
        Some(p @ Value::Object(m)) if m.get("type") == Some(&Value::String("object".into())) => {
            p.clone()
        }
        Some(_) => return Err(r#"parameters must be a JSON Schema with "type": "object""#.into()),
    };
    if let Err(e) = jsonschema::validator_for(&parameters) {
        return Err(format!("parameters is not a usable JSON Schema: {e}"));
    }
    let command = required_str(obj, "command")?;
    let args = string_list(obj, "args")?;
    let execution_timeout_ms = match obj.get("executionTimeoutMs") {
        None => DEFAULT_TIMEOUT_MS,
        Some(v) => v
            .as_u64()
            .filter(|&n| n > 0)
            .ok_or("executionTimeoutMs must be a positive integer (milliseconds)")?,
    };
    let program = resolve(&command, home)?;
    Ok(Definition {
        name,
        default_enabled,
        description,
        parameters,
        command,
        program,
        args,
        execution_timeout_ms,
    })
}

fn required_str(obj: &Map<String, Value>, key: &str) -> Result<String, String> {
    match obj.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(format!("{key} must not be empty")),
        None => Err(format!("{key} is required")),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

/// A name the model can call (what every backend accepts) and that is not YUI's own.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if BUILT_IN.contains(&name) {
        return Err(format!("{name:?} is the name of a built-in tool"));
    }
    if name.ends_with(GENERATE_EXPRESS) {
        return Err(format!(
            "{name:?} ends in generate_express: such calls play as expression cues"
        ));
    }
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !ok_chars || name.len() > 64 {
        return Err(format!(
            "{name:?} is not a tool name: use 1-64 letters, digits, _ or -"
        ));
    }
    Ok(())
}

/// `command` with a `/` resolves from home (`./bin/x` → `~/bin/x`); a bare name stays as it is,
/// for `PATH` at invocation.
pub(crate) fn resolve(command: &str, home: Option<&Path>) -> Result<PathBuf, String> {
    if !command.contains('/') {
        return Ok(PathBuf::from(command));
    }
    let home = home.ok_or("no home directory to resolve the command path from")?;
    Ok(home.join(command.strip_prefix("./").unwrap_or(command)))
}

/// `obj[key]` as a list of strings (`args` of a command tool or an MCP server); absent: empty.
pub(crate) fn string_list(obj: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match obj.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("{key} must be an array of strings")),
        Some(_) => Err(format!("{key} must be an array of strings")),
    }
}

/// `obj[key]` as an object of strings, in its order (`env`, `headers`); absent: empty.
pub(crate) fn string_map(
    obj: &Map<String, Value>,
    key: &str,
) -> Result<Vec<(String, String)>, String> {
    match obj.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(format!("{key}.{k} must be a string")),
            })
            .collect(),
        Some(_) => Err(format!("{key} must be an object of strings")),
    }
}
