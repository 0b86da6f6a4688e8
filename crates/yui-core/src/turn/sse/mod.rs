//! The streaming HTTP client both transports share: `POST` a JSON body with `stream: true`, then
//! read Server-Sent Events.
//!
//! Two layers sit between reqwest's byte stream and the mappers: [`Framed`] (`framed.rs`: the
//! stall watchdog, the reply's size limit, the end of the body: an unterminated last event is
//! still dispatched, a body that stops mid-line is [`BackendError::Cut`] with that partial line)
//! and [`Parser`] (`parse.rs`: the SSE event parser, which also caps one event's size).
//!
//! Errors are [`BackendError`]s (`turn/error.rs`, shared with the WebSocket transports) and keep
//! their evidence: the HTTP status and the server's body, the raw line that failed to parse, the
//! partial line a cut stream ended on.

mod framed;
mod parse;

pub use framed::{ByteError, Framed};
pub use parse::{ParseError, Parser};

use super::error::{evidence, BackendError};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::borrow::Cow;
use std::pin::Pin;
use std::time::Duration;

/// The longest one SSE event may be (no real event is near it; a broken server's endless line
/// must not grow the buffer without bound).
pub const EVENT_MAX: usize = 1024 * 1024;
/// The most one response's stream may carry (a never-ending stream ends here).
pub const STREAM_MAX: usize = 32 * 1024 * 1024;

/// One SSE event: its `event:` name (`message` when absent) and its `data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Cow<'static, str>,
    pub data: String,
}

pub use crate::timeouts::{Timeouts, TIMEOUTS_KEY};

/// The HTTP client a turn uses. Cheap to clone; build one per app and reuse it.
pub fn http_client(t: &Timeouts) -> Result<reqwest::Client, BackendError> {
    reqwest::Client::builder()
        .connect_timeout(t.connect)
        .build()
        .map_err(|e| BackendError::Connect {
            url: String::new(),
            message: e.to_string(),
        })
}

type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, ByteError>> + Send>>;

/// An open SSE response.
pub struct SseStream {
    bytes: ByteStream,
    parser: Parser,
    stall_ms: u64,
    /// An error was returned: the stream is over.
    failed: bool,
}

impl SseStream {
    /// Wrap any byte stream (used by benchmarks and tests over recorded streams).
    pub fn from_bytes<S>(bytes: S, stall: Option<Duration>) -> Self
    where
        S: Stream<Item = reqwest::Result<Bytes>> + Unpin + Send + 'static,
    {
        Self {
            bytes: Box::pin(Framed::new(bytes, stall)),
            parser: Parser::new(EVENT_MAX),
            stall_ms: stall.map(|d| d.as_millis() as u64).unwrap_or(0),
            failed: false,
        }
    }

    /// The next event; `None` at the end of the body.
    pub async fn next(&mut self) -> Option<Result<SseEvent, BackendError>> {
        loop {
            if let Some(ev) = self.parser.next_event() {
                return Some(Ok(ev));
            }
            if self.failed {
                return None;
            }
            let err = match self.bytes.next().await? {
                Ok(chunk) => match self.parser.feed(&chunk) {
                    Ok(()) => continue,
                    Err(ParseError::TooLong) => BackendError::TooLong {
                        what: "event",
                        limit: EVENT_MAX,
                    },
                    Err(ParseError::Utf8(e)) => BackendError::Stream {
                        message: format!("the stream is not UTF-8: {e}"),
                    },
                },
                Err(ByteError::Stall) => BackendError::Stall {
                    waited_ms: self.stall_ms,
                },
                Err(ByteError::TooLong(what, limit)) => BackendError::TooLong { what, limit },
                Err(ByteError::Cut(partial)) => BackendError::Cut {
                    partial: evidence(&partial),
                },
                Err(ByteError::Transport(e)) => BackendError::Stream {
                    message: error_chain(&e),
                },
            };
            self.failed = true;
            return Some(Err(err));
        }
    }
}

/// Whether a send failed before any answer came back: the connection could not be made, or it
/// was closed (or reset) before the response started, as a kept-alive connection the server
/// dropped between requests is.
fn never_answered(e: &reqwest::Error) -> bool {
    if e.is_timeout() {
        return false;
    }
    if e.is_connect() {
        return true;
    }
    let chain = error_chain(e).to_lowercase();
    e.is_request()
        && [
            "connection closed before message completed",
            "connection reset",
            "broken pipe",
        ]
        .iter()
        .any(|s| chain.contains(s))
}

/// `e` and its sources, joined, so the root cause ("connection refused") is visible.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = c.source();
    }
    s
}

/// A `429` whose `Retry-After` is at most this is retried once, after that wait.
pub const RETRY_AFTER_MAX: Duration = Duration::from_secs(10);

/// `Retry-After` in seconds (the delay form; an HTTP date is not read).
fn retry_after(resp: &reqwest::Response) -> Option<u64> {
    resp.headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `POST {url}` with a JSON body and `Accept: text/event-stream`; a non-success status becomes
/// [`BackendError::Http`] carrying the server's body. Waiting for the response headers is bounded
/// by `timeouts.headers`, reading the body by `timeouts.stall`. A `429` with a `Retry-After` of at
/// most [`RETRY_AFTER_MAX`] is retried once after that wait; any other `429` (or a second one)
/// is [`BackendError::RateLimited`].
pub async fn post_sse(
    client: &reqwest::Client,
    url: &str,
    api_key: Option<&str>,
    body: &serde_json::Value,
    timeouts: &Timeouts,
) -> Result<SseStream, BackendError> {
    let mut retried = false;
    let mut resent = false;
    loop {
        let mut req = client
            .post(url)
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .json(body);
        if let Some(key) = api_key.filter(|k| !k.is_empty()) {
            req = req.bearer_auth(key);
        }
        let resp = match tokio::time::timeout(timeouts.headers, req.send()).await {
            Err(_) => {
                return Err(BackendError::Stall {
                    waited_ms: timeouts.headers.as_millis() as u64,
                })
            }
            Ok(Err(e)) if !resent && never_answered(&e) => {
                // A kept-alive connection the server closed between two requests of a turn:
                // once more, on a fresh connection.
                resent = true;
                tracing::info!(url, error = %error_chain(&e), "request got no answer: sending it again once");
                continue;
            }
            Ok(Err(e)) => {
                return Err(BackendError::Connect {
                    url: url.to_string(),
                    message: error_chain(&e),
                })
            }
            Ok(Ok(r)) => r,
        };
        let status = resp.status();
        if status.is_success() {
            return Ok(SseStream::from_bytes(
                resp.bytes_stream().boxed(),
                Some(timeouts.stall),
            ));
        }
        let wait = retry_after(&resp);
        let body_text = match tokio::time::timeout(timeouts.stall, resp.text()).await {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => format!("(body unreadable: {e})"),
            Err(_) => "(body not sent in time)".to_string(),
        };
        let body_text = evidence(body_text.trim());
        if status.as_u16() != 429 {
            return Err(BackendError::Http {
                status: status.as_u16(),
                body: body_text,
            });
        }
        match wait {
            Some(s) if !retried && Duration::from_secs(s) <= RETRY_AFTER_MAX => {
                retried = true;
                tracing::info!(url, retry_after_s = s, "rate limited (429): retrying once");
                tokio::time::sleep(Duration::from_secs(s)).await;
            }
            _ => {
                return Err(BackendError::RateLimited {
                    retry_after_s: wait,
                    body: body_text,
                })
            }
        }
    }
}
