//! `yui tool NAME --args JSON`: run one client tool directly, as a turn would (same registry for
//! the window, same argument parsing, same wait and error strings), and print its result: a JSON
//! string, or `{"text":…, "images":[…]}`.

use crate::turn_cmd;
use clap::Args;
use serde_json::Value;
use std::sync::Arc;
use yui_core::clock::SharedClock;
use yui_core::paths::Paths;
use yui_core::tools::registry::{RegistryEnv, ToolRegistry};
use yui_core::tools::{CallScope, ToolContext};
use yui_core::turn::{self, CancellationToken};
use yui_core::{CoreError, Store, SystemClock, WindowKind};

#[derive(Debug, Args)]
pub struct ToolArgs {
    /// The tool's name, as the window declares it.
    pub name: String,
    /// The call's arguments (JSON text, as the model would send them).
    #[arg(long, default_value = "{}")]
    pub args: String,
    /// Preset id (default: the main preset).
    #[arg(long)]
    pub preset: Option<String>,
    /// Window kind: main | pet | browser_build | phone.
    #[arg(long, default_value = "main", value_parser = crate::turn_cmd::parse_window)]
    pub window: WindowKind,
    /// Turn id. Default: a new turn for this invocation; calls given the same id share a turn
    /// (per-turn rules such as rate_relation's one call per target apply across them).
    #[arg(long, value_name = "ID")]
    pub turn: Option<String>,
}

pub fn run(paths: &Paths, args: &ToolArgs) -> Result<Value, CoreError> {
    let rt = turn_cmd::runtime()?;
    if yui_core::tools::registry::declares_client_tools(args.window) {
        // An MCP server's tool exists once its server listed it: start that server alone and
        // wait for it (another server that hangs at its start costs this call nothing).
        let hub = yui_core::tools::mcp::current();
        if let Some(server) = hub.server_of(&args.name) {
            rt.block_on(hub.settle_one(server));
        }
    }
    let out = call(paths, args, &rt);
    rt.block_on(yui_core::tools::mcp::shutdown());
    out
}

fn call(paths: &Paths, args: &ToolArgs, rt: &tokio::runtime::Runtime) -> Result<Value, CoreError> {
    let store = Store::open(paths.db_path())?;
    let preset = turn_cmd::resolve_preset(&store, args.preset.as_deref())?;
    let env = RegistryEnv::load(&store, &preset, args.window)?;
    let registry = ToolRegistry::for_window(&env)?;
    let Some(tool) = registry.get(&args.name).cloned() else {
        let mut why = format!(
            "the {:?} window declares no tool named {:?} (it declares: {})",
            args.window,
            args.name,
            registry.names().join(", ")
        );
        if args.name.starts_with("mcp__") {
            for p in yui_core::tools::mcp::check(&yui_core::tools::mcp::current()) {
                why.push_str(&format!("; {p}"));
            }
        }
        return Err(CoreError::not_found(why));
    };
    let clock: SharedClock = Arc::new(SystemClock);
    let ctx = ToolContext {
        store: store.clone(),
        clock: clock.clone(),
        preset_id: preset,
        window: args.window,
        // pid + microseconds: two invocations, even concurrent ones, never share a turn.
        turn_id: args.turn.clone().unwrap_or_else(|| {
            format!(
                "tool-{}-{}",
                std::process::id(),
                clock.now().timestamp_micros()
            )
        }),
        call: CallScope {
            call_id: None,
            // A configured command tool's "running …" line, on stderr (stdout is the result).
            progress: Some(Arc::new(|status: String| eprintln!("{status}"))),
        },
    };
    let out = match turn::parse_call_arguments(&args.args) {
        Err(answer) => answer,
        Ok(call_args) => rt.block_on(async {
            let cancel = CancellationToken::new();
            let ctrl_c = turn_cmd::cancel_on_ctrl_c(cancel.clone());
            let out = turn::call_tool(&tool, call_args, &ctx, &cancel).await;
            ctrl_c.abort();
            out.unwrap_or_else(|| yui_core::tools::ToolOutput::text("error: turn stopped"))
        }),
    };
    Ok(serde_json::to_value(out)?)
}
