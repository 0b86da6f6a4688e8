//! First run: the main character greets the user and, where no backend was set up yet, looks for
//! a model server on this computer (`discover.rs`). Exactly one found → it becomes the backend;
//! none or several → the greeting says what to do, with a button to Settings → Backend.
//!
//! When no server answers, the greeting offers the built-in model instead (docs/built-in-model.md):
//! a model already installed but not in use ("Use smollm2"), else the catalog's model for this
//! machine's memory ("Download qwen3-1.7b (1.1 GB)"; the lighter one under 8 GB) — its name, size
//! and the memory it needs, and one button. The button starts the stage's download
//! (`Stage::model_pull` with `AfterPull::Greet`): progress in the bubble, then the model becomes
//! the backend and the character says hello through it.
//!
//! "First run" means `yui.first_run` is not done and `yui.backend` was never stored (someone who
//! set the backend up with `yui backend set` before launching is not greeted as new). The greeting
//! is given once: the key is marked done before the probes run.

use crate::discover::{self, Candidate, Found};
use crate::error::Result;
use crate::model::{self, catalog, local};
use crate::paths::Paths;
use crate::settings;
use crate::store::Store;
use rusqlite::OptionalExtension;
use serde::Serialize;
use serde_json::json;

/// What the main window shows on first run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Greeting {
    pub text: String,
    /// Show the "Open Settings → Backend" button.
    pub open_backend: bool,
    /// The servers that answered.
    pub found: Vec<Found>,
    /// None answered: the built-in model the bubble offers, with its one button.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offer: Option<Offer>,
    /// The display choice's one-time note (`display::noted`), said after the greeting, or
    /// alone (`text` empty) on a later run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What the offer's button does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OfferAction {
    /// Download the catalog model (`Stage::model_pull`, then use it and say hello).
    Download,
    /// Use the model already installed (`Stage::model_use`, then say hello).
    Use,
}

/// The built-in model offered on first run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Offer {
    pub action: OfferAction,
    pub name: String,
    /// Bytes to download (or of the file).
    pub size: u64,
    /// Memory it needs, where the catalog says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ram: Option<u64>,
    /// The button's words.
    pub label: String,
}

/// The sentence for no server found: what to install, in one sentence.
pub const INSTALL_HINT: &str = "I can't find a model on this computer yet — install Ollama from ollama.com and run \"ollama pull llama3.2\", or tell me where your model server is in Settings → Backend.";

fn stored(store: &Store, key: &str) -> Result<bool> {
    store.read(|c| {
        Ok(
            c.query_row("SELECT 1 FROM settings WHERE key = ?1", [key], |_| Ok(()))
                .optional()?
                .is_some(),
        )
    })
}

/// Whether this is the first run (see the module docs).
pub fn is_first_run(store: &Store) -> Result<bool> {
    let done = settings::get(store, settings::FIRST_RUN)?
        .get("done")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    Ok(!done && !stored(store, settings::BACKEND)?)
}

/// [`greet`], asked by a window of `kind`: only the main character greets (`None` elsewhere).
/// The display `choice`'s one-time note (`display::noted`) rides along the first time: after
/// the greeting on a first run, alone on a later one.
pub async fn greet_in(
    store: &Store,
    paths: &Paths,
    kind: Option<crate::window::WindowKind>,
    candidates: &[Candidate],
    choice: Option<&crate::display::Choice>,
) -> Result<Option<Greeting>> {
    if kind != Some(crate::window::WindowKind::Main) {
        return Ok(None);
    }
    let greeting = greet(store, paths, candidates).await?;
    let note = match choice {
        Some(c) => crate::display::noted::take(store, c)?.map(str::to_string),
        None => None,
    };
    Ok(match (greeting, note) {
        (g, None) => g,
        (Some(g), note) => Some(Greeting { note, ..g }),
        (None, note) => Some(Greeting {
            text: String::new(),
            open_backend: false,
            found: Vec::new(),
            offer: None,
            note,
        }),
    })
}

/// On first run: mark it done, probe `candidates`, use the one server found (or offer the
/// built-in model when none answers), and return the greeting; `None` on any later run.
pub async fn greet(
    store: &Store,
    paths: &Paths,
    candidates: &[Candidate],
) -> Result<Option<Greeting>> {
    if !is_first_run(store)? {
        return Ok(None);
    }
    settings::set(store, settings::FIRST_RUN, &json!({"done": true}))?;
    let name = crate::presets::main_preset(store)
        .map(|p| p.name)
        .unwrap_or_else(|_| "Yui".into());
    let found = discover::discover_local(candidates).await;
    let hi = format!("Hi, I'm {name}!");
    let mut offer = None;
    let (text, open_backend) = match found.as_slice() {
        [] => match offer_for(store, paths, model::sys::total_memory()) {
            Some((o, sentence)) => {
                offer = Some(o);
                (format!("{hi} {sentence}"), false)
            }
            None => (format!("{hi} {INSTALL_HINT}"), true),
        },
        [one] => use_found(store, &hi, one)?,
        many => {
            let names: Vec<&str> = many.iter().map(|f| f.name.as_str()).collect();
            (
                format!(
                    "{hi} I found {} on this computer — choose the one I should use in Settings → Backend.",
                    join_names(&names)
                ),
                true,
            )
        }
    };
    tracing::info!(found = found.len(), "first run: greeted");
    Ok(Some(Greeting {
        text,
        open_backend,
        found,
        offer,
        note: None,
    }))
}

/// The built-in model to offer when no server answered, and the sentence that offers it: one
/// installed but not in use first, else the catalog's for a machine of `memory` bytes. `None`
/// when the catalog cannot be read and nothing is installed.
pub fn offer_for(store: &Store, paths: &Paths, memory: Option<u64>) -> Option<(Offer, String)> {
    let cfg = model::Config::load(store).ok()?;
    let entries = match cfg.catalog() {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e.message, "first run: the model catalog cannot be read");
            Vec::new()
        }
    };
    let look = local::Looking {
        mirror: cfg.mirror.as_deref(),
        ..Default::default()
    };
    if let Some(m) = local::list(paths, &entries, look)
        .into_iter()
        .find(|m| m.state == local::State::Installed)
    {
        let sentence = format!(
            "I found no model server here, but {} ({}) is on this computer — shall I talk through it?",
            m.name,
            catalog::human(m.size)
        );
        let offer = Offer {
            action: OfferAction::Use,
            label: format!("Use {}", m.name),
            name: m.name,
            size: m.size,
            ram: m.ram,
        };
        return Some((offer, sentence));
    }
    let e = catalog::for_memory(&entries, memory)?;
    let sentence = format!(
        "I found no model server here, but I can run my own model: {} ({} download, needs about {} of memory).",
        e.name,
        catalog::human(e.size),
        catalog::human(e.ram)
    );
    Some((
        Offer {
            action: OfferAction::Download,
            name: e.name.clone(),
            size: e.size,
            ram: Some(e.ram),
            label: format!("Download {} ({})", e.name, catalog::human(e.size)),
        },
        sentence,
    ))
}

fn use_found(store: &Store, hi: &str, f: &Found) -> Result<(String, bool)> {
    let change = crate::backend::BackendChange {
        base_url: Some(f.base_url.clone()),
        model: f.models.first().cloned(),
        transport: Some(crate::backend::Transport::ChatCompletions),
        ..Default::default()
    };
    crate::backend::update(store, &change)?;
    Ok(match f.models.first() {
        Some(m) if !f.needs_key => (
            format!(
                "{hi} I found {} on this computer and will talk through {m}. Click me to say something.",
                f.name
            ),
            false,
        ),
        _ if f.needs_key => (
            format!(
                "{hi} I found {} on this computer, but it wants an API key — store it in Settings → Backend.",
                f.name
            ),
            true,
        ),
        _ => (
            format!(
                "{hi} I found {} on this computer, but it has no model loaded yet — load one, then pick it in Settings → Backend.",
                f.name
            ),
            true,
        ),
    })
}

/// `A`, `A and B`, `A, B and C`.
fn join_names(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
