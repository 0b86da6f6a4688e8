//! `yui model`: the built-in model (docs/built-in-model.md). `list` shows the catalog, what is
//! installed and the GGUF files of LM Studio and llama.cpp found on this machine (JSON lines with
//! `--json`, plain words without); `pull` downloads and verifies one (progress on stderr; exit 0
//! once verified, 1 with one plain line otherwise; running it again resumes); `add` takes the
//! user's own GGUF (linked or copied: it says which); `use` makes the built-in engine the
//! backend; `rm` deletes one, never under a running engine.

use clap::Subcommand;
use std::io::Write;
use std::path::PathBuf;
use yui_core::model::{self, catalog, download, local};
use yui_core::paths::Paths;
use yui_core::{CoreError, Store};

#[derive(Debug, Subcommand)]
pub enum ModelCmd {
    /// The catalog, the installed models and the GGUF files found on this machine: name, file,
    /// size, sha256 and state (available | downloading | installed | in_use | found).
    List {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Download a catalog model and verify its size and SHA-256 (progress on stderr).
    Pull {
        name: String,
        /// Download from this host instead of the catalog's (for this run; the setting
        /// yui.model.mirror keeps one).
        #[arg(long, value_name = "URL")]
        mirror: Option<String>,
    },
    /// Add your own GGUF file (linked into the models folder when it is on the same disk,
    /// else copied).
    Add {
        file: PathBuf,
        #[arg(long)]
        name: Option<String>,
    },
    /// Make the built-in engine with this model the backend of every turn.
    Use { name: String },
    /// Delete a model and free its space (never the one a running engine uses).
    Rm { name: String },
}

fn line(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}

/// Run a `yui model` command; the exit code.
pub fn run(paths: &Paths, cmd: &ModelCmd) -> Result<u8, CoreError> {
    let store = Store::open(paths.db_path())?;
    let cfg = model::Config::load(&store)?;
    let catalog = cfg.catalog()?;
    match cmd {
        ModelCmd::List { json } => {
            let in_use = yui_core::backend::load(&store)?.builtin;
            let home = std::env::var_os("HOME").map(PathBuf::from);
            let look = local::Looking {
                in_use: in_use.as_deref(),
                mirror: cfg.mirror.as_deref(),
                home: home.as_deref(),
            };
            for m in local::list(paths, &catalog, look) {
                if *json {
                    line(&serde_json::to_string(&m)?);
                } else {
                    let state = serde_json::to_value(&m.state)?;
                    let state = state.as_str().unwrap_or("").replace('_', " ");
                    let partial = m
                        .partial
                        .map(|p| format!(", {} downloaded", catalog::human(p)))
                        .unwrap_or_default();
                    line(&format!(
                        "{}  {}  {}  {state}{partial}  ({})",
                        m.name,
                        catalog::human(m.size),
                        m.file,
                        m.path
                    ));
                }
            }
            Ok(0)
        }
        ModelCmd::Pull { name, mirror } => pull(paths, &cfg, &catalog, name, mirror.as_deref()),
        ModelCmd::Add { file, name } => {
            let r = local::add(paths, &catalog, file, name.as_deref())?;
            let how = if r.added.how == "linked" {
                "linked (the same file, no extra space)"
            } else {
                "copied"
            };
            line(&format!(
                "Added {} ({}), {how} from {} to {}.",
                r.added.name,
                catalog::human(r.added.size),
                r.added.from,
                r.path
            ));
            Ok(0)
        }
        ModelCmd::Use { name } => {
            line(&model::use_model(&store, paths, name)?);
            Ok(0)
        }
        ModelCmd::Rm { name } => {
            let r = local::remove(paths, &catalog, name)?;
            match r.still_at {
                Some(from) => line(&format!(
                    "Removed {name}; its file is still at {from}, so no space was freed."
                )),
                None => line(&format!(
                    "Removed {name} ({} freed).",
                    catalog::human(r.freed)
                )),
            }
            Ok(0)
        }
    }
}

/// `yui model pull`: the plain sentence and exit 1 on any failure.
fn pull(
    paths: &Paths,
    cfg: &model::Config,
    catalog: &[catalog::Entry],
    name: &str,
    mirror: Option<&str>,
) -> Result<u8, CoreError> {
    let Some(e) = catalog.iter().find(|e| e.name == name) else {
        let names: Vec<&str> = catalog.iter().map(|e| e.name.as_str()).collect();
        eprintln!(
            "There is no model named {name} in the catalog; it has {}.",
            names.join(", ")
        );
        return Ok(1);
    };
    let job = download::Job {
        name: e.name.clone(),
        url: catalog::with_mirror(&e.url, mirror.or(cfg.mirror.as_deref())),
        size: e.size,
        sha256: e.sha256.clone(),
        dest: local::dir(paths).join(&e.file),
    };
    let rt = crate::turn_cmd::runtime()?;
    let client = reqwest_client()?;
    let cancel = yui_core::turn::CancellationToken::new();
    let c = cancel.clone();
    let result = rt.block_on(async move {
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                c.cancel();
            }
        });
        let mut last_pct = u64::MAX;
        download::pull(
            &client,
            &job,
            download::Backoff::default(),
            &cancel,
            &mut |p| progress(&job.name, &p, &mut last_pct),
        )
        .await
    });
    match result {
        Ok(path) => {
            line(&format!(
                "{name} is downloaded and verified: {}.",
                path.display()
            ));
            Ok(0)
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(1)
        }
    }
}

/// One stderr line per percent, and one for each retry and check.
fn progress(name: &str, p: &download::Progress, last_pct: &mut u64) {
    use download::Progress as P;
    let text = match p {
        P::Resumed { from, total } => format!(
            "{name}: resuming at {} of {}",
            catalog::human(*from),
            catalog::human(*total)
        ),
        P::Bytes { done, total } => {
            let pct = done.saturating_mul(100) / (*total).max(1);
            if pct == *last_pct {
                return;
            }
            *last_pct = pct;
            format!(
                "{name}: {pct}% ({} of {})",
                catalog::human(*done),
                catalog::human(*total)
            )
        }
        P::Retry {
            attempt,
            wait_ms,
            reason,
        } => format!(
            "{name}: {reason}; trying again in {:.1} s (try {})",
            *wait_ms as f64 / 1000.0,
            attempt + 1
        ),
        P::Verifying => format!("{name}: checking the SHA-256"),
        P::Verified => format!("{name}: verified"),
    };
    eprintln!("{text}");
}

fn reqwest_client() -> Result<reqwest::Client, CoreError> {
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(15))
        .read_timeout(std::time::Duration::from_secs(60))
        .build()
        .map_err(|e| CoreError::internal(format!("cannot make the HTTP client: {e}")))
}
