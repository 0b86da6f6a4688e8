//! `yui event` and `yui quiet`: hand the running app something for a character to react to, and
//! switch quiet mode (docs/proactive.md, "From other programs"). Both talk to the app through its
//! inbox socket in the data dir (`stage::inbox`); `yui quiet` also works with the app closed: the
//! setting is stored either way, and a running app looks at its waiting turns again.

use clap::{Args, ValueEnum};
use serde_json::{json, Value};
use yui_core::manners::rules::Importance;
use yui_core::manners::{self, QuietFor};
use yui_core::paths::Paths;
use yui_core::stage::inbox::{self, Request};
use yui_core::{CoreError, Store, SystemClock};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Level {
    Low,
    Normal,
    High,
}

#[derive(Debug, Args)]
pub struct EventArgs {
    /// The character that reacts (a preset id).
    #[arg(long, value_name = "ID")]
    preset: String,
    /// What happened, in a few words ("the build finished").
    #[arg(long)]
    text: String,
    /// high may go over the budget (never quiet mode or a fullscreen window: it then waits).
    #[arg(long, value_enum, default_value = "normal")]
    importance: Level,
}

#[derive(Debug, Args)]
pub struct QuietArgs {
    /// How long: 1h, 30m, 2h, tomorrow (until the morning), or off.
    #[arg(value_name = "FOR")]
    what: String,
}

fn runtime() -> Result<tokio::runtime::Runtime, CoreError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CoreError::internal(format!("no async runtime: {e}")))
}

/// Prints the app's answer: `{"outcome": "went", "turn_id": …}`, `{"outcome": "waiting",
/// "reason": "held: …"}` or `{"outcome": "dropped", "reason": …}`.
pub fn event(paths: &Paths, args: &EventArgs) -> Result<Value, CoreError> {
    let importance = match args.importance {
        Level::Low => Importance::Low,
        Level::Normal => Importance::Normal,
        Level::High => Importance::High,
    };
    let req = Request::Event {
        preset: args.preset.clone(),
        text: args.text.clone(),
        importance,
    };
    runtime()?.block_on(inbox::send(&paths.data_dir, &req))
}

/// Stores quiet mode's end and tells a running app; prints `{"quiet_until": … | null,
/// "app": "told" | "not running"}`.
pub fn quiet(paths: &Paths, args: &QuietArgs) -> Result<Value, CoreError> {
    let what = QuietFor::parse(&args.what)?;
    let store = Store::open(paths.db_path())?;
    manners::quiet(&store, &SystemClock, what)?;
    // As stored: RFC 3339 to the second, or null.
    let until = yui_core::settings::get(&store, manners::QUIET_UNTIL_KEY)?;
    drop(store);
    let told = runtime()?
        .block_on(inbox::send(&paths.data_dir, &Request::Recheck))
        .is_ok();
    Ok(json!({
        "quiet_until": until,
        "app": if told { "told" } else { "not running" },
    }))
}
