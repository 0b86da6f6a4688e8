//! The push transport (docs/push-transport.md): the backend drives the turn over one WebSocket
//! per character window. The client declares its tools in `hello`, sends `user_message`, shows
//! and speaks `segment`s (cues inside them), runs `tool_call`s under the same rules and strings
//! as the other transports and answers each with one `tool_result`.
//!
//! - [`conn`]: the connection (hello/welcome, ping/pong, reconnect with backoff);
//! - [`map`]: one turn's frames → model events (pure, table-tested);
//! - this module: `hello` built from current state, and a turn run over a connection.

pub(crate) mod conn;
pub(crate) mod map;
pub mod wire;

pub use conn::{ConnState, HelloFn, PushClient, PushConfig, TurnLink};

use crate::backend::{Backend, Transport};
use crate::error::Result;
use crate::store::Store;
use crate::timeouts::Timeouts;
use crate::tools::registry::{RegistryEnv, ToolRegistry};
use crate::tools::{ToolOutput, GENERATE_EXPRESS};
use crate::turn::dispatch::{Answered, Dispatch, End};
use crate::turn::error::BackendError;
use crate::turn::model::StopReason;
use crate::turn::read::{read, FrameSource};
use crate::turn::request::{SeatLink, TurnDeps, TurnRequest};
use crate::window::WindowKind;
use map::PushMapper;
use serde_json::json;
use std::sync::Arc;
use wire::{ClientFrame, ClientInfo, PresetRef, ServerFrame, ToolDecl, PROTOCOL};

/// The `hello` of a window: its declared tools without generate_express, and the cue schema
/// generate_express would have.
pub fn hello_from(
    registry: &ToolRegistry,
    window: WindowKind,
    id: &str,
    name: &str,
) -> ClientFrame {
    let mut cues = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let mut tools = Vec::new();
    for t in registry.tools() {
        if t.name() == GENERATE_EXPRESS {
            cues = t.parameters();
        } else {
            tools.push(ToolDecl {
                name: t.name().to_string(),
                description: t.description(),
                parameters: t.parameters(),
            });
        }
    }
    ClientFrame::Hello {
        protocol: PROTOCOL,
        client: ClientInfo {
            name: "yui".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        window: window.as_str().into(),
        preset: PresetRef {
            id: id.into(),
            name: name.into(),
        },
        tools,
        cues,
    }
}

/// The `hello` of `preset_id`'s window, built from the store now (open presets, vocabulary).
pub fn hello_for(store: &Store, preset_id: &str, window: WindowKind) -> Result<ClientFrame> {
    let preset = crate::presets::get(store, preset_id)?;
    let env = RegistryEnv::load(store, preset_id, window)?;
    let registry = ToolRegistry::for_window(&env)?;
    Ok(hello_from(&registry, window, &preset.id, &preset.name))
}

/// A [`HelloFn`] that rebuilds the window's hello from the store at every connect.
pub fn hello_fn(store: Store, preset_id: String, window: WindowKind) -> HelloFn {
    Arc::new(move || hello_for(&store, &preset_id, window))
}

/// The connection settings of a turn's backend.
pub(crate) fn config(req: &TurnRequest) -> std::result::Result<PushConfig, String> {
    config_for(&req.backend, &req.timeouts)
        .ok_or_else(|| "the push transport needs a push URL (Settings → Backend)".into())
}

/// The connection's configuration for `backend`: `None` when it is not push or has no push URL.
pub fn config_for(backend: &Backend, timeouts: &Timeouts) -> Option<PushConfig> {
    if backend.transport != Transport::Push {
        return None;
    }
    let url = backend.push_url.clone().filter(|u| !u.trim().is_empty())?;
    Some(PushConfig {
        url,
        api_key: backend.api_key.clone(),
        connect: timeouts.connect,
        welcome: timeouts.headers,
    })
}

/// Push, as the engine sees it: the server keeps the conversation; a call of a tool the window
/// did not declare is refused.
pub(crate) const DESCRIPTOR: super::descriptor::Descriptor = super::descriptor::Descriptor {
    link: super::descriptor::Link::Connection,
    unregistered: crate::turn::dispatch::Unregistered::Refuse,
    history: super::descriptor::History::OnServer,
    sse_mapper: None,
    not_found: None,
    probe: None,
};

/// Run one turn over the window's connection (or, without one, over a connection made for it).
pub(crate) async fn push_turn(
    d: &mut Dispatch<'_>,
    deps: &TurnDeps,
    req: &TurnRequest,
) -> std::result::Result<(), End> {
    let own;
    let client: &PushClient = match &deps.link {
        SeatLink::Push(c) => c,
        _ => {
            let cfg = config(req).map_err(End::Failed)?;
            let hello = hello_fn(deps.store.clone(), req.preset_id.clone(), req.window);
            own = PushClient::spawn(cfg, hello);
            &own
        }
    };
    let url = req.backend.push_url.clone().unwrap_or_default();
    let wait = req.timeouts.connect + req.timeouts.headers;
    let link = tokio::select! {
        biased;
        _ = d.cancel.cancelled() => return Err(End::Stopped),
        l = client.open_turn(&req.turn_id, wait) => l.map_err(|message| BackendError::Connect { url: url.clone(), message })?,
    };
    let sent = link
        .send(ClientFrame::UserMessage {
            turn_id: req.turn_id.clone(),
            // An addressed turn's words carry the speaker's name (docs/push-transport.md).
            text: match &req.addressed_by {
                Some(speaker) => format!("{speaker}: {}", req.message),
                None => req.message.clone(),
            },
            context: req.context.as_ref().map(|c| c.render()),
        })
        .await;
    if !sent {
        return Err(lost());
    }
    let mut source = PushSource {
        link,
        turn_id: &req.turn_id,
        stall: req.timeouts.stall,
    };
    let cancel = d.cancel;
    let round = read(d, cancel, &mut source, &mut PushMapper::new()).await?;
    match round.stop {
        Some(StopReason::Stopped) => Err(End::Stopped),
        Some(StopReason::Error(body)) => Err(BackendError::Server { body }.into()),
        _ => Ok(()),
    }
}

/// One push turn's link as a frame source: frames of this turn, `cancel` when the turn is
/// stopped, and each answered call's `tool_result` sent at once.
struct PushSource<'a> {
    link: TurnLink,
    turn_id: &'a str,
    stall: std::time::Duration,
}

impl FrameSource for PushSource<'_> {
    type Frame = ServerFrame;

    async fn next(&mut self) -> Option<Result<ServerFrame, BackendError>> {
        self.link.recv().await.map(Ok)
    }

    fn stall(&self) -> Option<std::time::Duration> {
        Some(self.stall)
    }

    async fn cancelled(&mut self) {
        let turn_id = self.turn_id.to_string();
        self.link.send(ClientFrame::Cancel { turn_id }).await;
    }

    async fn answered(&mut self, a: &Answered) -> Result<(), BackendError> {
        let (result, images) = match &a.result {
            ToolOutput::Text(t) => (t.clone(), Vec::new()),
            ToolOutput::Images { text, images } => (text.clone(), images.clone()),
        };
        let f = ClientFrame::ToolResult {
            turn_id: self.turn_id.to_string(),
            call_id: a.call_id.clone(),
            result,
            images,
        };
        if self.link.send(f).await {
            Ok(())
        } else {
            Err(lost_stream())
        }
    }
}

fn lost() -> End {
    End::Backend(lost_stream())
}

fn lost_stream() -> BackendError {
    BackendError::Stream {
        message: map::LOST.into(),
    }
}

/// `hello.tools` names, for tests and `yui` diagnostics.
pub fn tool_names(hello: &ClientFrame) -> Vec<String> {
    match hello {
        ClientFrame::Hello { tools, .. } => tools.iter().map(|t| t.name.clone()).collect(),
        _ => Vec::new(),
    }
}

/// Run frame texts (as the connection reads them) through one turn's mapping and dispatch, with
/// no socket: parse, map, dispatch, events out. Returns how many frames parsed. For the benchmark
/// (`benches/push_stream.rs`).
#[doc(hidden)]
pub async fn replay_frames(
    deps: &TurnDeps,
    req: &TurnRequest,
    registry: &ToolRegistry,
    frames: &[String],
    tx: &tokio::sync::mpsc::Sender<crate::turn::TurnEvent>,
) -> usize {
    let unregistered = DESCRIPTOR.unregistered;
    super::socket::replay::<map::PushMap>(deps, req, registry, frames, unregistered, tx).await
}
