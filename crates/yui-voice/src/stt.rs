//! Speech-to-text over an OpenAI-compatible `POST {base}/audio/transcriptions`: the utterance as
//! a 16 kHz mono 16-bit WAV in `multipart/form-data` with `model` (and `model_name`, which
//! faster-whisper-server reads instead), `response_format=json`, and `language` / `prompt` when
//! set; the answer is JSON `{"text": …}`. Every failure — server down, an error status, a stall,
//! an answer that is not that JSON — is one sentence for the user (docs/voice.md).

use super::pcm::{Pcm, STT_RATE};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

/// What one transcription needs.
#[derive(Debug, Clone)]
pub struct SttRequest {
    /// e.g. `http://127.0.0.1:8000/v1` (no trailing slash).
    pub base_url: String,
    pub model: String,
    pub language: Option<String>,
    pub prompt: Option<String>,
    pub api_key: Option<String>,
    /// The whole exchange, upload to answer.
    pub timeout: Duration,
}

/// A speech server failure. Each shows as one sentence for the user; the HTTP client's own
/// error, when there is one, is kept as the source for the log.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SpeechError {
    /// The server could not be reached or did not answer in time.
    #[error("{message}")]
    Unreachable {
        message: String,
        #[source]
        source: Arc<reqwest::Error>,
    },
    /// The server answered with an error status.
    #[error("{message}")]
    Status { status: u16, message: String },
    /// The server answered something that is not what was asked for (not a transcription, not
    /// audio, no audio, a broken WAV).
    #[error("{0}")]
    BadAnswer(String),
    /// The request could not be made here (the HTTP client, the upload).
    #[error("{message}")]
    Setup {
        message: String,
        #[source]
        source: Arc<reqwest::Error>,
    },
    /// The engine cannot speak on this machine (speech-dispatcher missing, …).
    #[error("{0}")]
    Unavailable(String),
    /// The audio to send could not be prepared (it cannot be resampled).
    #[error("{0}")]
    BadAudio(String),
}

impl SpeechError {
    fn setup(what: &str, e: reqwest::Error) -> Self {
        Self::Setup {
            message: format!("{what}: {e}"),
            source: Arc::new(e),
        }
    }
}

impl From<SpeechError> for yui_base::CoreError {
    fn from(e: SpeechError) -> Self {
        yui_base::CoreError::new(yui_base::ErrorCode::Backend, e.to_string()).with_source(e)
    }
}

/// How long to wait for a connection before calling a server down.
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The one HTTP client of the speech servers (no proxy surprises for 127.0.0.1).
pub(super) fn client(timeout: Duration) -> Result<reqwest::Client, SpeechError> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(timeout)
        .build()
        .map_err(|e| SpeechError::setup("cannot set up HTTP", e))
}

/// A transport failure (before any status) in words.
pub(super) fn transport_error(
    what: &str,
    url: &str,
    e: reqwest::Error,
    timeout: Duration,
) -> SpeechError {
    let message = if e.is_timeout() {
        format!(
            "the {what} at {url} did not answer within {} s",
            timeout.as_secs()
        )
    } else if e.is_connect() {
        format!(
            "cannot reach the {what} at {url}: is it running? ({})",
            root_cause(&e)
        )
    } else {
        format!("the {what} at {url} failed: {}", root_cause(&e))
    };
    SpeechError::Unreachable {
        message,
        source: Arc::new(e),
    }
}

/// The innermost cause in words, without the OS's error number ("Connection refused", not
/// "Connection refused (os error 111)"); the whole chain goes to the log.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    tracing::debug!(error = ?e, "speech server transport error");
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    let s = cur.to_string();
    match s.find(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

/// An error status in words, with the server's own message when it sent one (OpenAI's
/// `{"error": {"message"}}`, FastAPI's `{"detail"}`, or the first line of text).
pub(super) fn status_error(
    what: &str,
    url: &str,
    status: reqwest::StatusCode,
    body: &[u8],
) -> SpeechError {
    let text = String::from_utf8_lossy(body);
    let v: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let msg = v
        .pointer("/error/message")
        .and_then(|m| m.as_str())
        .map(str::to_string)
        .or_else(|| {
            v.get("detail").map(|d| match d.as_str() {
                Some(s) => s.to_string(),
                None => d.to_string(),
            })
        })
        .or_else(|| {
            v.get("message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| {
            text.lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(200)
                .collect()
        });
    let hint = match status.as_u16() {
        401 | 403 => " (check the speech server's API key)",
        404 => " (is the base URL right, and does the server offer this endpoint?)",
        _ => "",
    };
    let msg = if msg.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", msg.trim())
    };
    SpeechError::Status {
        status: status.as_u16(),
        message: format!("the {what} at {url} answered {status}{msg}{hint}"),
    }
}

#[derive(Deserialize)]
struct Answer {
    text: String,
}

/// Transcribe one utterance (any rate: it is resampled to 16 kHz first).
pub async fn transcribe(req: &SttRequest, pcm: &Pcm) -> Result<String, SpeechError> {
    let audio = pcm
        .resampled(STT_RATE)
        .map_err(|e| SpeechError::BadAudio(e.to_string()))?;
    let wav = audio.to_wav();
    let url = format!(
        "{}/audio/transcriptions",
        req.base_url.trim_end_matches('/')
    );
    let what = "speech-to-text server";
    let file = reqwest::multipart::Part::bytes(wav)
        .file_name("speech.wav")
        .mime_str("audio/wav")
        .map_err(|e| SpeechError::setup("cannot build the upload", e))?;
    let mut form = reqwest::multipart::Form::new()
        .part("file", file)
        .text("model", req.model.clone())
        // faster-whisper-server 0.0.x reads the model from `model_name`, not `model`.
        .text("model_name", req.model.clone())
        .text("response_format", "json");
    if let Some(l) = req.language.as_deref().filter(|l| !l.is_empty()) {
        form = form.text("language", l.to_string());
    }
    if let Some(p) = req.prompt.as_deref().filter(|p| !p.is_empty()) {
        form = form.text("prompt", p.to_string());
    }
    let client = client(req.timeout)?;
    let mut rb = client.post(&url).multipart(form);
    if let Some(k) = &req.api_key {
        rb = rb.bearer_auth(k);
    }
    let resp = rb
        .send()
        .await
        .map_err(|e| transport_error(what, &url, e, req.timeout))?;
    let status = resp.status();
    let body = resp
        .bytes()
        .await
        .map_err(|e| transport_error(what, &url, e, req.timeout))?;
    if !status.is_success() {
        return Err(status_error(what, &url, status, &body));
    }
    let answer: Answer = serde_json::from_slice(&body).map_err(|_| {
        let start: String = String::from_utf8_lossy(&body).chars().take(80).collect();
        SpeechError::BadAnswer(format!(
            "the {what} at {url} answered something that is not a transcription (expected JSON with \"text\"; got {start:?})"
        ))
    })?;
    Ok(answer.text.trim().to_string())
}
