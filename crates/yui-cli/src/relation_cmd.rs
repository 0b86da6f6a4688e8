//! `yui relation`: list relation values, bands and the change log; set a value by hand (the
//! settings slider's path). The model's path is `yui tool rate_relation` (docs/relations.md).

use clap::Subcommand;
use serde_json::Value;
use yui_core::relations::{self, Target};
use yui_core::{CoreError, Store, SystemClock};

/// Log entries printed by `list` (newest first).
const LOG_LIMIT: usize = 1000;

#[derive(Debug, Subcommand)]
pub enum RelationCmd {
    /// Print values, bands and the change log (newest first) as JSON.
    List {
        /// Only this preset's relations and log.
        #[arg(long, value_name = "ID")]
        preset: Option<String>,
    },
    /// Set a value by hand, like the settings slider: logged as one jump with the user's
    /// reserved reason, no daily cap, only the range -20..20. Prints the new value and band.
    Set {
        /// The preset whose relation moves.
        #[arg(long, value_name = "ID")]
        preset: String,
        /// `user` (the human) or another preset's id (`preset:<id>` for a preset whose id is `user`).
        #[arg(long, value_name = "T")]
        toward: String,
        /// The new value, -20..20.
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        value: i64,
    },
}

pub fn run(store: &Store, cmd: &RelationCmd) -> Result<Value, CoreError> {
    Ok(match cmd {
        RelationCmd::List { preset } => {
            serde_json::to_value(relations::list(store, preset.as_deref(), LOG_LIMIT)?)?
        }
        RelationCmd::Set {
            preset,
            toward,
            value,
        } => serde_json::to_value(relations::set_by_hand(
            store,
            &SystemClock,
            preset,
            &Target::parse_cli(toward),
            *value,
        )?)?,
    })
}
