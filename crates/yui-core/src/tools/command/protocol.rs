//! The version 4 NDJSON frames between YUI and a command client tool, and the protocol's limits
//! (docs/command-tools.md). Each frame is one JSON object on one line; unknown fields are
//! invalid, in frames and in presentation overrides alike.

use super::config::{string_list, string_map};
use serde_json::{json, Map, Value};

pub const VERSION: u64 = 4;

/// Frames a command may write to stdout in one call.
pub const MAX_FRAMES: usize = 512;
/// Bytes a command may write to stdout in one call.
pub const MAX_STDOUT: usize = 192 * 1024 * 1024;
/// Bytes of one stdout frame.
pub const MAX_FRAME: usize = 24 * 1024 * 1024;
/// UTF-8 bytes of the final result's `content` / `error`.
pub const MAX_RESULT: usize = 1024 * 1024;
/// Bytes of stderr kept; more fails the call.
pub const MAX_STDERR: usize = 1024 * 1024;
/// Decoded bytes of an `exec` request's stdin.
pub const MAX_EXEC_STDIN: usize = 16 * 1024 * 1024;
/// `maxCaptureBytes` ceiling of an `exec` request (also its default).
pub const MAX_EXEC_CAPTURE: usize = 24 * 1024 * 1024;
pub const DEFAULT_EXEC_CAPTURE: usize = 1024 * 1024;
/// Unresolved `exec` requests at once.
pub const MAX_EXEC_PENDING: usize = 8;
/// A presentation override, serialized.
pub const MAX_PRESENTATION: usize = 1024 * 1024;
pub const MAX_SUBJECT: usize = 256 * 1024;
pub const MAX_METADATA_VALUE: usize = 16 * 1024;
pub const MAX_DETAIL_VALUE: usize = 256 * 1024;
pub const MAX_ENTRIES: usize = 1024;

/// What YUI writes first.
pub fn prepare(
    session_id: &str,
    agent_id: &str,
    call_id: &str,
    tool: &str,
    arguments: &Value,
) -> Value {
    json!({
        "version": VERSION, "type": "prepare", "sessionId": session_id, "agentId": agent_id,
        "callId": call_id, "toolName": tool, "arguments": arguments,
    })
}

pub fn execute() -> Value {
    json!({"version": VERSION, "type": "execute"})
}

/// An `exec` request's options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecOptions {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub stdin: Option<Vec<u8>>,
    pub cwd: Option<String>,
    pub timeout_ms: Option<u64>,
    pub max_capture: Option<usize>,
}

/// A frame from the command.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Ready {
        presentation: Option<Value>,
    },
    Result {
        ok: bool,
        /// `content` (ok) or `error` (not ok).
        text: String,
    },
    Exec {
        request_id: String,
        command: String,
        options: ExecOptions,
    },
    ExecCancel {
        request_id: String,
    },
}

/// What is wrong with a frame a command tool sent, in plain words (the tool's error names it).
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("a line is not JSON ({0})")]
    NotJson(#[source] serde_json::Error),
    #[error("{0}")]
    Invalid(String),
}

impl From<String> for FrameError {
    fn from(s: String) -> Self {
        Self::Invalid(s)
    }
}

impl From<&str> for FrameError {
    fn from(s: &str) -> Self {
        Self::Invalid(s.to_string())
    }
}

/// Parse one stdout line. `Err` says what is wrong, in plain words.
pub fn parse(line: &[u8]) -> Result<Incoming, FrameError> {
    let v: Value = serde_json::from_slice(line).map_err(FrameError::NotJson)?;
    let Value::Object(obj) = v else {
        return Err("a frame is not a JSON object".into());
    };
    if obj.get("version").and_then(Value::as_u64) != Some(VERSION) {
        return Err(format!("a frame is not version {VERSION}").into());
    }
    let ty = obj
        .get("type")
        .and_then(Value::as_str)
        .ok_or("a frame has no type")?
        .to_string();
    let allowed: &[&str] = match ty.as_str() {
        "ready" => &["version", "type", "presentation"],
        "result" => &["version", "type", "ok", "content", "error", "presentation"],
        "exec" => &["version", "type", "requestId", "command", "options"],
        "exec.cancel" => &["version", "type", "requestId"],
        other => return Err(format!("unknown frame type {other:?}").into()),
    };
    only(&obj, allowed, &format!("the {ty} frame"))?;
    match ty.as_str() {
        "ready" => Ok(Incoming::Ready {
            presentation: presentation(&obj)?,
        }),
        "result" => {
            presentation(&obj)?;
            let ok = obj
                .get("ok")
                .and_then(Value::as_bool)
                .ok_or("the result frame needs ok: true or false")?;
            let (want, other) = if ok {
                ("content", "error")
            } else {
                ("error", "content")
            };
            if obj.contains_key(other) {
                return Err(format!("a result with ok: {ok} cannot have {other}").into());
            }
            let text = obj
                .get(want)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("a result with ok: {ok} needs a string {want}"))?
                .to_string();
            Ok(Incoming::Result { ok, text })
        }
        "exec" => {
            let request_id = request_id(&obj)?;
            let command = obj
                .get("command")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
                .ok_or("an exec frame needs a non-empty command")?
                .to_string();
            let options = exec_options(obj.get("options"))?;
            Ok(Incoming::Exec {
                request_id,
                command,
                options,
            })
        }
        _ => Ok(Incoming::ExecCancel {
            request_id: request_id(&obj)?,
        }),
    }
}

fn only(obj: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<(), FrameError> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("{what} has an unknown field {k:?}").into()),
        None => Ok(()),
    }
}

fn request_id(obj: &Map<String, Value>) -> Result<String, FrameError> {
    obj.get("requestId")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .ok_or_else(|| "requestId must be a non-empty string".into())
}

fn positive(v: Option<&Value>, key: &str) -> Result<Option<u64>, FrameError> {
    match v {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .filter(|&n| n > 0)
            .map(Some)
            .ok_or_else(|| format!("exec options.{key} must be a positive integer").into()),
    }
}

fn exec_options(v: Option<&Value>) -> Result<ExecOptions, FrameError> {
    let Some(Value::Object(o)) = v else {
        return Err("an exec frame needs an options object".into());
    };
    only(
        o,
        &[
            "args",
            "env",
            "stdinBase64",
            "cwd",
            "timeoutMs",
            "maxCaptureBytes",
        ],
        "exec options",
    )?;
    let mut out = ExecOptions::default();
    let prefixed = |e: String| format!("exec options.{e}");
    out.args = string_list(o, "args").map_err(prefixed)?;
    out.env = string_map(o, "env").map_err(prefixed)?;
    if let Some(s) = o.get("stdinBase64") {
        use base64::Engine;
        let s = s
            .as_str()
            .ok_or("exec options.stdinBase64 must be a string")?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(s)
            .map_err(|e| format!("exec options.stdinBase64 is not base64: {e}"))?;
        if bytes.len() > MAX_EXEC_STDIN {
            return Err("exec stdin is over 16 MiB".into());
        }
        out.stdin = Some(bytes);
    }
    if let Some(c) = o.get("cwd") {
        out.cwd = Some(
            c.as_str()
                .ok_or("exec options.cwd must be a string")?
                .to_string(),
        );
    }
    out.timeout_ms = positive(o.get("timeoutMs"), "timeoutMs")?;
    if let Some(n) = positive(o.get("maxCaptureBytes"), "maxCaptureBytes")? {
        if n as usize > MAX_EXEC_CAPTURE {
            return Err("exec options.maxCaptureBytes is over 24 MiB".into());
        }
        out.max_capture = Some(n as usize);
    }
    Ok(out)
}

/// Check an optional presentation override against the protocol's limits.
fn presentation(obj: &Map<String, Value>) -> Result<Option<Value>, FrameError> {
    let Some(p) = obj.get("presentation") else {
        return Ok(None);
    };
    let Value::Object(m) = p else {
        return Err("presentation must be an object".into());
    };
    only(
        m,
        &["subject", "subjectWrap", "details", "metadata"],
        "presentation",
    )?;
    if p.to_string().len() > MAX_PRESENTATION {
        return Err("presentation is over 1 MiB".into());
    }
    if let Some(s) = m.get("subject") {
        let s = s.as_str().ok_or("presentation.subject must be a string")?;
        if s.len() > MAX_SUBJECT {
            return Err("presentation.subject is over 256 KiB".into());
        }
    }
    for (key, max) in [
        ("details", MAX_DETAIL_VALUE),
        ("metadata", MAX_METADATA_VALUE),
    ] {
        let Some(list) = m.get(key) else { continue };
        let list = list
            .as_array()
            .ok_or_else(|| format!("presentation.{key} must be an array"))?;
        if list.len() > MAX_ENTRIES {
            return Err(format!("presentation.{key} has over {MAX_ENTRIES} entries").into());
        }
        if list.iter().any(|e| e.to_string().len() > max) {
            return Err(format!("a presentation.{key} entry is over its limit").into());
        }
    }
    Ok(Some(p.clone()))
}

/// The `exec.result` answer for a request.
pub(crate) fn exec_result(request_id: &str, result: Result<Value, String>) -> Value {
    match result {
        Ok(r) => {
            json!({"version": VERSION, "type": "exec.result", "requestId": request_id, "ok": true, "result": r})
        }
        Err(e) => {
            json!({"version": VERSION, "type": "exec.result", "requestId": request_id, "ok": false, "error": e})
        }
    }
}
