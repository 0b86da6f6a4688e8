//! Client tools: the one [`ClientTool`] trait, the results they give the model, and the registry
//! that decides which tools each window declares.

pub(crate) mod address;
pub mod avatar;
pub mod browser;
pub mod command;
pub mod configured;
pub mod express;
pub mod input;
pub mod mcp;
pub mod registry;
pub mod relation;
pub mod remind;

use crate::clock::SharedClock;
use crate::store::Store;
use crate::window::WindowKind;
use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use crate::names::{
    ADDRESS_CHARACTER, BODY_ACTION, BROWSER, GENERATE_EXPRESS, LOOK, RATE_RELATION, REMIND,
};
pub use crate::output::ToolOutput;

/// A tool that failed in a way the contract does not name: the turn loop answers
/// `error: <message>` (the error's sentence); the cause stays as the source for the log.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ToolError {
    /// The store or another part of the core failed under the tool.
    #[error("{0}")]
    Core(#[from] crate::CoreError),
    /// The desktop failed under the tool (`what`: "screen capture").
    #[error("{what} failed: {source}")]
    Host {
        what: &'static str,
        #[source]
        source: crate::avatar::HostError,
    },
    /// The tool's blocking work stopped before it answered (it panicked, or the runtime is
    /// shutting down).
    #[error("{what} stopped: {source}")]
    Stopped {
        what: &'static str,
        #[source]
        source: std::sync::Arc<tokio::task::JoinError>,
    },
    /// Anything else, in words.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    /// `what`'s blocking task ended without an answer.
    pub fn stopped(what: &'static str, e: tokio::task::JoinError) -> Self {
        Self::Stopped {
            what,
            source: std::sync::Arc::new(e),
        }
    }
}

/// A switchable tool's switch (the `tool switches:` line lists these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Switch {
    /// Switch id as the contract names it (`browser`, `relations`, `screen`).
    pub id: &'static str,
    /// Settings key holding `{"enabled": bool}`.
    pub key: &'static str,
}

/// Everything a call may read about the turn it runs in.
#[derive(Clone)]
pub struct ToolContext {
    pub store: Store,
    pub clock: SharedClock,
    /// The calling window's preset.
    pub preset_id: String,
    pub window: WindowKind,
    /// Id of the turn in flight (per-turn rules key on it).
    pub turn_id: String,
    /// The call in flight, when the caller knows it (the turn engine does).
    pub call: CallScope,
}

/// Reports a running call's status line ("running notify_desktop…") to whoever shows it.
pub type ProgressFn = std::sync::Arc<dyn Fn(String) + Send + Sync>;

/// What a caller may tell a tool about one call. `Default` is "nothing known".
#[derive(Clone, Default)]
pub struct CallScope {
    /// The model's call id.
    pub call_id: Option<String>,
    /// Where the tool's status goes (the turn engine sends it as `TurnEvent::ToolStatus`).
    pub progress: Option<ProgressFn>,
}

impl CallScope {
    /// A call of a turn: its status lines go out as `TurnEvent::ToolStatus` on `tx` (dropped when
    /// the reader lags: a status line is not worth stalling the call for).
    pub fn to_events(
        call_id: &str,
        name: &str,
        tx: &tokio::sync::mpsc::Sender<crate::turn::TurnEvent>,
    ) -> Self {
        let (id, name, tx) = (call_id.to_string(), name.to_string(), tx.clone());
        Self {
            call_id: Some(call_id.to_string()),
            progress: Some(std::sync::Arc::new(move |status| {
                let _ = tx.try_send(crate::turn::TurnEvent::ToolStatus {
                    call_id: Some(id.clone()),
                    name: name.clone(),
                    status,
                });
            })),
        }
    }

    /// Report a status line, if anyone listens.
    pub fn report(&self, status: impl Into<String>) {
        if let Some(p) = &self.progress {
            p(status.into());
        }
    }
}

#[async_trait]
pub trait ClientTool: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> String;
    /// JSON-schema `parameters` object. Built from current state at every turn.
    fn parameters(&self) -> Value;
    /// Cue-only (`oneWay`): its result tells the model nothing.
    fn one_way(&self) -> bool {
        false
    }
    /// Whether a result is a failure. Default: starts with `error:`.
    fn failed(&self, result: &ToolOutput) -> bool {
        result.as_text().starts_with("error:")
    }
    /// The switch gating the tool, if any.
    fn switch(&self) -> Option<Switch> {
        None
    }
    /// How long the turn waits for this call before answering for it.
    fn wait(&self) -> std::time::Duration {
        std::time::Duration::from_secs(10)
    }
    /// Run the call. `cancel` fires when the turn is stopped.
    async fn call(
        &self,
        args: Value,
        ctx: &ToolContext,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError>;
}
