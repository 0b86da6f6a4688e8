//! `yui vocab`: show the expression vocabulary loaded now and the generate_express schema the
//! next turn will declare on each transport; reset it or change the motion selection.

use clap::Subcommand;
use serde_json::{json, Value};
use yui_core::vocab::{self, Transport, Vocab};
use yui_core::{CoreError, Store};

#[derive(Debug, Subcommand)]
pub enum VocabCmd {
    /// Print the loaded vocabulary and the schema the next turn declares (both transports).
    Show,
    /// Put the default vocabulary back.
    Reset,
    /// Set the expression-motion selection (no ids: offer no body motion).
    Select {
        /// Motion ids to offer the model.
        ids: Vec<String>,
    },
}

/// Run a `yui vocab` subcommand; the text to print on success.
pub fn run(store: &Store, cmd: &VocabCmd) -> Result<String, CoreError> {
    match cmd {
        VocabCmd::Show => show(store),
        VocabCmd::Reset => {
            vocab::save(store, &Vocab::default())?;
            show(store)
        }
        VocabCmd::Select { ids } => {
            let mut v = vocab::load(store)?;
            if let Some(unknown) = ids
                .iter()
                .find(|id| !v.motions.iter().any(|m| &m.id == *id))
            {
                return Err(CoreError::invalid(format!("unknown motion id {unknown}")));
            }
            v.motion_selection = ids.clone();
            vocab::save(store, &v)?;
            show(store)
        }
    }
}

/// The loaded vocabulary and the declared tool per transport (`null`: no tool is declared).
pub fn show_value(store: &Store) -> Result<Value, CoreError> {
    let v = vocab::load(store)?;
    let offered: Vec<&str> = v.offered_motions().iter().map(|m| m.id.as_str()).collect();
    Ok(json!({
        "vocabulary": v,
        "offered_motions": offered,
        "declared": {
            "chat_completions": vocab::declared_tool(&v, Transport::ChatCompletions),
            "responses": vocab::declared_tool(&v, Transport::Responses),
        }
    }))
}

fn show(store: &Store) -> Result<String, CoreError> {
    Ok(serde_json::to_string_pretty(&show_value(store)?)?)
}
