//! `yui doctor`: check the configured (or given) backend — reachable, key, model, streamed
//! replies and tool calls on both transports, the round trip — and say which transport to use and
//! whether expression cues will work. Plain lines by default; `--json` prints one object
//! `{"checks":[{"name","ok","detail"}…],"transport":…,"cues":…}`. The exit code is 0 whenever the
//! report was made (a failing backend is a finding, not a failed command).

use clap::Args;
use yui_core::backend::Transport;
use yui_core::doctor::{self, Overrides};
use yui_core::paths::Paths;
use yui_core::{CoreError, Store};

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Base URL to check (default: the configured one).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Model to check (default: the configured one).
    #[arg(long)]
    pub model: Option<String>,
    /// Preferred transport, chat_completions | responses, or realtime for the realtime checks
    /// (default: the configured one).
    #[arg(long, value_parser = crate::backend_cmd::parse_transport)]
    pub transport: Option<Transport>,
    /// The realtime server's WebSocket URL (default: the configured one, else the base URL's
    /// /realtime).
    #[arg(long)]
    pub realtime_url: Option<String>,
    /// Print one JSON object instead of lines.
    #[arg(long)]
    pub json: bool,
}

pub fn run(paths: &Paths, args: &DoctorArgs) -> Result<u8, CoreError> {
    let store = Store::open(paths.db_path())?;
    let overrides = Overrides {
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        transport: args.transport,
        realtime_url: args.realtime_url.clone(),
        ..Default::default()
    }
    .with_env_key();
    let rt = crate::turn_cmd::runtime()?;
    let report = rt.block_on(doctor::run_configured(&store, paths, &overrides));
    // The built-in engine the doctor started goes with the command.
    rt.block_on(yui_core::model::builtin::stop_shared());
    let report = report?;
    // Speech checks only when voice is configured (docs/voice.md).
    let speech = if yui_core::voice::check::configured(&store)? {
        Some(rt.block_on(yui_core::voice::check::run(&store, paths)))
    } else {
        None
    };
    if args.json {
        let mut v = serde_json::to_value(&report)?;
        if let Some(s) = &speech {
            v["speech"] = serde_json::to_value(s)?;
        }
        println!("{}", serde_json::to_string(&v)?);
    } else {
        print!("{}", report.text());
        for c in speech.iter().flatten() {
            let mark = if c.ok { "ok  " } else { "FAIL" };
            println!("{mark} {}: {}", c.name, c.detail);
        }
    }
    Ok(0)
}
