//! The one read loop every transport's response goes through: wait for the next frame (or the
//! turn's stop, or the stall timeout), map it, drain the model events into the dispatch, hand
//! each answered call back to the source (push answers at once; request transports send results
//! with the next request), and stop at the mapper's end or the source's.
//!
//! A transport brings a [`FrameSource`] (an SSE body, a push turn's link, a WebSocket) and a
//! [`Mapper`] whose `Frame` is what that source delivers; the loop is written once. What the
//! model events go to is a [`Sink`]: a turn's dispatch, or the doctor's recorder.

use super::dispatch::{Answered, Dispatch, End, Round};
use super::error::BackendError;
use super::model::{Flow, Mapper, ModelEvent};
use super::sse::{SseEvent, SseStream};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Where one response's model events go.
pub(crate) trait Sink {
    /// Apply one model event to the response being read (`round`).
    async fn apply(&mut self, ev: ModelEvent, round: &mut Round) -> Result<(), End>;
    /// The response ended (its own end, or the source's, after the mapper's last events).
    async fn end_of_response(&mut self, _: &mut Round) {}
}

impl Sink for Dispatch<'_> {
    async fn apply(&mut self, ev: ModelEvent, round: &mut Round) -> Result<(), End> {
        Dispatch::apply(self, ev, round).await
    }

    async fn end_of_response(&mut self, round: &mut Round) {
        Dispatch::end_of_response(self, &mut round.text).await
    }
}

/// Where one response's frames come from.
pub(crate) trait FrameSource: Send {
    type Frame;

    /// The next frame; `None` when the source ended (the mapper then says whether that was
    /// the response's own end or a cut).
    async fn next(&mut self) -> Option<Result<Self::Frame, BackendError>>;

    /// How long the loop waits for one frame before the turn fails as stalled. `None`: the
    /// source watches itself (SSE watches bytes, so keep-alive comments count as life).
    fn stall(&self) -> Option<Duration> {
        None
    }

    /// The turn was stopped while reading: tell the server if the transport can (push `cancel`).
    async fn cancelled(&mut self) {}

    /// A client call was answered: send its result now if the transport does (push
    /// `tool_result`). Request transports send results with the next request.
    async fn answered(&mut self, _: &Answered) -> Result<(), BackendError> {
        Ok(())
    }

    /// The mapper has everything: let go of the connection before held calls run.
    fn end(&mut self) {}
}

/// Read one response through `mapper`, dispatching as it goes. A cut stream is an error after
/// the text so far was shown; nothing still held runs.
pub(crate) async fn read<K, S, M>(
    d: &mut K,
    cancel: &CancellationToken,
    source: &mut S,
    mapper: &mut M,
) -> Result<Round, End>
where
    K: Sink,
    S: FrameSource,
    M: Mapper<Frame = S::Frame> + ?Sized,
{
    let mut round = Round::default();
    let mut buf = Vec::with_capacity(4);
    let stall = source.stall();
    // Created once per response and reused: a fresh `cancelled()` per frame would register and
    // drop a waiter every time.
    let cancelled = cancel.cancelled();
    tokio::pin!(cancelled);
    loop {
        let next = tokio::select! {
            biased;
            _ = &mut cancelled => {
                source.cancelled().await;
                return Err(End::Stopped);
            }
            f = next_within(source, stall) => f,
        };
        let frame = match next {
            None => break,
            Some(Err(e)) => return Err(e.into()),
            Some(Ok(f)) => f,
        };
        let flow = mapper.feed(frame, &mut buf);
        drain(d, source, &mut buf, &mut round).await?;
        if flow? == Flow::End {
            break;
        }
    }
    source.end();
    mapper.finish(&mut buf)?;
    drain(d, source, &mut buf, &mut round).await?;
    d.end_of_response(&mut round).await;
    Ok(round)
}

async fn next_within<S: FrameSource>(
    source: &mut S,
    stall: Option<Duration>,
) -> Option<Result<S::Frame, BackendError>> {
    let Some(stall) = stall else {
        return source.next().await;
    };
    match tokio::time::timeout(stall, source.next()).await {
        Ok(f) => f,
        Err(_) => Some(Err(BackendError::Stall {
            waited_ms: stall.as_millis() as u64,
        })),
    }
}

async fn drain<K: Sink, S: FrameSource>(
    d: &mut K,
    source: &mut S,
    buf: &mut Vec<ModelEvent>,
    round: &mut Round,
) -> Result<(), End> {
    for e in buf.drain(..) {
        let answered = round.answered.len();
        d.apply(e, round).await?;
        if round.answered.len() > answered {
            if let Some(a) = round.answered.last() {
                source.answered(a).await?;
            }
        }
    }
    Ok(())
}

/// An SSE response body as a frame source.
pub(crate) struct SseSource(Option<SseStream>);

impl SseSource {
    pub fn new(stream: SseStream) -> Self {
        Self(Some(stream))
    }
}

impl FrameSource for SseSource {
    type Frame = SseEvent;

    async fn next(&mut self) -> Option<Result<SseEvent, BackendError>> {
        self.0.as_mut()?.next().await
    }

    fn end(&mut self) {
        self.0 = None;
    }
}

/// Run frame texts (as a transport's socket reads them) through one response's mapping and
/// dispatch, with no socket: `parse` each (unparsable ones skipped, as the socket skips them),
/// map, dispatch, events out. Returns how many parsed. What the transports' `replay_*` entry
/// points (the benchmarks and the fuzz targets) run.
pub(crate) async fn replay<M: Mapper>(
    deps: &super::request::TurnDeps,
    req: &super::request::TurnRequest,
    registry: &crate::tools::registry::ToolRegistry,
    mut source: Replay<'_, M::Frame>,
    mut mapper: M,
    unregistered: super::dispatch::Unregistered,
    tx: &tokio::sync::mpsc::Sender<super::TurnEvent>,
) -> usize {
    let cancel = CancellationToken::new();
    let ctx = super::request::tool_context(deps, req);
    let mut d = Dispatch::new(tx, registry, &cancel, ctx, unregistered);
    let _ = read(&mut d, &cancel, &mut source, &mut mapper).await;
    source.parsed
}

/// Frame texts as a source: each `parse`d (unparsable ones skipped, as the socket skips them).
pub(crate) struct Replay<'a, F> {
    texts: std::slice::Iter<'a, String>,
    parse: fn(&str) -> Option<F>,
    parsed: usize,
}

impl<'a, F> Replay<'a, F> {
    pub(crate) fn new(texts: &'a [String], parse: fn(&str) -> Option<F>) -> Self {
        Self {
            texts: texts.iter(),
            parse,
            parsed: 0,
        }
    }
}

impl<F> FrameSource for Replay<'_, F> {
    type Frame = F;

    async fn next(&mut self) -> Option<Result<F, BackendError>> {
        for t in self.texts.by_ref() {
            if let Some(frame) = (self.parse)(t) {
                self.parsed += 1;
                return Some(Ok(frame));
            }
        }
        None
    }
}
