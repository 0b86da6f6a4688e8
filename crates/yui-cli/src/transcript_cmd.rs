//! `yui transcript --preset ID [--limit N] [--before ID]`: a character's history as JSON lines,
//! oldest first (one `transcript::Entry` per line). Page back by passing the first line's `id` as
//! the next `--before`.

use clap::Args;
use std::io::Write;
use yui_core::{transcript, CoreError, Store};

#[derive(Debug, Args)]
pub struct TranscriptArgs {
    /// The character whose history to print.
    #[arg(long)]
    preset: String,
    /// How many lines, at most (1..=500).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u16).range(1..=500))]
    limit: u16,
    /// Only lines older than the line with this id.
    #[arg(long, value_name = "ID")]
    before: Option<i64>,
}

/// Print the page; exit 0.
pub fn run(store: &Store, args: &TranscriptArgs) -> Result<u8, CoreError> {
    yui_core::presets::get(store, &args.preset)?;
    let page = transcript::page(store, &args.preset, args.limit.into(), args.before)?;
    let mut out = std::io::stdout().lock();
    for entry in &page.entries {
        let line = serde_json::to_string(entry)?;
        writeln!(out, "{line}").map_err(|e| CoreError::internal(format!("stdout: {e}")))?;
    }
    Ok(0)
}
