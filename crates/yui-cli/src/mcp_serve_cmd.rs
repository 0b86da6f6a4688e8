//! `yui mcp-serve`: an MCP server on stdio (rmcp's server side) so a script or a coding agent
//! can hand a character something: `notify {preset, text, importance}` (something happened; the
//! character may react) and `say {preset, text}` (pass this on to the user). Each call goes to
//! the running app's inbox (`stage::inbox`), where the manners decide; the result says what
//! became of it. An unknown character, an empty text or no app running is a tool error in
//! plain words. docs/proactive.md, "From other programs".

use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServiceExt};
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::sync::Arc;
use yui_core::manners::rules::Importance;
use yui_core::paths::Paths;
use yui_core::stage::inbox::{self, Request};
use yui_core::CoreError;

/// The server: where the app's inbox is.
#[derive(Clone)]
pub struct YuiServer {
    data_dir: PathBuf,
}

fn schema(v: Value) -> Arc<Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::default(),
    }
}

/// The two tools, as listed.
pub fn tools() -> Vec<Tool> {
    let preset = json!({"type": "string", "description": "The character's preset id (yui settings list / yui preset list)"});
    vec![
        Tool::new(
            "notify",
            "Tell a YUI character that something happened (a build finished, a download is done). \
             It may react by speaking up, when its manners allow: never during quiet mode, quiet \
             hours, a fullscreen window or a call. high importance may go over its hourly budget \
             and waits when it cannot be said now.",
            schema(json!({
                "type": "object",
                "properties": {
                    "preset": preset,
                    "text": {"type": "string", "description": "What happened, in a few words"},
                    "importance": {"type": "string", "enum": ["low", "normal", "high"], "default": "normal"}
                },
                "required": ["preset", "text"],
                "additionalProperties": false
            })),
        ),
        Tool::new(
            "say",
            "Ask a YUI character to pass a message on to the user, in its own words, when its \
             manners allow.",
            schema(json!({
                "type": "object",
                "properties": {
                    "preset": preset,
                    "text": {"type": "string", "description": "The message for the user"}
                },
                "required": ["preset", "text"],
                "additionalProperties": false
            })),
        ),
    ]
}

fn text_arg(args: &Map<String, Value>, name: &str) -> Result<String, String> {
    match args.get(name) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) | None | Some(Value::Null) => Err(format!("{name} is missing")),
        Some(_) => Err(format!("{name} must be a string")),
    }
}

/// The inbox request a call asks for, or what is wrong with its arguments.
pub fn request_of(name: &str, args: &Map<String, Value>) -> Result<Request, String> {
    let preset = text_arg(args, "preset")?;
    let text = text_arg(args, "text")?;
    match name {
        "notify" => {
            let importance = match args.get("importance") {
                None | Some(Value::Null) => Importance::Normal,
                Some(Value::String(s)) => Importance::parse(s)
                    .ok_or_else(|| format!("importance must be low, normal or high, not {s:?}"))?,
                Some(_) => return Err("importance must be low, normal or high".into()),
            };
            Ok(Request::Event {
                preset,
                text,
                importance,
            })
        }
        "say" => Ok(Request::Say { preset, text }),
        other => Err(format!(
            "there is no tool {other:?}; the tools are notify and say"
        )),
    }
}

/// The result's text for an inbox answer: `went`, `waiting: held: …`, `dropped: held: …`.
pub fn outcome_text(v: &Value) -> String {
    match (v["outcome"].as_str(), v["reason"].as_str()) {
        (Some(o), Some(r)) => format!("{o}: {r}"),
        (Some(o), None) => o.to_string(),
        _ => v.to_string(),
    }
}

impl ServerHandler for YuiServer {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("yui", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Hand a YUI character something to react to (notify) or to pass on (say).",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        let answer = match request_of(&request.name, &args) {
            Err(why) => Err(why),
            Ok(req) => inbox::send(&self.data_dir, &req)
                .await
                .map(|v| outcome_text(&v))
                .map_err(|e: CoreError| e.message),
        };
        Ok(match answer {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(why) => CallToolResult::error(vec![ContentBlock::text(why)]),
        }
        .into())
    }
}

/// Serve on stdin/stdout until the client closes them.
pub fn run(paths: &Paths) -> Result<u8, CoreError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CoreError::internal(format!("no async runtime: {e}")))?;
    rt.block_on(async {
        let server = YuiServer {
            data_dir: paths.data_dir.clone(),
        };
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| CoreError::internal(format!("the MCP session did not start: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| CoreError::internal(format!("the MCP session failed: {e}")))?;
        Ok(0)
    })
}
