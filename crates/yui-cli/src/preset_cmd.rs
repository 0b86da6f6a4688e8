//! `yui preset`: list, add, open and close characters.

use clap::Subcommand;
use serde_json::Value;
use yui_core::{presets, CoreError, Store};

#[derive(Debug, Subcommand)]
pub enum PresetCmd {
    /// Print every preset (display order).
    List,
    /// Add a preset; its id is made from the name. Prints the new preset.
    Add { name: String },
    /// Mark a preset open (its window shows at the next start). Prints the preset.
    Open { id: String },
    /// Mark a preset closed. The main preset cannot be closed. Prints the preset.
    Close { id: String },
}

pub fn run(store: &Store, cmd: &PresetCmd) -> Result<Value, CoreError> {
    let out = match cmd {
        PresetCmd::List => serde_json::to_value(presets::list(store)?)?,
        PresetCmd::Add { name } => serde_json::to_value(presets::add(store, name)?)?,
        PresetCmd::Open { id } => serde_json::to_value(presets::open(store, id)?)?,
        PresetCmd::Close { id } => serde_json::to_value(presets::close(store, id)?)?,
    };
    Ok(out)
}
