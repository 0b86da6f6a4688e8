//! How one client call runs, the same for every transport: its arguments parsed as a turn
//! parses them, the tool in its own task under its wait, a stopped turn ending it.

use crate::tools::{ClientTool, ToolContext, ToolOutput};
use serde_json::{json, Value};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Extra time past a tool's [`ClientTool::wait`] before the turn answers for it, so a tool that
/// keeps its own deadline (browser: 32 s, answering `unknown: …`) answers with its own words.
pub const TOOL_WAIT_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Run one client call the way a turn does: in its own task, bounded by the tool's wait (plus
/// [`TOOL_WAIT_GRACE`]) and by `cancel`. A throw answers `error: <message>`, an overrun
/// `error: no answer within <wait>` (the tool's token is cancelled and it is left to finish on
/// its own). `None` when `cancel` fired.
pub async fn call_tool(
    tool: &Arc<dyn ClientTool>,
    args: Value,
    ctx: &ToolContext,
    cancel: &CancellationToken,
) -> Option<ToolOutput> {
    let wait = tool.wait();
    let token = cancel.child_token();
    let (t, ctx, c) = (tool.clone(), ctx.clone(), token.clone());
    let mut task = tokio::spawn(async move { t.call(args, &ctx, c).await });
    tokio::select! {
        biased;
        _ = cancel.cancelled() => None,
        r = tokio::time::timeout(wait + TOOL_WAIT_GRACE, &mut task) => Some(match r {
            Err(_) => {
                token.cancel();
                ToolOutput::text(format!("error: no answer within {}", human(wait)))
            }
            Ok(Err(join)) => {
                tracing::error!(tool = tool.name(), error = %join, "tool task failed");
                ToolOutput::text("error: the tool failed unexpectedly")
            }
            Ok(Ok(Err(e))) => {
                if let Some(cause) = std::error::Error::source(&e) {
                    tracing::warn!(tool = tool.name(), error = %e, %cause, "tool failed");
                }
                ToolOutput::text(format!("error: {e}"))
            }
            Ok(Ok(Ok(out))) => out,
        }),
    }
}

/// Parse a call's arguments the way a turn does; `Err` is the result the call answers.
/// Empty arguments (some servers send none for a call without parameters) read as `{}`.
pub fn parse_call_arguments(arguments: &str) -> std::result::Result<Value, ToolOutput> {
    if arguments.trim().is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_str(arguments)
        .map_err(|m| ToolOutput::text(format!("error: arguments JSON parse failed: {m}")))
}

fn human(d: std::time::Duration) -> String {
    super::error::human_ms(d.as_millis() as u64)
}
