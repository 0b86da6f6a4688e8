//! Command client tools: trusted executables the user configures in
//! `<OS config dir>/yui/client-tools.json`, selected per character, declared after the built-in
//! tools of the main and pet windows, and run over the version 4 frames (docs/command-tools.md).
//!
//! The definitions read last are held here ([`current`]): read at start ([`init`], which also
//! takes `--no-client-tools`) and again on "Reload tools" ([`reload`]); every turn builds its
//! tools from them, so a reload reaches the next turn. A process that never called [`init`] (a
//! test, a tool) has no command tools.

pub mod config;
pub mod protocol;
pub mod run;
pub mod select;

pub use config::{Definition, Diagnostic, Loaded};
pub use select::Selection;

use super::{ClientTool, ToolContext, ToolError, ToolOutput};
use crate::error::Result;
use crate::store::Store;
use async_trait::async_trait;
use serde_json::{json, Value};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

static CURRENT: RwLock<Option<Arc<Loaded>>> = RwLock::new(None);
static DISABLED: RwLock<bool> = RwLock::new(false);

/// At start: remember `--no-client-tools` and read the config.
pub fn init(disabled: bool) -> Arc<Loaded> {
    *DISABLED.write().unwrap_or_else(|p| p.into_inner()) = disabled;
    reload()
}

/// Read the config again ("Reload tools"); the next turn declares what it gives.
pub fn reload() -> Arc<Loaded> {
    install(config::load_default())
}

/// Hold `loaded` as the current definitions (keeping the `--no-client-tools` state).
pub fn install(mut loaded: Loaded) -> Arc<Loaded> {
    loaded.disabled = *DISABLED.read().unwrap_or_else(|p| p.into_inner());
    let loaded = Arc::new(loaded);
    *CURRENT.write().unwrap_or_else(|p| p.into_inner()) = Some(loaded.clone());
    for d in &loaded.diagnostics {
        tracing::warn!("client tools: {d}");
    }
    loaded
}

/// The definitions read last (none before [`init`]).
pub fn current() -> Arc<Loaded> {
    CURRENT
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .unwrap_or_default()
}

/// The tools `preset_id` declares from `loaded`, in file order (none when disabled).
pub fn tools_for(
    store: &Store,
    preset_id: &str,
    loaded: &Loaded,
) -> Result<Vec<Arc<dyn ClientTool>>> {
    if loaded.disabled {
        return Ok(Vec::new());
    }
    let selection = select::get(store, preset_id)?;
    Ok(select::selected(loaded, &selection)
        .into_iter()
        .map(|d| Arc::new(CommandTool::new(d)) as Arc<dyn ClientTool>)
        .collect())
}

/// One configured command, as a client tool.
#[derive(Debug, Clone)]
pub struct CommandTool {
    def: Arc<Definition>,
    cfg: run::RunConfig,
}

impl CommandTool {
    pub fn new(def: Arc<Definition>) -> Self {
        Self {
            def,
            cfg: run::RunConfig::default(),
        }
    }

    pub fn with_config(def: Arc<Definition>, cfg: run::RunConfig) -> Self {
        Self { def, cfg }
    }

    pub fn definition(&self) -> &Definition {
        &self.def
    }

    /// A whole call: schema check, then the run. Every answer is the one string the model gets.
    pub async fn execute(
        &self,
        args: &Value,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> String {
        let validator = match jsonschema::validator_for(&self.def.parameters) {
            Ok(v) => v,
            Err(e) => {
                return format!("error: invalid arguments: the tool's schema is unusable: {e}")
            }
        };
        if let Err(detail) = run::check_args(&validator, args) {
            return format!("error: invalid arguments: {detail}");
        }
        let ids = run::CallIds {
            session_id: ctx.turn_id.clone(),
            agent_id: ctx.preset_id.clone(),
            call_id: ctx.call.call_id.clone().unwrap_or_else(|| {
                format!(
                    "call-{}",
                    CALL_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                )
            }),
        };
        run::run_call(&self.def, args, &ids, &ctx.call, self.cfg, cancel).await
    }
}

static CALL_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

#[async_trait]
impl ClientTool for CommandTool {
    fn name(&self) -> &str {
        &self.def.name
    }
    fn description(&self) -> String {
        self.def.description.clone()
    }
    fn parameters(&self) -> Value {
        self.def.parameters.clone()
    }
    /// Past the configured timeout by the stop's grace and a margin, so the tool's own
    /// `error: <name> timed out …` answers, not the turn's generic guard.
    fn wait(&self) -> Duration {
        self.def.timeout() + self.cfg.grace + self.cfg.drain + Duration::from_secs(1)
    }
    async fn call(
        &self,
        args: Value,
        ctx: &ToolContext,
        cancel: CancellationToken,
    ) -> std::result::Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Text(self.execute(&args, ctx, &cancel).await))
    }
}

/// Problems found by `yui tools check` beyond the file's own diagnostics: a command that cannot
/// be started as configured.
pub fn check(loaded: &Loaded) -> Vec<Diagnostic> {
    let mut out = loaded.diagnostics.clone();
    let path = std::env::var_os("PATH");
    for d in &loaded.definitions {
        let found = if d.command.contains('/') {
            is_executable(&d.program)
        } else {
            crate::paths::find_program(&d.command, path.as_deref()).is_some()
        };
        if !found {
            let index = None;
            out.push(Diagnostic {
                index,
                name: Some(d.name.clone()),
                message: if d.command.contains('/') {
                    format!("{}: no executable file there", d.program.display())
                } else {
                    format!("{}: not found on PATH", d.command)
                },
            });
        }
    }
    out
}

fn is_executable(p: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    p.is_file()
}

/// What settings and `yui tools list` show: every definition with its diagnostics and which
/// characters declare it, the file's diagnostics, and each character's selection.
pub fn report(store: &Store, loaded: &Loaded) -> Result<Value> {
    let presets = crate::presets::list(store)?;
    let mut per_preset = Vec::new();
    let mut chosen: Vec<(String, Vec<String>)> = Vec::new();
    for p in &presets {
        let sel = select::get(store, &p.id)?;
        let names: Vec<String> = if loaded.disabled {
            Vec::new()
        } else {
            select::selected(loaded, &sel)
                .iter()
                .map(|d| d.name.clone())
                .collect()
        };
        per_preset.push(json!({
            "id": p.id, "name": p.name, "selection": sel.kind(), "list": sel.list(),
            "enabled": names,
        }));
        chosen.push((p.id.clone(), names));
    }
    let problems = check(loaded);
    let definitions: Vec<Value> = loaded
        .definitions
        .iter()
        .map(|d| {
            let mut v = serde_json::to_value(d.as_ref()).unwrap_or(Value::Null);
            v["diagnostics"] = json!(problems
                .iter()
                .filter(|x| x.index.is_none() && x.name.as_deref() == Some(d.name.as_str()))
                .map(|x| x.message.clone())
                .collect::<Vec<_>>());
            v["enabledFor"] = json!(chosen
                .iter()
                .filter(|(_, n)| n.contains(&d.name))
                .map(|(id, _)| id.clone())
                .collect::<Vec<_>>());
            v
        })
        .collect();
    let skipped: Vec<String> = problems.iter().map(|x| x.to_string()).collect();
    Ok(json!({
        "path": loaded.path,
        "disabled": loaded.disabled,
        "definitions": definitions,
        "diagnostics": skipped,
        "presets": per_preset,
    }))
}
