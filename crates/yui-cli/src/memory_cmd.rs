//! `yui memory`: a character's long-term memories (docs/memory.md) — list, search, add, edit,
//! pin, forget (one or all), export, what the last turn recalled, pause — and `extract`, which
//! runs an extraction now against the backend a turn would use (`--base-url`, `--model`,
//! `YUI_API_KEY` as `yui turn`). JSON on stdout.

use crate::turn_cmd::{resolve_preset, runtime, setup, TargetArgs};
use clap::Subcommand;
use serde_json::{json, Value};
use yui_core::longterm::{self, Edit, Kind, NewMemory};
use yui_core::paths::Paths;
use yui_core::{Clock, CoreError, Store, SystemClock};

#[derive(Debug, Subcommand)]
pub enum MemoryCmd {
    /// Every memory of a character, pinned first.
    List {
        /// Preset id (default: the main preset).
        #[arg(long, value_name = "ID")]
        preset: Option<String>,
    },
    /// Memories best matching a query (BM25 over words and CJK trigrams).
    Search {
        #[arg(long, value_name = "TEXT")]
        query: String,
        #[arg(long, value_name = "ID")]
        preset: Option<String>,
        #[arg(long, default_value_t = 10)]
        limit: usize,
    },
    /// Add a memory by hand.
    Add {
        #[arg(long)]
        text: String,
        /// fact | preference | event | relationship | summary
        #[arg(long, default_value = "fact")]
        kind: String,
        /// 1 (trivia) to 5 (never forget).
        #[arg(long, default_value_t = 3)]
        importance: u8,
        /// Always recalled; never changed by extraction.
        #[arg(long)]
        pinned: bool,
        #[arg(long, value_name = "ID")]
        preset: Option<String>,
    },
    /// Change a memory's text, kind or importance.
    Edit {
        /// The memory's id.
        id: i64,
        #[arg(long)]
        text: Option<String>,
        #[arg(long)]
        kind: Option<String>,
        #[arg(long)]
        importance: Option<u8>,
    },
    /// Pin a memory (`--off` unpins it).
    Pin {
        id: i64,
        #[arg(long)]
        off: bool,
    },
    /// Forget one memory (by id), or every memory of a character (`--all`).
    Forget {
        id: Option<i64>,
        #[arg(long)]
        all: bool,
        #[arg(long, value_name = "ID")]
        preset: Option<String>,
    },
    /// Every memory of a character as one JSON document (on stdout, or saved with --out).
    Export {
        #[arg(long, value_name = "ID")]
        preset: Option<String>,
        /// Save the document to this file (a folder: a dated file in it) and print where.
        #[arg(long, value_name = "FILE")]
        out: Option<std::path::PathBuf>,
    },
    /// The memories the character's last turn recalled.
    Used {
        #[arg(long, value_name = "ID")]
        preset: Option<String>,
    },
    /// Pause remembering for a character (`--off` resumes); recall goes on.
    Pause {
        #[arg(long, value_name = "ID")]
        preset: Option<String>,
        #[arg(long)]
        off: bool,
    },
    /// Run an extraction now: read what was said since the last one into memories.
    Extract {
        #[command(flatten)]
        target: TargetArgs,
    },
}

fn kind(s: &str) -> Result<Kind, CoreError> {
    s.parse()
}

pub fn run(paths: &Paths, cmd: &MemoryCmd) -> Result<Value, CoreError> {
    if let MemoryCmd::Extract { target } = cmd {
        return extract(paths, target);
    }
    let store = Store::open(paths.db_path())?;
    let preset = |p: &Option<String>| resolve_preset(&store, p.as_deref());
    let now = SystemClock.now();
    Ok(match cmd {
        MemoryCmd::List { preset: p } => json!(longterm::list(&store, &preset(p)?)?),
        MemoryCmd::Search {
            query,
            preset: p,
            limit,
        } => {
            let id = preset(p)?;
            json!(store.read(|c| longterm::search::memories(c, &id, query, None, *limit))?)
        }
        MemoryCmd::Add {
            text,
            kind: k,
            importance,
            pinned,
            preset: p,
        } => {
            let new = NewMemory {
                kind: kind(k)?,
                text: text.clone(),
                importance: *importance,
                pinned: *pinned,
                sources: Vec::new(),
            };
            json!(longterm::add(&store, now, &preset(p)?, &new)?)
        }
        MemoryCmd::Edit {
            id,
            text,
            kind: k,
            importance,
        } => {
            let edit = Edit {
                text: text.clone(),
                kind: k.as_deref().map(kind).transpose()?,
                importance: *importance,
                pinned: None,
            };
            json!(longterm::edit(&store, now, *id, &edit)?)
        }
        MemoryCmd::Pin { id, off } => json!(longterm::pin(&store, now, *id, !off)?),
        MemoryCmd::Forget {
            id: Some(id),
            all: false,
            ..
        } => json!({"forgotten": [longterm::forget(&store, *id)?]}),
        MemoryCmd::Forget {
            id: None,
            all: true,
            preset: p,
        } => json!({"forgotten": longterm::forget_all(&store, &preset(p)?)?}),
        MemoryCmd::Forget { .. } => return Err(CoreError::invalid(
            "name one memory id, or --all (with --preset) to forget every memory of a character",
        )),
        MemoryCmd::Export {
            preset: p,
            out: None,
        } => longterm::export(&store, now, &preset(p)?)?,
        MemoryCmd::Export {
            preset: p,
            out: Some(out),
        } => json!(longterm::export::save(
            &store,
            now,
            &preset(p)?,
            Some(out.as_path())
        )?),
        MemoryCmd::Used { preset: p } => json!(longterm::last_used(&store, &preset(p)?)?),
        MemoryCmd::Pause { preset: p, off } => {
            let id = preset(p)?;
            let cfg = longterm::config::set_paused(&store, &id, !off)?;
            json!({"preset_id": id, "paused": cfg.paused.contains(&id)})
        }
        MemoryCmd::Extract { .. } => unreachable!("handled above"),
    })
}

fn extract(paths: &Paths, target: &TargetArgs) -> Result<Value, CoreError> {
    let s = setup(paths, target)?;
    let rt = runtime()?;
    let http = yui_core::turn::sse::http_client(&s.timeouts)
        .map_err(|e| CoreError::internal(e.to_string()))?;
    let cancel = yui_core::turn::CancellationToken::new();
    let clock = s.clock.clone();
    let report = rt.block_on(longterm::extract::run(
        &s.store,
        move || clock.now(),
        &http,
        &s.backend,
        &s.preset,
        &cancel,
    ))?;
    Ok(json!({"preset_id": s.preset, "report": report}))
}
