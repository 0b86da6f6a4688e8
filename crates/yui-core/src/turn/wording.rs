//! Backend failures in plain words: one sentence saying what is wrong and what to do next, for
//! the bubble and `turn_end`'s `error`. The technical detail (the [`BackendError`] with its
//! evidence) goes to the log; `yui doctor` shows both.
//!
//! A pure function of the error and the backend it happened on, table-tested with exact strings
//! (`tests/wording.rs`).

use super::error::{human_ms, BackendError};
use crate::backend::Backend;
use serde_json::Value;

/// Where to fix it, at the end of most sentences.
pub const WHERE: &str = "Settings → Backend";

/// Models known to call tools, suggested when the configured one cannot.
pub const TOOL_MODELS: &str = "qwen2.5, llama3.1 or mistral-nemo";

/// Most characters of a server's own message quoted in a sentence.
const QUOTE_MAX: usize = 160;

/// The one sentence a user sees for `err` on `backend`.
pub fn plain(err: &BackendError, backend: &Backend) -> String {
    let at = Place::of(&backend.base_url);
    match err {
        // The push connection already words its problems for the user (turn/push/conn.rs).
        BackendError::Connect { url, message }
            if url.starts_with("ws://") || url.starts_with("wss://") =>
        {
            format!("{message}. {WHERE}")
        }
        BackendError::Connect { message, .. } => connect(message, &at),
        BackendError::Http { status, body } => http(*status, body, backend, &at),
        BackendError::RateLimited { retry_after_s, .. } => rate_limited(*retry_after_s),
        BackendError::Stall { waited_ms } => format!(
            "The model stopped answering (nothing for {}) — it may still be loading; try again, or pick a smaller model. {WHERE}",
            human_ms(*waited_ms)
        ),
        BackendError::Cut { .. } | BackendError::CutOff { .. } => {
            "The model's reply was cut off in the middle — try again; if it keeps happening, look at the model server's log.".to_string()
        }
        BackendError::TooLong { what, .. } => format!(
            "The model server sent a {what} far too long to be a reply (a broken stream?) — try again; if it keeps happening, look at the model server's log."
        ),
        BackendError::Stream { .. } => {
            "The connection to the model broke during the reply — try again.".to_string()
        }
        BackendError::Parse { .. } => format!(
            "The model server sent a reply I can't read — is it OpenAI-compatible, and is the transport right? {WHERE}"
        ),
        BackendError::Server { body } => {
            let msg = server_message(body);
            if let Some(s) = cannot_call_tools(&msg, backend) {
                return s;
            }
            match quote(&msg) {
                Some(m) => format!(
                    "The model server reported an error: {m} — try again; if it keeps failing, look at the server's log."
                ),
                None => "The model server reported an error — try again; if it keeps failing, look at the server's log.".to_string(),
            }
        }
    }
}

/// A backend's address as a user would type it: `127.0.0.1:11434`, `api.example.com`.
struct Place {
    host: String,
    /// `host:port` (the port only when the URL names one).
    host_port: String,
    local: bool,
    port: Option<u16>,
}

impl Place {
    fn of(base_url: &str) -> Self {
        match reqwest::Url::parse(base_url) {
            Ok(u) => {
                let host = u
                    .host_str()
                    .unwrap_or("")
                    .trim_matches(['[', ']'])
                    .to_string();
                let port = u.port();
                let host_port = match (u.host_str(), port) {
                    (Some(h), Some(p)) => format!("{h}:{p}"),
                    (Some(h), None) => h.to_string(),
                    _ => base_url.to_string(),
                };
                let local = matches!(host.as_str(), "127.0.0.1" | "localhost" | "::1" | "0.0.0.0");
                Self {
                    host,
                    host_port,
                    local,
                    port: port.or(u.port_or_known_default()),
                }
            }
            Err(_) => Self {
                host: base_url.to_string(),
                host_port: base_url.to_string(),
                local: false,
                port: None,
            },
        }
    }

    /// The local server usually on this port, e.g. `Ollama`.
    fn server(&self) -> Option<&'static str> {
        if !self.local {
            return None;
        }
        match self.port? {
            // llama-server's default; LocalAI uses it too, but "llama.cpp" is the likelier one.
            8080 => Some("llama.cpp's llama-server"),
            p => crate::backend::server_on_port(p),
        }
    }
}

fn connect(message: &str, at: &Place) -> String {
    let m = message.to_ascii_lowercase();
    let hp = &at.host_port;
    if m.contains("dns error")
        || m.contains("failed to lookup")
        || m.contains("name or service not known")
        || m.contains("no such host")
        || m.contains("nodename nor servname")
    {
        return format!(
            "I can't find the server {} — check the address. {WHERE}",
            at.host
        );
    }
    if m.contains("certificate")
        || m.contains("tls")
        || m.contains("ssl")
        || m.contains("handshake")
        || m.contains("corrupt message")
        || m.contains("invalidcontenttype")
        || m.contains("peer misbehaved")
        || m.contains("fatal alert")
    {
        return format!(
            "I can't open a secure connection to {hp} — check the certificate, or whether the address should start with http:// instead of https://. {WHERE}"
        );
    }
    if m.contains("timed out") || m.contains("timeout") {
        return format!(
            "The model at {hp} does not answer — is the server running, and is the address right? {WHERE}"
        );
    }
    match at.server() {
        Some(name) => format!("I can't reach the model at {hp} — is {name} running? {WHERE}"),
        None => format!(
            "I can't reach the model at {hp} — is the model server running, and is the address right? {WHERE}"
        ),
    }
}

fn http(status: u16, body: &str, backend: &Backend, at: &Place) -> String {
    let hp = &at.host_port;
    // What a 404 means on this transport, when more than a wrong URL.
    let not_found = super::transport::descriptor(backend.transport).not_found;
    let msg = server_message(body);
    if matches!(status, 400 | 422 | 500 | 501) {
        if let Some(s) = cannot_call_tools(&msg, backend) {
            return s;
        }
    }
    match status {
        401 if backend.api_key.is_none() => {
            format!("The model server at {hp} wants an API key — store one. {WHERE}")
        }
        401 => format!(
            "The model server at {hp} did not accept the API key — store the right one. {WHERE}"
        ),
        403 => format!(
            "The model server at {hp} refused this API key (HTTP 403) — check the key and what it may use. {WHERE}"
        ),
        404 if msg.to_ascii_lowercase().contains("model") => format!(
            "The model server has no model \"{}\" — pick one it offers. {WHERE}",
            backend.model
        ),
        404 if not_found.is_some() => format!(
            "The server at {hp} {}. {WHERE}",
            not_found.unwrap_or_default()
        ),
        404 => format!(
            "The server at {hp} has no chat endpoint — check that the base URL ends in /v1. {WHERE}"
        ),
        429 => rate_limited(None),
        500..=599 => match quote(&msg) {
            Some(m) => format!(
                "The model server failed (HTTP {status}: {m}) — try again; if it keeps failing, look at the server's log."
            ),
            None => format!(
                "The model server failed (HTTP {status}) — try again; if it keeps failing, look at the server's log."
            ),
        },
        _ => match quote(&msg) {
            Some(m) => format!(
                "The model server refused the request (HTTP {status}: {m}) — check the model and the transport. {WHERE}"
            ),
            None => format!(
                "The model server refused the request (HTTP {status}) — check the model and the transport. {WHERE}"
            ),
        },
    }
}

fn rate_limited(retry_after_s: Option<u64>) -> String {
    match retry_after_s {
        Some(s) => format!(
            "The model server is rate-limiting me — try again in {}.",
            human_wait(s)
        ),
        None => "The model server is rate-limiting me — wait a moment, then try again.".to_string(),
    }
}

/// `30` → `30 s`, `120` → `2 min`, `90` → `90 s`.
fn human_wait(s: u64) -> String {
    if s >= 120 {
        format!("{} min", s.div_ceil(60))
    } else {
        format!("{s} s")
    }
}

/// The sentence for a server that says the model (or the server) cannot use tools.
fn cannot_call_tools(msg: &str, backend: &Backend) -> Option<String> {
    let m = msg.to_ascii_lowercase();
    if !m.contains("tool") {
        return None;
    }
    if m.contains("jinja") {
        return Some(format!(
            "llama-server can't use tools without --jinja, so I can't show expressions — restart it with --jinja, or choose another model. {WHERE}"
        ));
    }
    let says_no = m.contains("not support")
        || m.contains("unsupported")
        || m.contains("tool choice requires")
        || m.contains("tool_choice requires")
        || m.contains("enable-auto-tool-choice")
        || m.contains("tool-call-parser")
        || m.contains("tools are not")
        || m.contains("tool calling is not");
    says_no.then(|| {
        format!(
            "The model \"{}\" can't call tools, which I need for expressions — choose a tool-capable model such as {TOOL_MODELS}. {WHERE}",
            backend.model
        )
    })
}

/// The server's own message from an error body: `{"error":{"message":…}}`, `{"error":"…"}`,
/// `{"message":…}`, `{"detail":…}`, or the text itself.
pub fn server_message(body: &str) -> String {
    let body = body.trim();
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        let pick = |v: &Value| -> Option<String> {
            match v {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => ["message", "detail", "error"]
                    .iter()
                    .find_map(|k| o.get(*k).and_then(Value::as_str).map(str::to_string)),
                _ => None,
            }
        };
        if let Some(m) = v.get("error").and_then(pick).or_else(|| pick(&v)) {
            return m.trim().to_string();
        }
        if let Some(Value::Object(_)) = v.get("error") {
            return String::new();
        }
    }
    body.to_string()
}

/// The first line of a server message, at most [`QUOTE_MAX`] characters; `None` when empty.
fn quote(msg: &str) -> Option<String> {
    let line = msg.lines().find(|l| !l.trim().is_empty())?.trim();
    let mut out: String = line.chars().take(QUOTE_MAX).collect();
    if line.chars().count() > QUOTE_MAX {
        out.push('…');
    }
    // The sentence ends with its own punctuation.
    while out.ends_with(['.', ' ']) {
        out.pop();
    }
    Some(out).filter(|s| !s.is_empty())
}
