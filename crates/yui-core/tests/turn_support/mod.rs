//! Test support for the turn engine: the test kit's scripted SSE server (re-exported), test
//! tools, and a harness that runs one turn and collects its events.
// Each turn test binary uses its own part of this module.
#![allow(dead_code)]

#[allow(unused_imports)]
pub use yui_testkit::sse::*;

pub mod backends;

use async_trait::async_trait;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use yui_core::backend::Transport;
use yui_core::clock::{ManualClock, SharedClock};
use yui_core::tools::registry::{ToolRegistry, TurnToolState};
use yui_core::tools::{ClientTool, ToolContext, ToolError, ToolOutput};
use yui_core::turn::{self, Timeouts, TurnDeps, TurnEvent, TurnOutcome, TurnRequest};
use yui_core::{Store, WindowKind};

// ------------------------------------------------------------------ test tools

/// A question tool: answers a fixed result.
pub struct Answer {
    pub name: &'static str,
    pub result: ToolOutput,
    pub calls: Arc<AtomicUsize>,
}

impl Answer {
    pub fn new(name: &'static str, result: &str) -> Self {
        Self {
            name,
            result: ToolOutput::text(result),
            calls: Arc::default(),
        }
    }
}

#[async_trait]
impl ClientTool for Answer {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> String {
        format!("test tool {}", self.name)
    }
    fn parameters(&self) -> Value {
        json!({"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false})
    }
    async fn call(
        &self,
        _a: Value,
        _c: &ToolContext,
        _x: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(self.result.clone())
    }
}

/// The cue-only expression tool.
pub struct Express {
    pub calls: Arc<AtomicUsize>,
}

#[async_trait]
impl ClientTool for Express {
    fn name(&self) -> &str {
        "generate_express"
    }
    fn description(&self) -> String {
        "Place an expression cue".into()
    }
    fn parameters(&self) -> Value {
        json!({"type":"object","properties":{"emotion_id":{"type":"string","enum":["happy","sad"]}},"additionalProperties":false})
    }
    fn one_way(&self) -> bool {
        true
    }
    async fn call(
        &self,
        _a: Value,
        _c: &ToolContext,
        _x: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::text("ok"))
    }
}

/// What a [`Scripted`] tool does when called.
pub enum Act {
    /// Throw: the turn answers `error: <message>`.
    Throw(&'static str),
    /// Sleep far past `wait` (until the turn's guard or cancellation ends it).
    Hang { wait: Duration },
    /// Answer `done` after `takes`.
    AnswerAfter(Duration),
}

/// A question tool with scripted behaviour (throwing, hanging, slow).
pub struct Scripted {
    name: &'static str,
    act: Act,
}

/// A tool whose execution throws (`throws`).
pub fn throws() -> Arc<dyn ClientTool> {
    Arc::new(Scripted {
        name: "throws",
        act: Act::Throw("disk on fire"),
    })
}

/// A tool that sleeps past its wait (`slow`).
pub fn slow(wait: Duration) -> Arc<dyn ClientTool> {
    Arc::new(Scripted {
        name: "slow",
        act: Act::Hang { wait },
    })
}

/// A question tool that takes `takes` to answer `done` (`sleeper`).
pub fn sleeper(takes: Duration) -> Arc<dyn ClientTool> {
    Arc::new(Scripted {
        name: "sleeper",
        act: Act::AnswerAfter(takes),
    })
}

#[async_trait]
impl ClientTool for Scripted {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> String {
        format!("test tool {}", self.name)
    }
    fn parameters(&self) -> Value {
        json!({"type":"object","properties":{}})
    }
    fn wait(&self) -> Duration {
        match self.act {
            Act::Hang { wait } => wait,
            _ => Duration::from_secs(10),
        }
    }
    async fn call(
        &self,
        _a: Value,
        _c: &ToolContext,
        x: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        match self.act {
            Act::Throw(message) => Err(ToolError::Failed(message.into())),
            Act::Hang { .. } => tokio::select! {
                _ = x.cancelled() => Err(ToolError::Failed("turn stopped".into())),
                _ = tokio::time::sleep(Duration::from_secs(30)) => Ok(ToolOutput::text("late")),
            },
            Act::AnswerAfter(takes) => {
                tokio::time::sleep(takes).await;
                Ok(ToolOutput::text("done"))
            }
        }
    }
}

pub fn registry(tools: Vec<Arc<dyn ClientTool>>) -> ToolRegistry {
    ToolRegistry::from_tools(tools, Arc::new(TurnToolState::default())).expect("registry")
}

/// The usual test registry: generate_express + lookup ("42").
pub fn express_and_lookup() -> (ToolRegistry, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let e = Express {
        calls: Arc::default(),
    };
    let l = Answer::new("lookup", "42");
    let (ec, lc) = (e.calls.clone(), l.calls.clone());
    (registry(vec![Arc::new(e), Arc::new(l)]), ec, lc)
}

// ------------------------------------------------------------------ harness

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub store: Store,
    pub clock: SharedClock,
}

impl Harness {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path().join("yui.sqlite3")).expect("store");
        let at = chrono::DateTime::parse_from_rfc3339("2026-11-30T10:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let clock: SharedClock = Arc::new(ManualClock::new(at, 3600));
        Self { dir, store, clock }
    }

    pub fn deps(&self, t: &Timeouts) -> TurnDeps {
        TurnDeps::new(self.store.clone(), self.clock.clone(), t).expect("deps")
    }

    /// A request with no persona and no client context, so bodies are exactly the contract's.
    pub fn request(&self, base_url: &str, transport: Transport, message: &str) -> TurnRequest {
        TurnRequest {
            turn_id: "t1".into(),
            preset_id: "yui".into(),
            window: WindowKind::Main,
            message: message.into(),
            instructions: None,
            context: None,
            backend: backends::backend(transport, base_url),
            timeouts: backends::short_waits(),
            history_limit: 40,
            addressed_by: None,
        }
    }

    /// Run one turn to its end; the events in order and the outcome.
    pub async fn run(
        &self,
        req: &TurnRequest,
        reg: &ToolRegistry,
    ) -> (Vec<TurnEvent>, TurnOutcome) {
        let (tx, mut rx) = mpsc::channel(4096);
        let cancel = CancellationToken::new();
        let deps = self.deps(&req.timeouts);
        let out = tokio::time::timeout(
            Duration::from_secs(20),
            turn::run(&deps, req, reg, &tx, &cancel),
        )
        .await
        .expect("turn must end by itself");
        drop(tx);
        let mut events = Vec::new();
        while let Some(e) = rx.recv().await {
            events.push(e);
        }
        (events, out)
    }

    /// The transcript of `yui`, as (role, text), cut replies included.
    pub fn transcript(&self) -> Vec<(String, String)> {
        yui_core::transcript::lines(&self.store, "yui", 100)
            .unwrap()
            .into_iter()
            .map(|e| (e.role.as_str().to_string(), e.text))
            .collect()
    }
}

impl Harness {
    /// What the next Chat Completions turn of `yui` carries as history, as (role, text).
    pub fn history(&self) -> Vec<(String, String)> {
        yui_core::transcript::recent(&self.store, "yui", 100)
            .unwrap()
            .into_iter()
            .map(|e| (e.role.as_str().to_string(), e.text))
            .collect()
    }
}

/// Events as JSON values (what `yui turn` prints), for exact comparison.
pub fn as_json(events: &[TurnEvent]) -> Vec<Value> {
    events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()
}

/// Events of one type, as JSON.
pub fn of_type(events: &[TurnEvent], kind: &str) -> Vec<Value> {
    as_json(events)
        .into_iter()
        .filter(|v| v["type"] == kind)
        .collect()
}
