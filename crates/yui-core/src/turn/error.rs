//! Why a backend failed, for every transport (HTTP with SSE, and the push and realtime
//! WebSockets): [`BackendError`], with the evidence (the HTTP status and the server's body, the
//! raw line that failed to parse, the partial line a cut stream ended on). `wording.rs` words it
//! for the user; the log and `yui doctor` keep the evidence.

/// Most bytes of a server body or a raw line kept as evidence in an error.
pub(crate) const EVIDENCE_MAX: usize = 2048;

/// Why a backend request failed, with the evidence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// No connection could be made (refused, DNS, TLS, connect timeout).
    #[error("could not reach the backend at {url}: {message}")]
    Connect { url: String, message: String },
    /// The server answered with a non-success status.
    #[error("the backend answered HTTP {status}: {body}")]
    Http { status: u16, body: String },
    /// The server answered 429 (after the one retry a short `Retry-After` gets).
    #[error("the backend answered HTTP 429 (retry after {}): {body}", retry_after_s.map_or("not given".to_string(), |s| format!("{s} s")))]
    RateLimited {
        retry_after_s: Option<u64>,
        body: String,
    },
    /// The server sent nothing (no headers, or no bytes of the stream) for too long.
    #[error("the backend sent nothing for {} and the turn gave up on it", human_ms(*waited_ms))]
    Stall { waited_ms: u64 },
    /// The body ended in the middle of a line.
    #[error(
        "the reply was cut off: the backend's stream ended mid-event; last partial line: {partial}"
    )]
    Cut { partial: String },
    /// The body ended between events but before the transport's end marker: the server never
    /// finished the response.
    #[error("the reply was cut off: the backend closed the stream before {expected}")]
    CutOff { expected: &'static str },
    /// The connection failed while the stream was being read.
    #[error("the backend's stream broke: {message}")]
    Stream { message: String },
    /// A data line was not the JSON the transport expects.
    #[error("the backend sent a line that is not valid JSON ({message}): {line}")]
    Parse { line: String, message: String },
    /// The server reported an error inside the stream.
    #[error("the backend reported an error: {body}")]
    Server { body: String },
    /// One event, or the whole reply, passed its size limit ([`EVENT_MAX`](super::sse::EVENT_MAX), [`STREAM_MAX`](super::sse::STREAM_MAX)).
    #[error("the backend's {what} passed {} MiB and the turn gave up on it", limit / (1024 * 1024))]
    TooLong { what: &'static str, limit: usize },
}

impl BackendError {
    /// HTTP status, when the server answered with one.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Http { status, .. } => Some(*status),
            Self::RateLimited { .. } => Some(429),
            _ => None,
        }
    }
}

/// `1500` → `1.5 s`, `300` → `300 ms`, `60000` → `60 s`.
pub fn human_ms(ms: u64) -> String {
    let (secs, rem) = (ms / 1000, ms % 1000);
    if secs == 0 {
        format!("{ms} ms")
    } else if rem == 0 {
        format!("{secs} s")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// Keep at most [`EVIDENCE_MAX`] bytes of evidence, cut on a char boundary.
pub fn evidence(s: &str) -> String {
    if s.len() <= EVIDENCE_MAX {
        return s.to_string();
    }
    let mut end = EVIDENCE_MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}
