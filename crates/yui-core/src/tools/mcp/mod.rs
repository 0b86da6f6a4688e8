//! MCP servers as client tools (docs/mcp.md): the servers the user lists in
//! `<OS config dir>/yui/mcp.json` (stdio or streamable HTTP, Claude Desktop's format), reached with
//! the official Rust SDK (rmcp). Each server tool becomes a client tool `mcp__<server>__<tool>`,
//! selected per character like command tools and declared after them in the main and pet windows.
//!
//! The hub read last is held here ([`current`]): read at start ([`init`], which takes
//! `--no-client-tools` too) without starting anything; servers start in the background when a
//! window that declares tools opens ([`warm`]) or at their first call; "Reload tools" stops them
//! and reads the file again ([`reload`]). Every turn declares the tools of the servers listed by
//! then: the CLI's turn first gives servers still starting a short grace (`yui.mcp`,
//! `settings::mcp_grace`, [`Hub::settle_for_turn`]); a tool call waits for its own server only
//! ([`Hub::server_of`]).

pub mod config;
pub mod http;
pub mod listing;
pub mod result;
pub mod server;
pub(crate) mod tool;

pub use config::{McpConfig, ServerDef};
pub use server::{Server, State};
pub use tool::McpTool;

use super::command::{select, Loaded};
use super::ClientTool;
use crate::error::Result;
use crate::store::Store;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The servers of one read of `mcp.json`.
pub struct Hub {
    pub config: McpConfig,
    pub servers: Vec<Arc<Server>>,
    /// `--no-client-tools`: listed, never started or declared.
    pub disabled: bool,
    /// [`warm`] was called: a reload starts the new servers at once too.
    warmed: AtomicBool,
}

impl Default for Hub {
    fn default() -> Self {
        Self::new(McpConfig::default(), false, &HashSet::new())
    }
}

impl Hub {
    /// Servers for `config`; `taken` are names their tools may not take (built-in, command tools).
    pub fn new(config: McpConfig, disabled: bool, taken: &HashSet<String>) -> Self {
        let taken = Arc::new(taken.clone());
        let servers = config
            .servers
            .iter()
            .map(|d| Server::new(d.clone(), taken.clone()))
            .collect();
        Self {
            config,
            servers,
            disabled,
            warmed: AtomicBool::new(false),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Server>> {
        self.servers.iter().find(|s| s.def.name == name)
    }

    /// Start every server not started yet, in parallel, in the background (on the current tokio
    /// runtime, else the one given to [`set_runtime`]; nothing without either).
    pub fn warm(&self) {
        let Some(rt) = tokio::runtime::Handle::try_current()
            .ok()
            .or_else(|| RUNTIME.get().cloned())
        else {
            return;
        };
        if self.disabled {
            return;
        }
        self.warmed.store(true, Ordering::Relaxed);
        for s in &self.servers {
            s.warm(&rt);
        }
    }

    /// Start every server and wait (at most `limit`) until none is still starting: what the CLI
    /// does before it lists the servers.
    pub async fn settle(&self, limit: Duration) {
        if self.disabled {
            return;
        }
        self.warm();
        wait_started(self.servers.iter(), limit).await;
    }

    /// The server whose tools are named like `tool` (`mcp__<server>__…`; the longest such
    /// prefix, should one server's name start another's).
    pub fn server_of(&self, tool: &str) -> Option<&Arc<Server>> {
        self.servers
            .iter()
            .filter(|s| tool.starts_with(&s.def.prefix()))
            .max_by_key(|s| s.def.name.len())
    }

    /// Start `server` alone and wait for it (at most its own start timeout): what a tool call
    /// needs, and nothing of the other servers.
    pub async fn settle_one(&self, server: &Arc<Server>) {
        if self.disabled {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            server.warm(&rt);
        }
        // A little past its timeout: the start's own failure reports why.
        let limit = server.def.timeout() + Duration::from_secs(1);
        wait_started(std::iter::once(server), limit).await;
    }

    /// Start every server and wait at most `grace` for those still starting: what a turn does
    /// before it declares the tools. Returns the servers not ready by then (their tools are not
    /// declared this turn), which the log names too.
    pub async fn settle_for_turn(&self, grace: Duration) -> Vec<String> {
        if self.disabled {
            return Vec::new();
        }
        self.warm();
        wait_started(self.servers.iter(), grace).await;
        let late: Vec<String> = self
            .servers
            .iter()
            .filter(|s| matches!(s.state(), State::Idle | State::Starting))
            .map(|s| s.def.name.clone())
            .collect();
        if !late.is_empty() {
            tracing::warn!(
                servers = %late.join(", "),
                grace_ms = grace.as_millis() as u64,
                "mcp: still starting after the turn's grace; their tools are not declared this turn"
            );
        }
        late
    }

    /// Stop every server (reload, exit).
    pub async fn stop(&self) {
        futures_util::future::join_all(self.servers.iter().map(|s| s.stop())).await;
    }

    /// Every tool listed by now, with whether it is declared by default: (name, default).
    pub fn known(&self) -> Vec<(String, bool)> {
        self.tools()
            .map(|t| (t.def.name.clone(), t.server.def.default_enabled))
            .collect()
    }

    /// Every tool listed by now, server by server in file order.
    pub fn tools(&self) -> impl Iterator<Item = McpTool> + '_ {
        self.servers.iter().flat_map(|s| {
            s.listing()
                .tools
                .clone()
                .into_iter()
                .map(move |def| McpTool {
                    server: s.clone(),
                    def,
                })
        })
    }
}

/// Wait (at most `limit`) until none of `servers` is still starting.
async fn wait_started(servers: impl Iterator<Item = &Arc<Server>>, limit: Duration) {
    let waits = servers.map(|s| {
        let mut rx = s.watch();
        async move {
            let _ = rx
                .wait_for(|st| !matches!(st, State::Idle | State::Starting))
                .await;
        }
    });
    let _ = tokio::time::timeout(limit, futures_util::future::join_all(waits)).await;
}

static CURRENT: RwLock<Option<Arc<Hub>>> = RwLock::new(None);
static RUNTIME: std::sync::OnceLock<tokio::runtime::Handle> = std::sync::OnceLock::new();

/// The runtime servers start on when [`warm`] is called outside one (the app's window code).
pub fn set_runtime(rt: tokio::runtime::Handle) {
    let _ = RUNTIME.set(rt);
}
static DISABLED: RwLock<bool> = RwLock::new(false);

/// At start: remember `--no-client-tools` and read `mcp.json` (nothing starts).
pub fn init(disabled: bool) -> Arc<Hub> {
    *DISABLED.write().unwrap_or_else(|p| p.into_inner()) = disabled;
    install(config::load_default())
}

/// Hold the servers of `config` as the current ones (the previous ones are not stopped: see
/// [`reload`]).
pub fn install(config: McpConfig) -> Arc<Hub> {
    for d in &config.diagnostics {
        tracing::warn!("mcp.json: {d}");
    }
    let disabled = *DISABLED.read().unwrap_or_else(|p| p.into_inner());
    let hub = Arc::new(Hub::new(config, disabled, &taken_names()));
    *CURRENT.write().unwrap_or_else(|p| p.into_inner()) = Some(hub.clone());
    hub
}

/// Names no server tool may take: the built-in tools and the command tools read last.
fn taken_names() -> HashSet<String> {
    let mut taken: HashSet<String> = super::command::config::BUILT_IN
        .iter()
        .map(|s| s.to_string())
        .collect();
    taken.extend(
        super::command::current()
            .definitions
            .iter()
            .map(|d| d.name.clone()),
    );
    taken
}

/// The servers read last (none before [`init`]).
pub fn current() -> Arc<Hub> {
    CURRENT
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .unwrap_or_default()
}

/// A window that declares tools opened: start the servers in the background.
pub fn warm() {
    current().warm();
}

/// "Reload tools": stop the servers, read `mcp.json` again, and start the new ones at once when
/// the old ones had been started.
pub async fn reload() -> Arc<Hub> {
    let old = current();
    old.stop().await;
    let hub = install(config::load_default());
    if old.warmed.load(Ordering::Relaxed) {
        hub.warm();
    }
    hub
}

/// Stop every server (the app or the CLI is exiting).
pub async fn shutdown() {
    current().stop().await;
}

/// The server tools `preset_id` declares, in file order (none when disabled). A name a command
/// tool read since has taken is left out.
pub fn tools_for(
    store: &Store,
    preset_id: &str,
    hub: &Hub,
    commands: &Loaded,
) -> Result<Vec<Arc<dyn ClientTool>>> {
    if hub.disabled {
        return Ok(Vec::new());
    }
    let chosen: HashSet<String> = select::picked(&hub.known(), &select::get(store, preset_id)?)
        .into_iter()
        .collect();
    Ok(hub
        .tools()
        .filter(|t| chosen.contains(&t.def.name) && commands.get(&t.def.name).is_none())
        .map(|t| Arc::new(t) as Arc<dyn ClientTool>)
        .collect())
}

/// What Settings → Tools and `yui tools list` show of the servers: each with its state, its
/// tools and who declares them, and the diagnostics.
pub fn report(store: &Store, hub: &Hub) -> Result<Value> {
    let known = hub.known();
    let mut chosen: Vec<(String, Vec<String>)> = Vec::new();
    for p in crate::presets::list(store)? {
        let names = if hub.disabled {
            Vec::new()
        } else {
            select::picked(&known, &select::get(store, &p.id)?)
        };
        chosen.push((p.id, names));
    }
    let servers: Vec<Value> = hub
        .servers
        .iter()
        .map(|s| {
            let listing = s.listing();
            let mut v = serde_json::to_value(s.def.as_ref()).unwrap_or(Value::Null);
            let state = s.state();
            v["state"] = json!(state.word());
            v["reason"] = json!(state.reason());
            v["diagnostics"] = json!(listing.diagnostics);
            v["tools"] = Value::Array(
                listing
                    .tools
                    .iter()
                    .map(|t| {
                        json!({
                            "name": t.name, "tool": t.tool, "description": t.description,
                            "enabledFor": chosen.iter()
                                .filter(|(_, n)| n.contains(&t.name))
                                .map(|(id, _)| id.clone())
                                .collect::<Vec<_>>(),
                        })
                    })
                    .collect(),
            );
            v
        })
        .collect();
    Ok(json!({
        "path": hub.config.path,
        "disabled": hub.disabled,
        "diagnostics": hub.config.diagnostics,
        "servers": servers,
    }))
}

/// Problems `yui tools check` reports: the file's diagnostics, servers that could not start (call
/// [`Hub::settle`] first), and tools that could not be declared.
pub fn check(hub: &Hub) -> Vec<String> {
    let mut out = hub.config.diagnostics.clone();
    for s in &hub.servers {
        let name = &s.def.name;
        match s.state() {
            State::Failed(r) => out.push(format!("{name}: could not start: {r}")),
            State::Stopped(r) => out.push(format!("{name}: stopped: {r}")),
            State::Starting => out.push(format!("{name}: still starting")),
            _ => {}
        }
        out.extend(
            s.listing()
                .diagnostics
                .iter()
                .map(|d| format!("{name}: {d}")),
        );
    }
    out
}
