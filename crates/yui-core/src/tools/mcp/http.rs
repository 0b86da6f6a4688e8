//! rmcp's streamable HTTP client trait over YUI's own reqwest 0.12.
//!
//! rmcp ships this client for reqwest 0.13 only; implementing its `StreamableHttpClient` here
//! keeps one reqwest (and one TLS stack) in the tree. It follows rmcp's reference client: `POST`
//! each message with `Accept: application/json, text/event-stream`, the session id header once the
//! server gave one, JSON or SSE replies, `202` for notifications, `404` on a session as expired,
//! `GET` for the server's own stream, `DELETE` to end the session. Bodies are bounded: a JSON reply
//! by [`MAX_JSON`], one SSE event by [`SseLimit`].

use bytes::Bytes;
use futures_util::stream::{BoxStream, Stream, StreamExt, TryStreamExt};
use http::{HeaderName, HeaderValue};
use reqwest::StatusCode;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};
use std::borrow::Cow;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The largest JSON reply read.
pub const MAX_JSON: usize = 16 * 1024 * 1024;
/// The largest SSE event read.
pub const MAX_EVENT: usize = 16 * 1024 * 1024;
/// How much of an error reply's body is kept for the message.
const MAX_ERROR_BODY: usize = 4096;

type Error = StreamableHttpError<reqwest::Error>;

/// reqwest 0.12 plus the headers the user configured for this server (sent with every request).
#[derive(Clone)]
pub struct Http {
    client: reqwest::Client,
    headers: Arc<Vec<(HeaderName, HeaderValue)>>,
}

impl Http {
    /// `headers` were checked when `mcp.json` was read; a bad one is left out.
    pub fn new(headers: &[(String, String)]) -> Self {
        let headers = headers
            .iter()
            .filter_map(|(k, v)| {
                Some((
                    HeaderName::from_bytes(k.as_bytes()).ok()?,
                    HeaderValue::from_str(v).ok()?,
                ))
            })
            .collect();
        Self {
            // No idle pool: a reused connection whose last body was not read to the end stalls
            // ~40 ms on Linux's delayed ACK (what rmcp's own client does too).
            client: reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap_or_default(),
            headers: Arc::new(headers),
        }
    }

    fn request(
        &self,
        method: reqwest::Method,
        uri: &str,
        session: Option<&str>,
        auth: Option<String>,
        custom: HashMap<HeaderName, HeaderValue>,
    ) -> reqwest::RequestBuilder {
        let mut b = self.client.request(method, uri);
        for (k, v) in self.headers.iter() {
            b = b.header(k, v);
        }
        for (k, v) in custom {
            b = b.header(k, v);
        }
        if let Some(token) = auth {
            b = b.bearer_auth(token);
        }
        if let Some(s) = session {
            b = b.header(HEADER_SESSION_ID, s);
        }
        b
    }
}

/// Whether a `Content-Type` value is `expected` (case-insensitive, parameters ignored).
pub fn media_type_is(value: &[u8], expected: &str) -> bool {
    value
        .split(|b| *b == b';')
        .next()
        .and_then(|e| std::str::from_utf8(e).ok())
        .is_some_and(|e| e.trim().eq_ignore_ascii_case(expected))
}

async fn read_bounded(resp: reqwest::Response, max: usize) -> Result<Vec<u8>, Error> {
    if resp.content_length().is_some_and(|l| l > max as u64) {
        return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
    }
    let mut body = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream
        .try_next()
        .await
        .map_err(StreamableHttpError::Client)?
    {
        if chunk.len() > max - body.len() {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

async fn error_text(resp: reqwest::Response) -> String {
    let mut body = Vec::new();
    let mut stream = resp.bytes_stream();
    while body.len() < MAX_ERROR_BODY {
        match stream.next().await {
            Some(Ok(c)) => body.extend_from_slice(&c[..c.len().min(MAX_ERROR_BODY - body.len())]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&body).trim().to_string()
}

fn sse<S>(bytes: S) -> BoxStream<'static, Result<Sse, SseError>>
where
    S: Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
{
    SseStream::from_bytes_stream(SseLimit::new(Box::pin(bytes), MAX_EVENT)).boxed()
}

impl StreamableHttpClient for Http {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let with_session = session_id.is_some();
        let resp = self
            .request(
                reqwest::Method::POST,
                &uri,
                session_id.as_deref(),
                auth_header,
                custom_headers,
            )
            .header(
                reqwest::header::ACCEPT,
                format!("{JSON_MIME_TYPE}, {EVENT_STREAM_MIME_TYPE}"),
            )
            .json(&message)
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        let status = resp.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && with_session {
            return Err(StreamableHttpError::SessionExpired);
        }
        let no_reply_needed = !matches!(message, ClientJsonRpcMessage::Request(_));
        let session = resp
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let content_type = resp.headers().get(reqwest::header::CONTENT_TYPE).cloned();
        let is = |m: &str| {
            content_type
                .as_ref()
                .is_some_and(|c| media_type_is(c.as_bytes(), m))
        };
        if !status.is_success() {
            if is(JSON_MIME_TYPE) {
                // A JSON-RPC error in an error status is still the server's answer.
                let body = read_bounded(resp, MAX_JSON).await?;
                if let Ok(m @ ServerJsonRpcMessage::Error(_)) = serde_json::from_slice(&body) {
                    return Ok(StreamableHttpPostResponse::Json(m, session));
                }
                let text =
                    String::from_utf8_lossy(&body[..body.len().min(MAX_ERROR_BODY)]).into_owned();
                return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                    format!("HTTP {status}: {text}"),
                )));
            }
            let text = error_text(resp).await;
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                if text.is_empty() {
                    format!("HTTP {status}")
                } else {
                    format!("HTTP {status}: {text}")
                },
            )));
        }
        if is(EVENT_STREAM_MIME_TYPE) {
            return Ok(StreamableHttpPostResponse::Sse(
                sse(resp.bytes_stream()),
                session,
            ));
        }
        if is(JSON_MIME_TYPE) {
            let body = read_bounded(resp, MAX_JSON).await?;
            return match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                Ok(m) => Ok(StreamableHttpPostResponse::Json(m, session)),
                Err(_) if no_reply_needed => Ok(StreamableHttpPostResponse::Accepted),
                Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                    format!("the reply is not JSON-RPC: {e}"),
                ))),
            };
        }
        if no_reply_needed {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        Err(StreamableHttpError::UnexpectedContentType(
            content_type.map(|c| String::from_utf8_lossy(c.as_bytes()).into_owned()),
        ))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let resp = self
            .request(
                reqwest::Method::DELETE,
                &uri,
                Some(&session_id),
                auth_header,
                custom_headers,
            )
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        if resp.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        resp.error_for_status()
            .map_err(StreamableHttpError::Client)?;
        Ok(())
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        let mut req = self
            .request(
                reqwest::Method::GET,
                &uri,
                session_id.as_deref(),
                auth_header,
                custom_headers,
            )
            .header(
                reqwest::header::ACCEPT,
                format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"),
            );
        if let Some(id) = last_event_id {
            req = req.header(HEADER_LAST_EVENT_ID, id);
        }
        let resp = req.send().await.map_err(StreamableHttpError::Client)?;
        if resp.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        let resp = resp
            .error_for_status()
            .map_err(StreamableHttpError::Client)?;
        match resp.headers().get(reqwest::header::CONTENT_TYPE) {
            Some(c) if media_type_is(c.as_bytes(), EVENT_STREAM_MIME_TYPE) => {
                Ok(sse(resp.bytes_stream()))
            }
            c => {
                Err(StreamableHttpError::UnexpectedContentType(c.map(|c| {
                    String::from_utf8_lossy(c.as_bytes()).into_owned()
                })))
            }
        }
    }
}

/// Bounds one SSE event: passes the bytes through while counting the bytes of the event in
/// progress (lines since the last blank line, comments included, so a server cannot grow memory
/// with an endless line either); past `max` the stream ends with an error.
pub struct SseLimit<S> {
    inner: S,
    max: usize,
    event: usize,
    /// The previous byte ended a line (`\n`, or `\r` not yet followed by `\n`).
    line_start: bool,
    prev_cr: bool,
    failed: bool,
}

/// The error [`SseLimit`] ends a stream with.
#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    #[error("an SSE event exceeded {0} bytes")]
    TooLarge(usize),
    #[error(transparent)]
    Source(Box<dyn std::error::Error + Send + Sync>),
}

impl<S> SseLimit<S> {
    pub fn new(inner: S, max: usize) -> Self {
        Self {
            inner,
            max,
            event: 0,
            line_start: true,
            prev_cr: false,
            failed: false,
        }
    }

    /// Count `chunk`; `false` once the event in progress is over the limit.
    pub fn observe(&mut self, chunk: &[u8]) -> bool {
        for &b in chunk {
            let cr_lf = self.prev_cr && b == b'\n';
            self.prev_cr = b == b'\r';
            if cr_lf {
                continue;
            }
            if b == b'\n' || b == b'\r' {
                if self.line_start {
                    // A blank line ends the event.
                    self.event = 0;
                }
                self.line_start = true;
            } else {
                self.line_start = false;
                self.event += 1;
                if self.event > self.max {
                    return false;
                }
            }
        }
        true
    }
}

impl<S, E> Stream for SseLimit<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::error::Error + Send + Sync + 'static,
{
    type Item = Result<Bytes, LimitError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.failed {
            return Poll::Ready(None);
        }
        match Pin::new(&mut self.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                if self.observe(&chunk) {
                    Poll::Ready(Some(Ok(chunk)))
                } else {
                    self.failed = true;
                    Poll::Ready(Some(Err(LimitError::TooLarge(self.max))))
                }
            }
            Poll::Ready(Some(Err(e))) => {
                self.failed = true;
                Poll::Ready(Some(Err(LimitError::Source(Box::new(e)))))
            }
            other => other.map(|o| o.map(|r| r.map_err(|e| LimitError::Source(Box::new(e))))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_counted_until_a_blank_line() {
        let mut l = SseLimit::new((), 11);
        assert!(l.observe(b"data: 12345\n\n"));
        assert!(l.observe(b"data: 1\r\n\r\ndata: 1234\r\n\r\n"));
        assert!(!l.observe(b"data: 12345\ndata: 1\n"));
        let mut l = SseLimit::new((), 10);
        assert!(!l.observe(&[b'x'; 11]));
        let mut l = SseLimit::new((), 10);
        // A CRLF split across chunks is one line end.
        assert!(l.observe(b"data: 1234\r"));
        assert!(l.observe(b"\n\r"));
        assert!(l.observe(b"\ndata: 1234"));
    }

    #[test]
    fn media_types() {
        assert!(media_type_is(
            b"Application/JSON; charset=utf-8",
            JSON_MIME_TYPE
        ));
        assert!(!media_type_is(b"application/jsonx", JSON_MIME_TYPE));
    }
}
