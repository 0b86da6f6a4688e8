//! The engine of the backend's built-in model: when `yui model use` chose one (the backend's
//! `builtin` field), [`configured`] builds its supervisor from the settings (the program, the
//! threads, the idle stop) and the installed file. Nothing starts here: the first turn that
//! needs it calls [`super::engine::Engine::ensure`].

use super::engine::{self, Engine, Spec};
use super::{local, Config};
use crate::clock::SharedClock;
use crate::error::{CoreError, ErrorCode, Result};
use crate::paths::Paths;
use crate::store::Store;
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
    let program = engine::find_program(cfg.engine_path.as_deref()).ok_or_else(|| {
        CoreError::new(
            ErrorCode::Backend,
            engine::EngineError::NotFound.to_string(),
        )
    })?;
    Ok(Some(Engine::new(
        Spec {
            program,
            model,
            threads: cfg.threads(),
            ctx: engine::DEFAULT_CTX,
            idle_stop: Duration::from_secs(cfg.idle_stop_s),
            start_timeout: START_TIMEOUT,
            run_file: Some(local::dir(paths).join(local::RUN_FILE)),
        },
        clock,
    )))
}
