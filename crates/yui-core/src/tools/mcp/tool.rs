//! One MCP server tool as a client tool: arguments checked against its input schema, then
//! `tools/call` within the server's timeout; a stopped turn or a timeout sends
//! `notifications/cancelled`; a server that went away answers `error: <server> stopped: <reason>`
//! and is started again by the next call.

use super::listing::ToolDef;
use super::result;
use super::server::{Server, State};
use crate::tools::{ClientTool, ToolContext, ToolError, ToolOutput};
use async_trait::async_trait;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest, RequestId,
    ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;

/// One tool of one server.
#[derive(Clone)]
pub struct McpTool {
    pub server: Arc<Server>,
    pub def: Arc<ToolDef>,
}

impl McpTool {
    /// A whole call, to the one answer the model gets.
    pub async fn execute(&self, args: &Value, cancel: &CancellationToken) -> ToolOutput {
        if let Err(detail) = crate::tools::command::run::check_args(&self.def.validator, args) {
            return ToolOutput::Text(format!("error: invalid arguments: {detail}"));
        }
        let Value::Object(arguments) = args.clone() else {
            return ToolOutput::Text("error: invalid arguments: an object is required".into());
        };
        let server = &self.server;
        let name = &server.def.name;
        let deadline = Instant::now() + server.def.timeout();
        let peer = tokio::select! {
            biased;
            () = cancel.cancelled() => return "error: turn stopped".into(),
            p = server.ensure(deadline) => match p {
                Ok(p) => p,
                Err(e) => return ToolOutput::Text(format!("error: {e}")),
            },
        };
        let gen = server.generation();
        let params = CallToolRequestParams::new(self.def.tool.clone()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(h) => h,
            Err(_) => return ToolOutput::Text(format!("error: {}", self.gone(gen).await)),
        };
        let id = handle.id.clone();
        let answer = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                cancelled(&peer, id, "turn stopped");
                return "error: turn stopped".into();
            }
            () = sleep_until(deadline) => {
                cancelled(&peer, id, "timed out");
                return ToolOutput::Text(format!(
                    "error: {} timed out after {} ms",
                    self.def.name, server.def.timeout_ms
                ));
            }
            r = handle.await_response() => r,
        };
        match answer {
            Ok(ServerResult::CallToolResult(r)) => {
                let parts = result::parts(&r);
                if parts.images.is_empty() {
                    result::answer(parts)
                } else {
                    tokio::task::spawn_blocking(move || result::answer(parts))
                        .await
                        .unwrap_or_else(|_| "error: the result's images could not be read".into())
                }
            }
            Ok(_) => ToolOutput::Text(format!(
                "error: {name} answered tools/call with something else than a tool result"
            )),
            Err(ServiceError::McpError(e)) => ToolOutput::Text(format!("error: {}", e.message)),
            Err(ServiceError::TransportClosed | ServiceError::TransportSend(_)) => {
                ToolOutput::Text(format!("error: {}", self.gone(gen).await))
            }
            Err(e) => ToolOutput::Text(format!("error: {name}: {e}")),
        }
    }

    /// The connection closed under a call: `<server> stopped: <reason>` (the process's exit, when
    /// it exited; the watcher reports it a moment after the pipe closes).
    async fn gone(&self, gen: u64) -> String {
        let server = &self.server;
        let mut states = server.watch();
        let _ = tokio::time::timeout(
            Duration::from_millis(500),
            states.wait_for(|s| !matches!(s, State::Ready)),
        )
        .await;
        let why = match server.state() {
            State::Stopped(r) => r,
            _ => {
                let why = "its connection closed".to_string();
                server.went_away(gen, why.clone());
                why
            }
        };
        format!("{} stopped: {why}", server.def.name)
    }
}

/// Tell the server a call is no longer wanted (`notifications/cancelled`), without waiting.
fn cancelled(peer: &Peer<RoleClient>, id: RequestId, reason: &str) {
    let (peer, reason) = (peer.clone(), reason.to_string());
    tokio::spawn(async move {
        let _ = peer
            .notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason)))
            .await;
    });
}

#[async_trait]
impl ClientTool for McpTool {
    fn name(&self) -> &str {
        &self.def.name
    }
    fn description(&self) -> String {
        self.def.description.clone()
    }
    fn parameters(&self) -> Value {
        self.def.parameters.clone()
    }
    /// Past the server's timeout (which covers a start and the call), so the tool's own
    /// `error: … timed out …` answers, not the turn's generic guard.
    fn wait(&self) -> Duration {
        self.server.def.timeout() + Duration::from_secs(2)
    }
    async fn call(
        &self,
        args: Value,
        ctx: &ToolContext,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        ctx.call.report(format!(
            "running {} on {}…",
            self.def.tool, self.server.def.name
        ));
        Ok(self.execute(&args, &cancel).await)
    }
}
