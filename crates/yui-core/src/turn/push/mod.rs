//! The push transport (docs/push-transport.md): the backend drives the turn over one WebSocket
//! per character window. The client declares its tools in `hello`, sends `user_message`, shows
//! and speaks `segment`s (cues inside them), runs `tool_call`s under the same rules and strings
//! as the other transports and answers each with one `tool_result`.
//!
//! - [`conn`]: the connection (hello/welcome, ping/pong, reconnect with backoff);
//! - [`map`]: one turn's frames → model events (pure, table-tested);
//! - this module: `hello` built from current state, and a turn run over a connection.

pub mod conn;
pub mod map;

pub use conn::{ConnState, HelloFn, PushClient, PushConfig, TurnLink};

use super::dispatch::{Dispatch, End, Round};
use super::engine::{TurnDeps, TurnRequest};
use super::model::ModelEvent;
use super::sse::BackendError;
use super::wire::push::{ClientFrame, ClientInfo, PresetRef, ToolDecl, PROTOCOL};
use crate::error::Result;
use crate::store::Store;
use crate::tools::registry::{RegistryEnv, ToolRegistry};
use crate::tools::{ToolOutput, GENERATE_EXPRESS};
use crate::window::WindowKind;
use map::{PushEnd, PushMapper};
use serde_json::json;
use std::sync::Arc;

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
    Arc::new(move || hello_for(&store, &preset_id, window).map_err(|e| e.message))
}

/// The connection settings of a turn's backend.
pub fn config(req: &TurnRequest) -> std::result::Result<PushConfig, String> {
    let url = req
        .backend
        .push_url
        .clone()
        .filter(|u| !u.trim().is_empty())
        .ok_or("the push transport needs a push URL (Settings → Backend)")?;
    Ok(PushConfig {
        url,
        api_key: req.backend.api_key.clone(),
        connect: req.timeouts.connect,
        welcome: req.timeouts.headers,
    })
}

/// Run one turn over the window's connection (or, without one, over a connection made for it).
pub(crate) async fn push_turn(
    d: &mut Dispatch<'_>,
    deps: &TurnDeps,
    req: &TurnRequest,
) -> std::result::Result<(), End> {
    let own;
    let client: &PushClient = match &deps.push {
        Some(c) => c,
        None => {
            let cfg = config(req).map_err(End::Failed)?;
            let hello = hello_fn(deps.store.clone(), req.preset_id.clone(), req.window);
            own = PushClient::spawn(cfg, hello);
            &own
        }
    };
    let url = req.backend.push_url.clone().unwrap_or_default();
    let wait = req.timeouts.connect + req.timeouts.headers;
    let mut link = tokio::select! {
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
    let mut mapper = PushMapper::new();
    let mut round = Round::default();
    let mut buf = Vec::with_capacity(4);
    let stall = req.timeouts.stall;
    let cancel = d.cancel;
    let cancelled = cancel.cancelled();
    tokio::pin!(cancelled);
    loop {
        let frame = tokio::select! {
            biased;
            _ = &mut cancelled => {
                link.send(ClientFrame::Cancel { turn_id: req.turn_id.clone() }).await;
                return Err(End::Stopped);
            }
            f = tokio::time::timeout(stall, link.recv()) => match f {
                Err(_) => return Err(BackendError::Stall { waited_ms: stall.as_millis() as u64 }.into()),
                Ok(None) => return Err(lost()),
                Ok(Some(f)) => f,
            },
        };
        let end = mapper.map(frame, &mut buf);
        for ev in buf.drain(..) {
            match ev {
                ModelEvent::Call(call) => {
                    let call_id = call.call_id.clone();
                    // generate_express is not declared on push: its cues come in segments.
                    let answered = if call.name == GENERATE_EXPRESS {
                        d.unregistered(call).await
                    } else {
                        d.release(call).await?
                    };
                    let Some(a) = answered else {
                        continue;
                    };
                    let (result, images) = match a.result {
                        ToolOutput::Text(t) => (t, Vec::new()),
                        ToolOutput::Images { text, images } => (text, images),
                    };
                    let f = ClientFrame::ToolResult {
                        turn_id: req.turn_id.clone(),
                        call_id,
                        result,
                        images,
                    };
                    if !link.send(f).await {
                        return Err(lost());
                    }
                }
                other => d.apply(other, &mut round).await?,
            }
        }
        match end {
            None => {}
            Some(PushEnd::Ok) => return Ok(()),
            Some(PushEnd::Stopped) => return Err(End::Stopped),
            Some(PushEnd::Error(body)) => return Err(BackendError::Server { body }.into()),
        }
    }
}

fn lost() -> End {
    End::Backend(BackendError::Stream {
        message: "the connection to the push backend was lost".into(),
    })
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
    tx: &tokio::sync::mpsc::Sender<super::TurnEvent>,
) -> usize {
    let cancel = tokio_util::sync::CancellationToken::new();
    let ctx = super::engine::tool_context(deps, req);
    let mut d = Dispatch::new(tx, registry, &cancel, ctx, super::engine::unregistered(req));
    let mut mapper = PushMapper::new();
    let mut round = Round::default();
    let mut buf = Vec::with_capacity(4);
    let mut parsed = 0;
    for f in frames {
        let Ok(frame) = super::wire::push::ServerFrame::parse(f) else {
            continue;
        };
        parsed += 1;
        mapper.map(frame, &mut buf);
        for ev in buf.drain(..) {
            let _ = d.apply(ev, &mut round).await;
        }
    }
    parsed
}
