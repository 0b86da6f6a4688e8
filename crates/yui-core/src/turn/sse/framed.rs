//! The byte layer under the SSE parser: the stall watchdog, the reply's size limit, and the
//! end of the body (a complete but unterminated last event is still dispatched; a body that
//! stops mid-line is [`ByteError::Cut`], with that partial line as evidence).

use super::STREAM_MAX;
use crate::turn::error::EVIDENCE_MAX;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// Failure of the byte layer under the SSE parser.
#[derive(Debug)]
pub enum ByteError {
    Transport(reqwest::Error),
    Stall,
    Cut(String),
    TooLong(&'static str, usize),
}

impl std::fmt::Display for ByteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Transport(e) => write!(f, "{e}"),
            Self::Stall => f.write_str("stall"),
            Self::Cut(p) => write!(f, "cut: {p}"),
            Self::TooLong(what, limit) => write!(f, "{what} longer than {limit} bytes"),
        }
    }
}

/// The byte layer: stall watchdog, size limit, end of body (see the module docs). Chunks pass
/// through as they came (zero-copy).
pub struct Framed<S> {
    inner: S,
    /// Bytes after the last line end seen (the current partial line), capped for evidence.
    partial: Vec<u8>,
    /// Whether the last byte seen was a line end.
    at_line_start: bool,
    /// Whether anything was seen at all.
    seen: bool,
    stall: Option<(Duration, Pin<Box<tokio::time::Sleep>>)>,
    /// Whether the watchdog is counting: it starts when the reader waits, so time the reader
    /// spends elsewhere (running a tool) never counts as the server's silence.
    armed: bool,
    /// Since when the server has been silent (the reader began waiting, or the last chunk came).
    /// The timer is not moved on every chunk (re-registering it per event cost more than the
    /// parsing); when it fires early it is set again from here.
    silent_since: tokio::time::Instant,
    /// Bytes in the whole body.
    total: usize,
    done: bool,
}

impl<S> Framed<S> {
    /// `stall`: `None` disables the watchdog (used by benchmarks over in-memory streams).
    pub fn new(inner: S, stall: Option<Duration>) -> Self {
        Self {
            inner,
            partial: Vec::new(),
            at_line_start: true,
            seen: false,
            stall: stall.map(|d| (d, Box::pin(tokio::time::sleep(d)))),
            armed: false,
            silent_since: tokio::time::Instant::now(),
            total: 0,
            done: false,
        }
    }

    /// Note a chunk: its size, and the partial line it ends on.
    fn note(&mut self, b: &[u8]) {
        self.seen = true;
        self.total += b.len();
        match memchr::memrchr2(b'\n', b'\r', b) {
            Some(i) => {
                self.partial.clear();
                self.partial
                    .extend_from_slice(&b[i + 1..b.len().min(i + 1 + EVIDENCE_MAX)]);
            }
            None => {
                let room = EVIDENCE_MAX.saturating_sub(self.partial.len());
                self.partial.extend_from_slice(&b[..b.len().min(room)]);
            }
        }
        self.at_line_start = matches!(b[b.len() - 1], b'\n' | b'\r');
    }
}

impl<S> Stream for Framed<S>
where
    S: Stream<Item = reqwest::Result<Bytes>> + Unpin,
{
    type Item = Result<Bytes, ByteError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if !this.armed && this.stall.is_some() {
            this.armed = true;
            this.silent_since = tokio::time::Instant::now();
        }
        let out = this.poll_inner(cx);
        if out.is_ready() {
            this.armed = false;
        }
        out
    }
}

impl<S> Framed<S>
where
    S: Stream<Item = reqwest::Result<Bytes>> + Unpin,
{
    fn poll_inner(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, ByteError>>> {
        loop {
            if self.done {
                return Poll::Ready(None);
            }
            match self.inner.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    if chunk.is_empty() {
                        continue;
                    }
                    if self.stall.is_some() {
                        self.silent_since = tokio::time::Instant::now();
                    }
                    self.note(&chunk);
                    if self.total > STREAM_MAX {
                        self.done = true;
                        return Poll::Ready(Some(Err(ByteError::TooLong("reply", STREAM_MAX))));
                    }
                    return Poll::Ready(Some(Ok(chunk)));
                }
                Poll::Ready(Some(Err(e))) => {
                    self.done = true;
                    return Poll::Ready(Some(Err(ByteError::Transport(e))));
                }
                Poll::Ready(None) => {
                    self.done = true;
                    if !self.seen {
                        return Poll::Ready(None);
                    }
                    if !self.at_line_start {
                        let partial = String::from_utf8_lossy(&self.partial).into_owned();
                        // Trailing blanks after the last line end are not a cut.
                        if !partial.trim().is_empty() {
                            return Poll::Ready(Some(Err(ByteError::Cut(partial))));
                        }
                    }
                    // Dispatch a last event whose blank line never came.
                    return Poll::Ready(Some(Ok(Bytes::from_static(b"\n\n"))));
                }
                Poll::Pending => {
                    if let Some((d, sleep)) = self.stall.as_mut() {
                        // The timer may still be set from an earlier silence (silence only moves
                        // later): it fires early at worst, and is set again.
                        while sleep.as_mut().poll(cx).is_ready() {
                            let due = self.silent_since + *d;
                            if tokio::time::Instant::now() >= due {
                                self.done = true;
                                return Poll::Ready(Some(Err(ByteError::Stall)));
                            }
                            sleep.as_mut().reset(due);
                        }
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}
