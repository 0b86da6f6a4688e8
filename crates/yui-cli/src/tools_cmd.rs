//! `yui tools`: the configured tools — command client tools (docs/command-tools.md) and MCP
//! servers (docs/mcp.md): what the config files define, their diagnostics, each server's state and
//! tools, and which characters declare each. `list`, `check` and `enable`/`disable` start the MCP
//! servers first (and stop them at the end); `check` also tries to find each command, and exits 1
//! when anything is wrong.

use crate::turn_cmd;
use clap::Subcommand;
use serde_json::{json, Value};
use yui_core::tools::{command, configured, mcp};
use yui_core::{CoreError, Store};

#[derive(Debug, Subcommand)]
pub enum ToolsCmd {
    /// Every definition and MCP server with its diagnostics, and each character's selection.
    List,
    /// Check the config files, that every command can be found and that every MCP server starts
    /// and lists its tools; exit 1 on any problem.
    Check,
    /// Declare a configured tool for a character (from its current selection).
    Enable {
        name: String,
        /// Preset id (default: the main preset).
        #[arg(long)]
        preset: Option<String>,
    },
    /// Stop declaring a configured tool for a character.
    Disable {
        name: String,
        #[arg(long)]
        preset: Option<String>,
    },
}

/// The JSON to print, and whether the command succeeded.
pub fn run(store: &Store, cmd: &ToolsCmd) -> Result<(Value, bool), CoreError> {
    let rt = turn_cmd::runtime()?;
    let hub = mcp::current();
    rt.block_on(hub.settle(turn_cmd::MCP_SETTLE));
    let out = answer(store, cmd, &hub);
    rt.block_on(hub.stop());
    out
}

fn answer(store: &Store, cmd: &ToolsCmd, hub: &mcp::Hub) -> Result<(Value, bool), CoreError> {
    match cmd {
        ToolsCmd::List => Ok((configured::report(store)?, true)),
        ToolsCmd::Check => {
            let loaded = command::current();
            let problems: Vec<String> = command::check(&loaded)
                .iter()
                .map(|d| d.to_string())
                .collect();
            let mcp_problems = mcp::check(hub);
            let ok = problems.is_empty() && mcp_problems.is_empty();
            Ok((
                json!({
                    "path": loaded.path,
                    "ok": ok,
                    "definitions": loaded.definitions.iter().map(|d| d.name.clone()).collect::<Vec<_>>(),
                    "diagnostics": problems,
                    "mcp": {
                        "path": hub.config.path,
                        "servers": hub.servers.iter().map(|s| json!({
                            "name": s.def.name,
                            "state": s.state().word(),
                            "reason": s.state().reason(),
                            "tools": s.listing().tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
                        })).collect::<Vec<_>>(),
                        "diagnostics": mcp_problems,
                    },
                }),
                ok,
            ))
        }
        ToolsCmd::Enable { name, preset } | ToolsCmd::Disable { name, preset } => {
            let preset = turn_cmd::resolve_preset(store, preset.as_deref())?;
            let on = matches!(cmd, ToolsCmd::Enable { .. });
            configured::toggle(store, &preset, name, on)?;
            Ok((configured::report(store)?, true))
        }
    }
}
