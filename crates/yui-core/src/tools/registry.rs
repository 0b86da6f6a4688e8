//! The one place that declares which tools each window gets, and the start-up check of the
//! registry.
//!
//! Order: generate_express first (when the vocabulary is not empty), then the tools the window
//! hands over — main: rate_relation, address_character, browser, body_action, look; a pet window
//! under Tauri: rate_relation, address_character, browser; the browser build: rate_relation,
//! address_character; the phone window: none. Then, in the main and pet windows only, the
//! configured command client tools the character selected ([`super::command`]), in file order,
//! then the tools of the user's MCP servers it selected ([`super::mcp`]), server by server —
//! the same in every switch state.
//!
//! [`ToolRegistry::for_window`] builds the list from current state (vocabulary, open presets) at
//! every turn. Wiring a tool is one line in [`executor`] (or [`generate_express`]).

use super::*;
use crate::error::{CoreError, Result};
use std::collections::HashSet;
use std::sync::Arc;

/// The names a window kind hands to the registry, in declaration order (after generate_express).
pub fn handed_tools(kind: WindowKind) -> &'static [&'static str] {
    match kind {
        WindowKind::Main => &[RATE_RELATION, ADDRESS_CHARACTER, BROWSER, BODY_ACTION, LOOK],
        WindowKind::Pet => &[RATE_RELATION, ADDRESS_CHARACTER, BROWSER],
        WindowKind::BrowserBuild => &[RATE_RELATION, ADDRESS_CHARACTER],
        WindowKind::Phone => &[],
    }
}

pub use super::address::TurnToolState;

/// What building a window's tools may read.
pub struct RegistryEnv<'a> {
    pub store: &'a Store,
    /// The calling window's preset.
    pub preset_id: &'a str,
    pub window: WindowKind,
    /// (id, name) of the other presets open now: targets of rate_relation / address_character.
    pub others: Vec<(String, String)>,
    pub state: Arc<TurnToolState>,
    /// The configured command tools (the ones read last, see [`super::command::current`]).
    pub client_tools: Arc<super::command::Loaded>,
    /// The MCP servers (the ones read last, see [`super::mcp::current`]).
    pub mcp: Arc<super::mcp::Hub>,
    /// The process's avatar executor (body_action, look); `None`: not available here.
    pub avatar: Option<Arc<crate::avatar::Avatar>>,
}

/// Whether a window kind declares configured command tools.
pub fn declares_client_tools(kind: WindowKind) -> bool {
    matches!(kind, WindowKind::Main | WindowKind::Pet)
}

impl<'a> RegistryEnv<'a> {
    /// Read the other open presets from the store.
    pub fn load(store: &'a Store, preset_id: &'a str, window: WindowKind) -> Result<Self> {
        // Named like rate_relation's `toward` (crate::target_names: `user (character)`).
        let others = crate::target_names::labels(
            crate::presets::list_open(store)?
                .into_iter()
                .filter(|p| p.id != preset_id)
                .map(|p| (p.id, p.name)),
        );
        Ok(Self {
            store,
            preset_id,
            window,
            others,
            state: Arc::default(),
            client_tools: super::command::current(),
            mcp: super::mcp::current(),
            avatar: crate::avatar::installed(),
        })
    }
}

/// The executor for a handed tool name, one line per tool. `None` is "declared without an
/// executor" and fails the start-up check.
pub fn executor(name: &str, env: &RegistryEnv<'_>) -> Option<Arc<dyn ClientTool>> {
    Some(match name {
        RATE_RELATION => super::relation::RateRelationTool::shared(env.store, env.preset_id),
        ADDRESS_CHARACTER => Arc::new(super::address::AddressCharacter::new(
            env.others.clone(),
            env.state.clone(),
        )),
        BROWSER => Arc::new(super::browser::BrowserTool::new()),
        BODY_ACTION => super::avatar::BodyActionTool::shared(env.avatar.clone()),
        LOOK => super::avatar::LookTool::shared(env.avatar.clone()),
        _ => return None,
    })
}

/// generate_express built from the vocabulary loaded now; `None` when the vocabulary is empty.
pub fn generate_express(env: &RegistryEnv<'_>) -> Option<Arc<dyn ClientTool>> {
    super::express::ExpressTool::for_turn(env.store)
}

/// A window's tools for one turn, checked.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn ClientTool>>,
    state: Arc<TurnToolState>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ToolRegistry {
    /// Build and check the list a window declares this turn.
    pub fn for_window(env: &RegistryEnv<'_>) -> Result<Self> {
        Self::build(env, handed_tools(env.window), executor)
    }

    /// Build from a handed list and an executor lookup (the start-up check runs on the result).
    pub fn build(
        env: &RegistryEnv<'_>,
        handed: &[&str],
        executor: impl Fn(&str, &RegistryEnv<'_>) -> Option<Arc<dyn ClientTool>>,
    ) -> Result<Self> {
        let mut tools = Vec::new();
        if let Some(express) = generate_express(env) {
            tools.push(express);
        }
        for name in handed {
            match executor(name, env) {
                Some(t) if t.name() == *name => tools.push(t),
                Some(t) => {
                    return Err(CoreError::internal(format!(
                        "tool registry: the executor for {name} is named {}",
                        t.name()
                    )))
                }
                None => {
                    return Err(CoreError::internal(format!(
                        "tool registry: {name} is declared for the {:?} window but has no executor",
                        env.window
                    )))
                }
            }
        }
        // remind: where the character's proactive switch is on (docs/proactive.md).
        if declares_client_tools(env.window)
            && crate::manners::character_on(env.store, env.preset_id)
        {
            tools.push(Arc::new(super::remind::Remind));
        }
        if declares_client_tools(env.window) {
            tools.extend(super::command::tools_for(
                env.store,
                env.preset_id,
                &env.client_tools,
            )?);
            tools.extend(super::mcp::tools_for(
                env.store,
                env.preset_id,
                &env.mcp,
                &env.client_tools,
            )?);
        }
        Self::from_tools(tools, env.state.clone())
    }

    /// Check a list: no duplicate names, no tool other than the first named like
    /// generate_express (any name ending in it plays a cue). The express tool, when present,
    /// must come first.
    pub fn from_tools(tools: Vec<Arc<dyn ClientTool>>, state: Arc<TurnToolState>) -> Result<Self> {
        let mut seen = HashSet::new();
        for (i, t) in tools.iter().enumerate() {
            let name = t.name();
            if name.is_empty() {
                return Err(CoreError::internal(
                    "tool registry: a tool has an empty name",
                ));
            }
            if !seen.insert(name.to_string()) {
                return Err(CoreError::internal(format!(
                    "tool registry: duplicate tool name {name}"
                )));
            }
            if name.ends_with(GENERATE_EXPRESS) && !(i == 0 && name == GENERATE_EXPRESS) {
                return Err(CoreError::internal(format!(
                    "tool registry: {name} collides with generate_express"
                )));
            }
        }
        Ok(Self { tools, state })
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }
    pub fn get(&self, name: &str) -> Option<&Arc<dyn ClientTool>> {
        self.tools.iter().find(|t| t.name() == name)
    }
    pub fn tools(&self) -> &[Arc<dyn ClientTool>] {
        &self.tools
    }
    pub fn state(&self) -> &Arc<TurnToolState> {
        &self.state
    }
    /// The switches of the declared tools, in declaration order (the `tool switches:` line).
    pub fn switches(&self) -> Vec<Switch> {
        self.tools.iter().filter_map(|t| t.switch()).collect()
    }

    /// `tools[]` for Chat Completions (nested). `None` for an empty registry: no `tools` key.
    pub fn chat_tools(&self) -> Option<Value> {
        self.schema(crate::turn::transport::chat::wire::tool_schema)
    }
    /// `tools[]` for Responses (flattened, `"strict": false`). `None` for an empty registry.
    pub fn responses_tools(&self) -> Option<Value> {
        self.schema(crate::turn::transport::responses::wire::tool_schema)
    }
    fn schema(&self, f: fn(&str, &str, &Value) -> Value) -> Option<Value> {
        if self.tools.is_empty() {
            return None;
        }
        Some(Value::Array(
            self.tools
                .iter()
                .map(|t| f(t.name(), &t.description(), &t.parameters()))
                .collect(),
        ))
    }
}

/// The start-up check: build every window kind's registry once and fail loudly on a broken one.
pub fn startup_check(store: &Store, preset_id: &str) -> Result<()> {
    for kind in [
        WindowKind::Main,
        WindowKind::Pet,
        WindowKind::BrowserBuild,
        WindowKind::Phone,
    ] {
        let env = RegistryEnv::load(store, preset_id, kind)?;
        ToolRegistry::for_window(&env)?;
    }
    Ok(())
}
