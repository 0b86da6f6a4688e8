//! The engine of the backend's built-in model: when `yui model use` chose one (the backend's
//! `builtin` field), [`configured`] builds its supervisor from the settings (the program, the
//! threads, the idle stop) and the installed file, and [`shared`] keeps one for the whole
//! process (the app's characters and `yui converse` share one engine; a changed setting makes
//! a new one and stops the old). Nothing starts here: the first turn that needs it calls
//! [`super::engine::Engine::ensure`].

use super::engine::{self, Engine, Spec};
use super::{local, Config};
use crate::clock::SharedClock;
use crate::error::{CoreError, ErrorCode, Result};
use crate::paths::Paths;
use crate::store::Store;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long the engine may take to load a model and answer `/health`.
pub const START_TIMEOUT: Duration = Duration::from_secs(180);

/// The supervisor of the configured built-in model's engine; `None` when the backend is a
/// server of the user's.
pub fn configured(store: &Store, paths: &Paths, clock: SharedClock) -> Result<Option<Engine>> {
    let Some(name) = crate::backend::load(store)?.builtin else {
        return Ok(None);
    };
    let cfg = Config::load(store)?;
    let catalog = cfg.catalog()?;
    let model = local::installed(paths, &catalog, &name).ok_or_else(|| {
        CoreError::not_found(format!(
            "The built-in model {name} is not installed; `yui model pull {name}` downloads it."
        ))
    })?;
    let (program, _) = engine::locate(cfg.engine_path.as_deref())
        .map_err(|e| CoreError::new(ErrorCode::Backend, e.to_string()))?;
    Ok(Some(Engine::new(
        Spec {
            program,
            model,
            alias: name,
            threads: cfg.threads(),
            ctx: engine::DEFAULT_CTX,
            idle_stop: Duration::from_secs(cfg.idle_stop_s),
            start_timeout: START_TIMEOUT,
            run_file: Some(local::dir(paths).join(local::RUN_FILE)),
        },
        clock,
    )))
}

/// How often the process-wide engine asks the clock whether it has been idle long enough.
pub const IDLE_CHECK: Duration = Duration::from_secs(15);

static SHARED: Mutex<Option<Arc<Engine>>> = Mutex::new(None);

/// The process-wide engine of the configured built-in model (made on first use, with its idle
/// watch on the current tokio runtime); `None` when the backend is a server of the user's. When
/// the settings changed since, the old engine is stopped and a new one made.
pub fn shared(store: &Store, paths: &Paths, clock: SharedClock) -> Result<Option<Arc<Engine>>> {
    let Some(fresh) = configured(store, paths, clock)? else {
        let old = SHARED.lock().unwrap_or_else(|p| p.into_inner()).take();
        stop_later(old);
        return Ok(None);
    };
    let mut slot = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = slot.as_ref().filter(|e| e.spec() == fresh.spec()) {
        return Ok(Some(e.clone()));
    }
    let engine = Arc::new(fresh);
    if tokio::runtime::Handle::try_current().is_ok() {
        engine.watch_idle(IDLE_CHECK);
    }
    stop_later(slot.replace(engine.clone()));
    Ok(Some(engine))
}

fn stop_later(old: Option<Arc<Engine>>) {
    if let (Some(old), Ok(rt)) = (old, tokio::runtime::Handle::try_current()) {
        rt.spawn(async move {
            old.stop().await;
        });
    }
}

/// Stop the process-wide engine, if one runs (the app's exit, the end of a CLI command that used
/// it: a static is never dropped, so its child would outlive the process otherwise).
pub async fn stop_shared() {
    let old = SHARED.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(e) = old {
        e.stop().await;
    }
}
