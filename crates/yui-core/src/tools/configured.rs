//! The tools the user configures, together: command tools (`client-tools.json`) and MCP servers
//! (`mcp.json`) share one per-character selection, one report (Settings → Tools, `yui tools
//! list`) and one "Reload tools".

use super::command::{self, select};
use super::mcp;
use crate::error::Result;
use crate::store::Store;
use serde_json::Value;

/// The command tools' report with the MCP servers' under `"mcp"`. Asking starts the servers not
/// started yet: the servers start when a character window opens, and Settings → Tools, opened
/// before that, would otherwise show "not started yet" and never ask again (it asks again only
/// while one is starting).
pub fn report(store: &Store) -> Result<Value> {
    let mut r = command::report(store, &command::current())?;
    let hub = mcp::current();
    hub.warm();
    r["mcp"] = mcp::report(store, &hub)?;
    Ok(r)
}

/// Read both files again; the MCP servers are stopped and started again. Returns the new report.
pub async fn reload(store: &Store) -> Result<Value> {
    command::reload();
    mcp::reload().await;
    report(store)
}

/// [`toggle`], then the new [`report`] (Settings → Tools).
pub fn toggle_and_report(store: &Store, preset_id: &str, name: &str, on: bool) -> Result<Value> {
    toggle(store, preset_id, name, on)?;
    report(store)
}

/// Declare (or stop declaring) one configured tool — a command tool or an MCP server tool listed
/// by now — for one character.
pub fn toggle(store: &Store, preset_id: &str, name: &str, on: bool) -> Result<()> {
    let commands = command::current();
    let mut known: Vec<(String, bool)> = commands
        .definitions
        .iter()
        .map(|d| (d.name.clone(), d.default_enabled))
        .collect();
    known.extend(mcp::current().known());
    select::toggle_among(store, &known, preset_id, name, on)
}
