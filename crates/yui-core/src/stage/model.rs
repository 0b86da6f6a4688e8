//! The built-in model's downloads in the app (docs/built-in-model.md): the first run's offer in
//! the main character's bubble and Settings → Backend → Built-in model start one here. A pull
//! runs in the background (`model::download::pull`), tells every window that shows it its
//! progress as [`StageEvent::ModelPull`] (at most once per percent), can be cancelled, and when
//! verified may make the model the backend (like `yui model use`) and let the main character say
//! hello through it: a real turn on the built-in engine.

use super::{Inner, Origin, Stage, StageEvent, Window};
use crate::error::{CoreError, Result};
use crate::model::{self, catalog, download, local};
use crate::turn::CancellationToken;
use crate::window::WindowKind;
use serde::Serialize;
use std::sync::Arc;

/// Where a pull is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PullState {
    /// Bytes are coming (or the first try is under way).
    Downloading,
    /// The host did not answer; the pull tries again (`message` says when).
    Retrying,
    /// All bytes are there; the SHA-256 is being checked.
    Verifying,
    /// Verified and kept.
    Done,
    /// Verified and now the backend (`yui model use`).
    InUse,
    Failed,
    Cancelled,
}

/// What the windows show of a pull: the bubble's progress bar, Settings' row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelPull {
    pub name: String,
    pub state: PullState,
    pub done: u64,
    pub total: u64,
    /// 0-100.
    pub percent: u8,
    /// One plain sentence: why it failed, that it retries, or what happened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The host could not be reached: the windows offer the user's own file or a mirror.
    pub unreachable: bool,
}

/// What follows a verified download.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AfterPull {
    /// Keep the file (Settings' "Download").
    Keep,
    /// Make it the backend.
    Use,
    /// Make it the backend and let the main character say hello through it (the first run).
    Greet,
}

/// The trigger id of the hello turn after the first run's download.
pub const HELLO_TRIGGER: &str = "first_run";

/// The most the hello's reply may take, in tokens (with the user's own cap, the lower): a
/// greeting is one or two short sentences (about 30 tokens in English, more in other scripts),
/// and on a CPU-only engine each token is a moment the user waits before answering; a small
/// model that rambles would otherwise run to the backend's cap (512 by default).
pub const HELLO_MAX_TOKENS: u32 = 96;

/// Why the hello turn runs (its client context's `proactive:` line).
pub fn hello_reason(name: &str) -> String {
    format!("the user just downloaded {name} so that you can talk on this computer with no server; this is the first thing you say through it: greet the user warmly in one or two short sentences and ask what they would like to talk about")
}

/// The sentence when the download host cannot be reached: what the user can do instead.
pub fn unreachable_sentence(name: &str, host: &str) -> String {
    format!("I can't reach {host} to download {name} — give me a GGUF model file you already have, or set a download mirror in Settings → Backend.")
}

/// The running pulls, by model name: their stop and what they showed last.
pub(super) type Pulls =
    std::sync::Mutex<std::collections::HashMap<String, (CancellationToken, ModelPull)>>;

fn percent(done: u64, total: u64) -> u8 {
    u8::try_from(done.saturating_mul(100) / total.max(1)).unwrap_or(100)
}

impl Stage {
    /// Start downloading the catalog model `name` in the background (progress as
    /// [`StageEvent::ModelPull`]); `after` says what follows once it is verified. Refused in
    /// plain words for a name the catalog lacks or a pull of it already under way.
    pub fn model_pull(&self, name: &str, after: AfterPull) -> Result<ModelPull> {
        let inner = &self.0;
        let cfg = model::Config::load(&inner.store)?;
        let entry = cfg
            .catalog()?
            .into_iter()
            .find(|e| e.name == name)
            .ok_or_else(|| {
                CoreError::not_found(format!("There is no model named {name} in the catalog."))
            })?;
        let cancel = CancellationToken::new();
        let first = ModelPull {
            name: name.to_string(),
            state: PullState::Downloading,
            done: 0,
            total: entry.size,
            percent: 0,
            message: None,
            unreachable: false,
        };
        {
            let mut pulls = lock(&inner.pulls);
            if pulls.contains_key(name) {
                return Err(CoreError::invalid(format!(
                    "{name} is already being downloaded."
                )));
            }
            pulls.insert(name.to_string(), (cancel.clone(), first.clone()));
        }
        let job = download::Job {
            name: entry.name.clone(),
            url: catalog::with_mirror(&entry.url, cfg.mirror.as_deref()),
            size: entry.size,
            sha256: entry.sha256.clone(),
            dest: local::dir(&inner.paths).join(&entry.file),
        };
        inner.emit(StageEvent::ModelPull {
            pull: first.clone(),
        });
        let inner = inner.clone();
        tokio::spawn(async move {
            let last = run_pull(&inner, &job, &cancel, after).await;
            lock(&inner.pulls).remove(&job.name);
            inner.emit(StageEvent::ModelPull { pull: last.clone() });
            if last.state == PullState::InUse && after == AfterPull::Greet {
                hello(&inner, &job.name);
            }
        });
        Ok(first)
    }

    /// Make the installed model `name` the backend (`yui model use`); with `greet` the main
    /// character then says hello through it (the first run's "Use" button). The sentence.
    pub fn model_use(&self, name: &str, greet: bool) -> Result<String> {
        let sentence = model::use_model(&self.0.store, &self.0.paths, name)?;
        if greet {
            hello(&self.0, name);
        }
        Ok(sentence)
    }

    /// Cancel the download of `name` (its partial file stays for the next pull); whether one
    /// was running.
    pub fn model_cancel(&self, name: &str) -> bool {
        match lock(&self.0.pulls).get(name) {
            Some((stop, _)) => {
                stop.cancel();
                true
            }
            None => false,
        }
    }

    /// The pulls under way now, as they last showed (Settings opened mid-download).
    pub fn model_pulls(&self) -> Vec<ModelPull> {
        let mut out: Vec<ModelPull> = lock(&self.0.pulls)
            .values()
            .map(|(_, p)| p.clone())
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The pull itself; its last state.
async fn run_pull(
    inner: &Arc<Inner>,
    job: &download::Job,
    cancel: &CancellationToken,
    after: AfterPull,
) -> ModelPull {
    let mut shown = ModelPull {
        name: job.name.clone(),
        state: PullState::Downloading,
        done: 0,
        total: job.size,
        percent: 0,
        message: None,
        unreachable: false,
    };
    let client = match reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(15))
        .read_timeout(std::time::Duration::from_secs(60))
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            shown.state = PullState::Failed;
            shown.message = Some(format!("I could not start the download: {e}."));
            return shown;
        }
    };
    let progress_inner = inner.clone();
    let mut state = shown.clone();
    let mut report = move |p: download::Progress| {
        use download::Progress as P;
        let before = (state.state, state.percent);
        match p {
            P::Resumed { from: done, total } | P::Bytes { done, total } => {
                state.state = PullState::Downloading;
                state.done = done;
                state.total = total;
                state.percent = percent(done, total);
                state.message = None;
            }
            P::Retry {
                wait_ms, reason, ..
            } => {
                state.state = PullState::Retrying;
                // `reason` is a phrase ("the connection closed early", "could not connect").
                state.message = Some(format!(
                    "Download of {} interrupted ({reason}); trying again in {} s.",
                    state.name,
                    wait_ms.div_ceil(1000)
                ));
            }
            P::Verifying => {
                state.state = PullState::Verifying;
                state.percent = 100;
                state.done = state.total;
            }
            P::Verified => return,
        }
        if (state.state, state.percent) == before && state.state != PullState::Retrying {
            return;
        }
        if let Some((_, last)) = lock(&progress_inner.pulls).get_mut(&state.name) {
            *last = state.clone();
        }
        progress_inner.emit(StageEvent::ModelPull {
            pull: state.clone(),
        });
    };
    let result = download::pull(&client, job, inner.opts.pull_backoff, cancel, &mut report).await;
    shown.done = job.size;
    shown.percent = 100;
    match result {
        Ok(_) if after == AfterPull::Keep => {
            shown.state = PullState::Done;
            shown.message = Some(format!("{} is downloaded and verified.", job.name));
        }
        Ok(_) => match model::use_model(&inner.store, &inner.paths, &job.name) {
            Ok(sentence) => {
                shown.state = PullState::InUse;
                shown.message = Some(sentence);
            }
            Err(e) => {
                shown.state = PullState::Failed;
                shown.message = Some(e.message);
            }
        },
        Err(e) => {
            tracing::warn!(model = %job.name, error = %e, "the model download ended");
            shown.done = 0;
            shown.percent = 0;
            shown.state = match e {
                download::PullError::Cancelled { .. } => PullState::Cancelled,
                _ => PullState::Failed,
            };
            shown.message = Some(match &e {
                // The host never answered (not a 404 or the like: that is its own sentence).
                download::PullError::Unreachable { host, reason, .. }
                    if !reason.starts_with("the server answered") =>
                {
                    shown.unreachable = true;
                    unreachable_sentence(&job.name, host)
                }
                _ => e.to_string(),
            });
        }
    }
    shown
}

/// The main character's first words through the model just downloaded: a turn like a
/// proactive one (it plays in the main window), on the built-in engine.
fn hello(inner: &Arc<Inner>, name: &str) {
    let preset_id = match inner.shown().get(&Window::Main).cloned() {
        Some(id) => id,
        None => match crate::presets::main_preset(&inner.store) {
            Ok(p) => p.id,
            Err(e) => {
                tracing::warn!(error = %e.message, "no main character to say hello");
                return;
            }
        },
    };
    let reason = hello_reason(name);
    let origin = Origin::Proactive {
        trigger: HELLO_TRIGGER.to_string(),
        reason: reason.clone(),
    };
    let epoch = inner.chain().epoch;
    match super::run::start(
        inner,
        &preset_id,
        WindowKind::Main,
        &reason,
        origin,
        epoch,
        None,
        None,
    ) {
        Ok(turn) => {
            tracing::info!(model = name, %turn, "the first hello through the built-in model")
        }
        Err(e) => {
            tracing::warn!(model = name, error = %e.message, "the hello turn could not start")
        }
    }
}
