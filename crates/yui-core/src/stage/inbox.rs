//! The inbox: how other programs reach the running app. The app listens on a Unix socket in its
//! data dir ([`SOCKET`], mode 0600: only the user); `yui event`, `yui quiet` and `yui mcp-serve`
//! connect, write one JSON line ([`Request`]) and read one JSON line back: the outcome
//! (`{"outcome": "went", "turn_id": …}`, `{"outcome": "waiting", "reason": "held: …"}`, …) or
//! `{"error": {code, message}}`. One request per connection. docs/proactive.md, "From other
//! programs".

use super::proactive::{Outcome, Proactive, Trigger};
use super::Stage;
use crate::error::{CoreError, ErrorCode, Result};
use crate::manners::rules::Importance;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

/// The socket's file name in the data dir.
pub const SOCKET: &str = "inbox.sock";
/// The longest request line read (a longer one is refused).
pub const MAX_LINE: usize = 64 * 1024;
/// The longest event text, in characters.
pub const MAX_TEXT: usize = 2000;

/// The socket of the app on `data_dir`.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join(SOCKET)
}

/// What another program asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Something happened that `preset` may react to (`yui event`, MCP `notify`).
    Event {
        preset: String,
        text: String,
        #[serde(default)]
        importance: Importance,
    },
    /// Pass `text` on to the user through `preset` (MCP `say`).
    Say { preset: String, text: String },
    /// Something the manners read changed (`yui quiet`): waiting turns are looked at again.
    Recheck,
}

impl Stage {
    /// Act on a request: an event or a message becomes a proactive turn of the character, as the
    /// manners allow. An unknown character or an empty text is refused in plain words.
    pub fn inbox(&self, req: Request) -> Result<Value> {
        let (preset, trigger, importance) = match req {
            Request::Recheck => {
                self.proactive_recheck();
                return Ok(json!({"outcome": "rechecked"}));
            }
            Request::Event {
                preset,
                text,
                importance,
            } => (
                preset,
                Trigger::Event {
                    text: checked(text)?,
                },
                importance,
            ),
            Request::Say { preset, text } => (
                preset,
                Trigger::Say {
                    text: checked(text)?,
                },
                Importance::Normal,
            ),
        };
        let known = crate::presets::list(&self.0.store)?;
        if !known.iter().any(|p| p.id == preset) {
            let ids: Vec<_> = known.iter().map(|p| p.id.as_str()).collect();
            return Err(CoreError::not_found(format!(
                "there is no character {preset:?}; the characters are {}",
                ids.join(", ")
            )));
        }
        let out: Outcome = self.proactive(Proactive {
            preset_id: preset,
            trigger,
            importance,
        });
        Ok(serde_json::to_value(out)?)
    }

    /// Listen on `path` until the stage is dropped or the task is aborted. A stale socket file
    /// (no app behind it) is replaced; a live one means another app runs on this data dir.
    pub async fn serve_inbox(&self, path: PathBuf) -> Result<()> {
        if path.exists() {
            if UnixStream::connect(&path).await.is_ok() {
                return Err(CoreError::invalid(format!(
                    "another YUI already listens on {}",
                    path.display()
                )));
            }
            let _ = std::fs::remove_file(&path);
        }
        let listener = UnixListener::bind(&path).map_err(|e| {
            CoreError::new(
                ErrorCode::Internal,
                format!("the inbox {} could not be opened: {e}", path.display()),
            )
            .with_source(e)
        })?;
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
        }
        tracing::info!(path = %path.display(), "the inbox listens");
        let weak = std::sync::Arc::downgrade(&self.0);
        loop {
            let (conn, _) = match listener.accept().await {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(error = %e, "the inbox could not accept a connection");
                    continue;
                }
            };
            let Some(inner) = weak.upgrade() else {
                return Ok(());
            };
            let stage = Stage(inner);
            tokio::spawn(async move {
                if let Err(e) = serve_one(&stage, conn).await {
                    tracing::info!(error = %e, "an inbox connection failed");
                }
            });
        }
    }
}

fn checked(text: String) -> Result<String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(CoreError::invalid("the text is empty"));
    }
    if t.chars().count() > MAX_TEXT {
        return Err(CoreError::invalid(format!(
            "the text is longer than {MAX_TEXT} characters"
        )));
    }
    Ok(t.to_string())
}

async fn serve_one(stage: &Stage, conn: UnixStream) -> std::io::Result<()> {
    let (r, mut w) = conn.into_split();
    let mut line = Vec::new();
    let n = BufReader::new(r)
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', &mut line)
        .await?;
    let reply = if n > MAX_LINE {
        error_json(&CoreError::invalid("the request is too long"))
    } else {
        match serde_json::from_slice::<Request>(&line) {
            Err(e) => error_json(&CoreError::invalid(format!(
                "the request is not one the inbox knows: {e}"
            ))),
            Ok(req) => match stage.inbox(req) {
                Ok(v) => v,
                Err(e) => error_json(&e),
            },
        }
    };
    w.write_all(format!("{reply}\n").as_bytes()).await?;
    w.shutdown().await
}

fn error_json(e: &CoreError) -> Value {
    json!({"error": e})
}

use tokio::io::AsyncReadExt as _;

/// Send `req` to the app running on `data_dir` and read its answer (the CLI's side).
pub async fn send(data_dir: &Path, req: &Request) -> Result<Value> {
    let path = socket_path(data_dir);
    let mut conn = UnixStream::connect(&path).await.map_err(|e| {
        CoreError::new(
            ErrorCode::NotFound,
            format!(
                "YUI is not running on {} (no inbox at {}): start the app first",
                data_dir.display(),
                path.display()
            ),
        )
        .with_source(e)
    })?;
    let io = |e: std::io::Error| {
        CoreError::new(ErrorCode::Internal, format!("the inbox failed: {e}")).with_source(e)
    };
    let line = format!("{}\n", serde_json::to_string(req)?);
    conn.write_all(line.as_bytes()).await.map_err(io)?;
    let mut reply = String::new();
    BufReader::new(conn)
        .take(MAX_LINE as u64)
        .read_line(&mut reply)
        .await
        .map_err(io)?;
    let v: Value = serde_json::from_str(reply.trim())
        .map_err(|e| CoreError::internal(format!("the app answered something unreadable: {e}")))?;
    match v.get("error") {
        Some(err) => {
            let code = match err["code"].as_str() {
                Some("not_found") => ErrorCode::NotFound,
                Some("invalid_input") => ErrorCode::InvalidInput,
                _ => ErrorCode::Internal,
            };
            let message = err["message"].as_str().unwrap_or("the app refused");
            Err(CoreError::new(code, message))
        }
        None => Ok(v),
    }
}
