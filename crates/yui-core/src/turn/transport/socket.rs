//! What the socket transports (push, realtime) share: a response's frames mapped until the frame
//! that ends it ([`SocketMapper`], the one [`Mapper`] over each folder's [`SocketMap`]), and the
//! replay of frame texts without a socket (the benchmarks and the fuzz targets).

use crate::tools::registry::ToolRegistry;
use crate::turn::dispatch::Unregistered;
use crate::turn::error::BackendError;
use crate::turn::model::{Flow, Mapper, ModelEvent, StopReason};
use crate::turn::read::Replay;
use crate::turn::request::{TurnDeps, TurnRequest};

/// A socket transport's mapping of one response's frames.
pub(crate) trait SocketMap: Default + Send {
    type Frame;
    /// What the turn fails with when the socket ends before the response did.
    const LOST: &'static str;
    /// A frame from its text; `None` for one that does not parse (the socket skips it).
    fn parse(text: &str) -> Option<Self::Frame>;
    /// Map one frame; `Some` when it ends the response (and why).
    fn map(&mut self, frame: Self::Frame, out: &mut Vec<ModelEvent>) -> Option<StopReason>;
}

/// The response ends at the frame that says so; a socket that ends first is the transport's
/// lost connection.
#[derive(Default)]
pub(crate) struct SocketMapper<M> {
    map: M,
    ended: bool,
}

impl<M: SocketMap> SocketMapper<M> {
    pub(crate) fn new() -> Self {
        Self::default()
    }
}

impl<M: SocketMap> Mapper for SocketMapper<M> {
    type Frame = M::Frame;

    fn feed(&mut self, frame: M::Frame, out: &mut Vec<ModelEvent>) -> Result<Flow, BackendError> {
        Ok(match self.map.map(frame, out) {
            None => Flow::More,
            Some(reason) => {
                self.ended = true;
                out.push(ModelEvent::Stop(reason));
                Flow::End
            }
        })
    }

    fn finish(&mut self, _: &mut Vec<ModelEvent>) -> Result<(), BackendError> {
        if self.ended {
            return Ok(());
        }
        Err(BackendError::Stream {
            message: M::LOST.into(),
        })
    }
}

/// Run frame texts (as the socket reads them) through one response's mapping and dispatch, with
/// no socket: parse, map, dispatch, events out. Returns how many parsed.
pub(crate) async fn replay<M: SocketMap>(
    deps: &TurnDeps,
    req: &TurnRequest,
    registry: &ToolRegistry,
    texts: &[String],
    unregistered: Unregistered,
    tx: &tokio::sync::mpsc::Sender<crate::turn::TurnEvent>,
) -> usize {
    crate::turn::read::replay(
        deps,
        req,
        registry,
        Replay::new(texts, M::parse),
        SocketMapper::<M>::new(),
        unregistered,
        tx,
    )
    .await
}
