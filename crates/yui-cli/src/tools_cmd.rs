//! `yui tools`: the configured command client tools (docs/command-tools.md) — what the config
//! file defines, its diagnostics, and which characters declare each; `check` also tries to find
//! each command, and exits 1 when anything is wrong.

use crate::turn_cmd;
use clap::Subcommand;
use serde_json::{json, Value};
use yui_core::tools::command::{self, select};
use yui_core::{CoreError, Store};

#[derive(Debug, Subcommand)]
pub enum ToolsCmd {
    /// Every definition with its diagnostics, and each character's selection.
    List,
    /// Check the config file and that every command can be found; exit 1 on any problem.
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
    let loaded = command::current();
    match cmd {
        ToolsCmd::List => Ok((command::report(store, &loaded)?, true)),
        ToolsCmd::Check => {
            let problems: Vec<String> = command::check(&loaded)
                .iter()
                .map(|d| d.to_string())
                .collect();
            let ok = problems.is_empty();
            Ok((
                json!({
                    "path": loaded.path,
                    "ok": ok,
                    "definitions": loaded.definitions.iter().map(|d| d.name.clone()).collect::<Vec<_>>(),
                    "diagnostics": problems,
                }),
                ok,
            ))
        }
        ToolsCmd::Enable { name, preset } | ToolsCmd::Disable { name, preset } => {
            let preset = turn_cmd::resolve_preset(store, preset.as_deref())?;
            let on = matches!(cmd, ToolsCmd::Enable { .. });
            select::toggle(store, &loaded, &preset, name, on)?;
            Ok((command::report(store, &loaded)?, true))
        }
    }
}
