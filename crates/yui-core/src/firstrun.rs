//! First run: the main character greets the user and, where no backend was set up yet, looks for
//! a model server on this computer (`discover.rs`). Exactly one found → it becomes the backend;
//! none or several → the greeting says what to do, with a button to Settings → Backend.
//!
//! "First run" means `yui.first_run` is not done and `yui.backend` was never stored (someone who
//! set the backend up with `yui backend set` before launching is not greeted as new). The greeting
//! is given once: the key is marked done before the probes run.

use crate::discover::{self, Candidate, Found};
use crate::error::Result;
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

/// On first run: mark it done, probe `candidates`, use the one server found, and return the
/// greeting; `None` on any later run.
/// [`greet`], asked by a window of `kind`: only the main character greets (`None` elsewhere).
pub async fn greet_in(
    store: &Store,
    kind: Option<crate::window::WindowKind>,
    candidates: &[Candidate],
) -> Result<Option<Greeting>> {
    if kind != Some(crate::window::WindowKind::Main) {
        return Ok(None);
    }
    greet(store, candidates).await
}

pub async fn greet(store: &Store, candidates: &[Candidate]) -> Result<Option<Greeting>> {
    if !is_first_run(store)? {
        return Ok(None);
    }
    settings::set(store, settings::FIRST_RUN, &json!({"done": true}))?;
    let name = crate::presets::main_preset(store)
        .map(|p| p.name)
        .unwrap_or_else(|_| "Yui".into());
    let found = discover::discover_local(candidates).await;
    let hi = format!("Hi, I'm {name}!");
    let (text, open_backend) = match found.as_slice() {
        [] => (format!("{hi} {INSTALL_HINT}"), true),
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
    }))
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
