//! The round-trip loop: one turn over Chat Completions or Responses, every rule of the contract's
//! "Tool-call round trip".
//!
//! - Chat Completions: fragments are accumulated per call index and held until a chunk carries
//!   `finish_reason` (or the stream ends); the held calls then run in index order.
//! - Responses: each `function_call` runs once, on the first of `output_item.added`,
//!   `function_call_arguments.done`, `output_item.done` (or, failing all, `response.completed`)
//!   that carries its complete arguments.
//! - Cues play when their call runs, before any round trip. Results go back when a question tool
//!   ran, or when only cue-only tools ran and the model stopped to wait (Chat: no text and
//!   `finish_reason: "tool_calls"`; Responses: no text). At most [`MAX_TOOL_ROUND_TRIPS`].
//! - A name outside the registry runs on the backend: tool status only, no result.
//! - Responses calls left unanswered are stored with the response id (see [`super::chain`]).
//!
//! The engine appends the user's message to the transcript before the first request (so it stays
//! even when the backend is dead) and the turn's speech at the end.

use super::chain;
use super::events::{Addressed, Cue, TurnEvent, TurnStatus};
use super::sse::{self, evidence, BackendError, SseEvent, SseStream, Timeouts};
use super::wire::{chat as wchat, responses as wresp};
use super::MAX_TOOL_ROUND_TRIPS;
use crate::backend::{BackendConfig, Transport};
use crate::clock::SharedClock;
use crate::context::ClientContext;
use crate::error::{CoreError, Result};
use crate::store::Store;
use crate::tools::registry::{RegistryEnv, ToolRegistry};
use crate::tools::{ClientTool, ToolContext, ToolOutput, GENERATE_EXPRESS};
use crate::transcript::{self, Role};
use crate::window::WindowKind;
use serde::Serialize;
use serde_json::{json, Value};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// Transcript lines a Chat Completions turn carries as history.
pub const HISTORY_LIMIT: usize = 40;
/// Capacity of a turn's event channel (the engine waits when the reader is this far behind).
pub const EVENT_BUFFER: usize = 1024;

/// The note a Chat Completions tool message carries when its images follow.
pub const IMAGE_NOTE_ONE: &str = "[the image follows in the next user message]";
pub const IMAGE_NOTE_MANY: &str = "[the images follow in the next user message]";

/// Where a turn goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Backend {
    pub transport: Transport,
    /// e.g. `http://127.0.0.1:8080/v1` (the paths `/chat/completions`, `/responses` are added).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub sampling: crate::backend::Sampling,
}

impl Backend {
    /// The backend configured in settings (`yui.backend`) with the stored API key.
    pub fn configured(store: &Store, paths: &crate::paths::Paths) -> Result<Self> {
        let cfg = crate::backend::load(store)?;
        Ok(Self::from_config(&cfg, crate::backend::api_key(paths)))
    }

    pub fn from_config(cfg: &BackendConfig, api_key: Option<String>) -> Self {
        Self {
            transport: cfg.transport,
            base_url: cfg.base_url.clone(),
            model: cfg.model.clone(),
            api_key,
            sampling: crate::backend::Sampling::of(cfg),
        }
    }

    pub fn endpoint(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url.trim_end_matches('/'))
    }
}

/// Everything one turn needs besides the tools.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    pub turn_id: String,
    pub preset_id: String,
    pub window: WindowKind,
    /// The user's message, as typed (stored as is; the request carries it after the context).
    pub message: String,
    /// System prompt (the preset's persona).
    pub instructions: Option<String>,
    pub context: Option<ClientContext>,
    pub backend: Backend,
    pub timeouts: Timeouts,
    pub history_limit: usize,
}

/// Long-lived things a turn borrows.
#[derive(Clone)]
pub struct TurnDeps {
    pub store: Store,
    pub clock: SharedClock,
    pub http: reqwest::Client,
}

impl TurnDeps {
    pub fn new(store: Store, clock: SharedClock, timeouts: &Timeouts) -> Result<Self> {
        let http = sse::http_client(timeouts)
            .map_err(|e| CoreError::new(crate::error::ErrorCode::Backend, e.to_string()))?;
        Ok(Self { store, clock, http })
    }
}

/// How a turn ended (the same fields as `turn_end`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnOutcome {
    pub status: TurnStatus,
    pub text: String,
    pub response_id: Option<String>,
    pub error: Option<String>,
    pub addressed: Option<Addressed>,
}

/// A running turn: its events, a way to stop it, and its outcome.
pub struct TurnHandle {
    pub turn_id: String,
    pub events: mpsc::Receiver<TurnEvent>,
    pub join: JoinHandle<TurnOutcome>,
    cancel: CancellationToken,
}

impl TurnHandle {
    /// Stop the turn: the upstream request is dropped at once and the turn ends `stopped`.
    pub fn stop(&self) {
        self.cancel.cancel();
    }
    /// A token that stops this turn (for a shell that keeps it apart from the handle).
    pub fn stopper(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

static TURN_SEQ: AtomicU64 = AtomicU64::new(0);

/// Build a turn from current state: the preset's persona, the window's tools (rebuilt now), the
/// client context (read now, from the clock passed in).
pub fn prepare(
    store: &Store,
    clock: &SharedClock,
    preset_id: &str,
    window: WindowKind,
    message: &str,
    backend: Backend,
) -> Result<(TurnRequest, ToolRegistry)> {
    let preset = crate::presets::get(store, preset_id)?;
    let env = RegistryEnv::load(store, preset_id, window)?;
    let registry = ToolRegistry::for_window(&env)?;
    let context = ClientContext::build(clock.as_ref(), store, preset_id, &registry);
    let turn_id = format!(
        "turn-{}-{}",
        clock.now().timestamp_millis(),
        TURN_SEQ.fetch_add(1, Ordering::Relaxed)
    );
    Ok((
        TurnRequest {
            turn_id,
            preset_id: preset_id.to_string(),
            window,
            message: message.to_string(),
            instructions: Some(preset.persona).filter(|p| !p.trim().is_empty()),
            context: Some(context),
            backend,
            timeouts: Timeouts::default(),
            history_limit: HISTORY_LIMIT,
        },
        registry,
    ))
}

/// Prepare and start a turn of `preset_id` in a `window` against the configured backend (and the
/// stored API key), with the default timeouts: the app's path from a chat input to a running turn.
pub fn start_configured(
    store: &Store,
    clock: &SharedClock,
    paths: &crate::paths::Paths,
    preset_id: &str,
    window: WindowKind,
    message: &str,
) -> Result<TurnHandle> {
    let backend = Backend::configured(store, paths)?;
    let (req, registry) = prepare(store, clock, preset_id, window, message, backend)?;
    let deps = TurnDeps::new(store.clone(), clock.clone(), &Timeouts::default())?;
    Ok(start(deps, req, registry))
}

/// Start a turn on the current tokio runtime.
pub fn start(deps: TurnDeps, req: TurnRequest, registry: ToolRegistry) -> TurnHandle {
    let (tx, rx) = mpsc::channel(EVENT_BUFFER);
    let cancel = CancellationToken::new();
    let turn_id = req.turn_id.clone();
    let c = cancel.clone();
    let join = tokio::spawn(async move { run(&deps, &req, &registry, &tx, &c).await });
    TurnHandle {
        turn_id,
        events: rx,
        join,
        cancel,
    }
}

/// Run one turn to its end, sending events to `tx`; the last event sent is `turn_end`.
pub async fn run(
    deps: &TurnDeps,
    req: &TurnRequest,
    registry: &ToolRegistry,
    tx: &mpsc::Sender<TurnEvent>,
    cancel: &CancellationToken,
) -> TurnOutcome {
    let mut eng = Engine::new(deps, req, registry, tx, cancel);
    let res = eng.run_turn().await;
    let (status, error) = match res {
        Ok(()) if eng.text.trim().is_empty() => (TurnStatus::Silent, None),
        Ok(()) => (TurnStatus::Ok, None),
        Err(End::Stopped) => (TurnStatus::Stopped, None),
        Err(End::Backend(e)) => {
            tracing::warn!(error = %e, turn = %req.turn_id, "the turn failed on the backend");
            (
                TurnStatus::Error,
                Some(super::plain::plain(&e, &req.backend)),
            )
        }
        Err(End::Failed(m)) => (TurnStatus::Error, Some(m)),
    };
    if !eng.text.trim().is_empty() {
        if let Err(e) = transcript::append(
            &deps.store,
            &req.preset_id,
            Role::Assistant,
            &eng.text,
            Some(&req.turn_id),
            deps.clock.now(),
        ) {
            tracing::warn!(error = %e, "the reply could not be stored in the transcript");
        }
    }
    let addressed = registry
        .state()
        .addressed
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let outcome = TurnOutcome {
        status,
        text: eng.text,
        response_id: eng.response_id,
        error,
        addressed,
    };
    let _ = tx
        .send(TurnEvent::TurnEnd {
            status: outcome.status,
            text: outcome.text.clone(),
            response_id: outcome.response_id.clone(),
            error: outcome.error.clone(),
            addressed: outcome.addressed.clone(),
        })
        .await;
    outcome
}

/// Run one response's already-open stream through the engine exactly as a turn reads it (speech,
/// held calls, cues, tool results), without requests, transcript or round trips. For the
/// benchmark (`benches/turn_stream.rs`) and stream-level tests. Returns the response's text.
#[doc(hidden)]
pub async fn replay_response(
    deps: &TurnDeps,
    req: &TurnRequest,
    registry: &ToolRegistry,
    stream: SseStream,
    tx: &mpsc::Sender<TurnEvent>,
) -> std::result::Result<String, String> {
    let cancel = CancellationToken::new();
    let mut eng = Engine::new(deps, req, registry, tx, &cancel);
    let res = match req.backend.transport {
        Transport::Responses => eng.responses_stream(stream).await.map(|r| r.text),
        _ => eng.chat_stream(stream).await.map(|r| r.text),
    };
    res.map_err(|e| match e {
        End::Stopped => "stopped".to_string(),
        End::Backend(b) => b.to_string(),
        End::Failed(m) => m,
    })
}

/// The speech-join rule: responses of a turn are joined with one space, unless the earlier text
/// ends in whitespace or 。！？ or the later text starts with whitespace.
pub fn join_speech(earlier: &str, later: &str) -> String {
    format!("{earlier}{}{later}", separator(earlier, later))
}

fn separator(earlier: &str, later: &str) -> &'static str {
    let no_space = earlier.is_empty()
        || later.is_empty()
        || earlier.ends_with(char::is_whitespace)
        || earlier.ends_with(['。', '！', '？'])
        || later.starts_with(char::is_whitespace);
    if no_space {
        ""
    } else {
        " "
    }
}

/// Why a turn stopped early.
enum End {
    Stopped,
    Backend(BackendError),
    Failed(String),
}

impl From<BackendError> for End {
    fn from(e: BackendError) -> Self {
        Self::Backend(e)
    }
}

/// A call as the stream delivered it.
struct Held {
    call_id: String,
    name: String,
    arguments: String,
}

/// A client call that ran (or failed to parse) and has a result for the model.
struct Answered {
    call_id: String,
    name: String,
    arguments: String,
    result: ToolOutput,
    one_way: bool,
}

impl Answered {
    fn responses_output(&self) -> Value {
        let output = match &self.result {
            ToolOutput::Text(t) => json!(t),
            ToolOutput::Images { text, images } => {
                let mut parts = vec![json!({"type": "input_text", "text": text})];
                parts.extend(
                    images
                        .iter()
                        .map(|u| json!({"type": "input_image", "image_url": u, "detail": "auto"})),
                );
                Value::Array(parts)
            }
        };
        json!({"type": "function_call_output", "call_id": self.call_id, "output": output})
    }
}

/// Extra time past a tool's [`ClientTool::wait`] before the turn answers for it, so a tool that
/// keeps its own deadline (browser: 32 s, answering `unknown: …`) answers with its own words.
pub const TOOL_WAIT_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Run one client call the way a turn does: in its own task, bounded by the tool's wait (plus
/// [`TOOL_WAIT_GRACE`]) and by `cancel`. A throw answers `error: <message>`, an overrun
/// `error: no answer within <wait>` (the tool's token is cancelled and it is left to finish on
/// its own). `None` when `cancel` fired.
pub async fn call_tool(
    tool: &Arc<dyn ClientTool>,
    args: Value,
    ctx: &ToolContext,
    cancel: &CancellationToken,
) -> Option<ToolOutput> {
    let wait = tool.wait();
    let token = cancel.child_token();
    let (t, ctx, c) = (tool.clone(), ctx.clone(), token.clone());
    let mut task = tokio::spawn(async move { t.call(args, &ctx, c).await });
    tokio::select! {
        biased;
        _ = cancel.cancelled() => None,
        r = tokio::time::timeout(wait + TOOL_WAIT_GRACE, &mut task) => Some(match r {
            Err(_) => {
                token.cancel();
                ToolOutput::text(format!("error: no answer within {}", human(wait)))
            }
            Ok(Err(join)) => {
                tracing::error!(tool = tool.name(), error = %join, "tool task failed");
                ToolOutput::text("error: the tool failed unexpectedly")
            }
            Ok(Ok(Err(e))) => ToolOutput::text(format!("error: {}", e.0)),
            Ok(Ok(Ok(out))) => out,
        }),
    }
}

/// Parse a call's arguments the way a turn does; `Err` is the result the call answers.
/// Empty arguments (some servers send none for a call without parameters) read as `{}`.
pub fn parse_call_arguments(arguments: &str) -> std::result::Result<Value, ToolOutput> {
    if arguments.trim().is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_str(arguments)
        .map_err(|m| ToolOutput::text(format!("error: arguments JSON parse failed: {m}")))
}

fn human(d: std::time::Duration) -> String {
    sse::human_ms(d.as_millis() as u64)
}

/// Whether a response said something. Whitespace alone (some models emit a newline before
/// their calls) is no text.
fn spoke(text: &str) -> bool {
    !text.trim().is_empty()
}

/// Whether the results of one response go back to the model: a question tool ran, or only
/// cue-only tools ran and the model stopped to wait for them (no text, and on Chat Completions
/// `finish_reason: "tool_calls"`, which `waited` carries).
fn results_go_back(answered: &[Answered], text: &str, waited: bool) -> bool {
    answered.iter().any(|a| !a.one_way) || (!answered.is_empty() && !spoke(text) && waited)
}

fn cue_of(args: &Value) -> Cue {
    let f = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
    Cue {
        emotion_id: f("emotion_id"),
        motion_id: f("motion_id"),
        emotion_text: f("emotion_text"),
        caption: f("caption"),
    }
}

struct Engine<'a> {
    deps: &'a TurnDeps,
    req: &'a TurnRequest,
    registry: &'a ToolRegistry,
    tx: &'a mpsc::Sender<TurnEvent>,
    cancel: &'a CancellationToken,
    tool_ctx: ToolContext,
    /// The turn's speech so far, joined by the rule.
    text: String,
    response_id: Option<String>,
}

impl<'a> Engine<'a> {
    fn new(
        deps: &'a TurnDeps,
        req: &'a TurnRequest,
        registry: &'a ToolRegistry,
        tx: &'a mpsc::Sender<TurnEvent>,
        cancel: &'a CancellationToken,
    ) -> Self {
        Self {
            deps,
            req,
            registry,
            tx,
            cancel,
            tool_ctx: ToolContext {
                store: deps.store.clone(),
                clock: deps.clock.clone(),
                preset_id: req.preset_id.clone(),
                window: req.window,
                turn_id: req.turn_id.clone(),
            },
            text: String::new(),
            response_id: None,
        }
    }

    async fn emit(&self, ev: TurnEvent) {
        // A reader that went away does not stop the turn: its speech is still stored.
        let _ = self.tx.send(ev).await;
    }

    async fn run_turn(&mut self) -> std::result::Result<(), End> {
        let req = self.req;
        let store = &self.deps.store;
        // History first, so it does not include the message of this turn.
        let history = if req.backend.transport == Transport::ChatCompletions {
            transcript::recent(store, &req.preset_id, req.history_limit)
                .map_err(|e| End::Failed(format!("the transcript could not be read: {e}")))?
        } else {
            Vec::new()
        };
        transcript::append(
            store,
            &req.preset_id,
            Role::User,
            &req.message,
            Some(&req.turn_id),
            self.deps.clock.now(),
        )
        .map_err(|e| End::Failed(format!("the message could not be stored: {e}")))?;
        if self.cancel.is_cancelled() {
            return Err(End::Stopped);
        }
        let user_text = match &req.context {
            Some(c) => c.wrap(&req.message),
            None => req.message.clone(),
        };
        match req.backend.transport {
            Transport::ChatCompletions => self.chat_turn(history, user_text).await,
            Transport::Responses => self.responses_turn(user_text).await,
            Transport::Push => Err(End::Failed(
                "the push transport does not run request turns; choose chat_completions or responses".into(),
            )),
        }
    }

    async fn speech(&mut self, response_text: &mut String, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let piece = if response_text.is_empty() {
            format!("{}{delta}", separator(&self.text, delta))
        } else {
            delta.to_string()
        };
        response_text.push_str(delta);
        self.text.push_str(&piece);
        self.emit(TurnEvent::Speech { delta: piece }).await;
    }

    async fn open(&self, url: &str, body: &Value) -> std::result::Result<SseStream, End> {
        let key = self.req.backend.api_key.as_deref();
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Err(End::Stopped),
            r = sse::post_sse(&self.deps.http, url, key, body, &self.req.timeouts) => r.map_err(End::from),
        }
    }

    /// The next SSE event, or `Stopped`. `cancelled` is created once per stream and reused: a
    /// fresh `cancelled()` future per event would register and drop a waiter every time.
    async fn next_event(
        s: &mut SseStream,
        cancelled: Pin<&mut WaitForCancellationFuture<'_>>,
    ) -> std::result::Result<Option<SseEvent>, End> {
        tokio::select! {
            biased;
            _ = cancelled => Err(End::Stopped),
            ev = s.next() => match ev {
                None => Ok(None),
                Some(Ok(e)) => Ok(Some(e)),
                Some(Err(e)) => Err(e.into()),
            },
        }
    }

    /// Run one delivered call: a cue for any name ending in generate_express, the registered
    /// tool for a registered name (answered), tool status for a backend one (not answered).
    async fn release(
        &mut self,
        call: Held,
        chat: bool,
    ) -> std::result::Result<Option<Answered>, End> {
        let parsed = parse_call_arguments(&call.arguments);
        // The cue plays first, registered or not: any name ending in generate_express is one.
        if call.name.ends_with(GENERATE_EXPRESS) {
            if let Ok(args) = &parsed {
                self.emit(TurnEvent::Cue {
                    call_id: call.call_id.clone(),
                    name: call.name.clone(),
                    cue: cue_of(args),
                })
                .await;
            }
        }
        let Some(tool) = self.registry.get(&call.name).cloned() else {
            // Responses shows backend calls from their own items (see `item_seen`).
            if chat {
                self.emit(TurnEvent::ToolStatus {
                    call_id: Some(call.call_id),
                    name: call.name,
                    status: "done".to_string(),
                })
                .await;
            }
            return Ok(None);
        };
        self.emit(TurnEvent::ToolCall {
            call_id: call.call_id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        })
        .await;
        let result = match parsed {
            Err(unparsed) => unparsed,
            Ok(args) => self.run_tool(&tool, args).await?,
        };
        self.emit(TurnEvent::ToolResult {
            call_id: call.call_id.clone(),
            name: call.name.clone(),
            result: result.clone(),
            failed: tool.failed(&result),
        })
        .await;
        Ok(Some(Answered {
            call_id: call.call_id,
            name: call.name,
            arguments: call.arguments,
            result,
            one_way: tool.one_way(),
        }))
    }

    async fn run_tool(
        &self,
        tool: &Arc<dyn ClientTool>,
        args: Value,
    ) -> std::result::Result<ToolOutput, End> {
        call_tool(tool, args, &self.tool_ctx, self.cancel)
            .await
            .ok_or(End::Stopped)
    }

    // ---------------------------------------------------------------- Chat Completions

    async fn chat_turn(
        &mut self,
        history: Vec<transcript::Entry>,
        user_text: String,
    ) -> std::result::Result<(), End> {
        let mut messages = Vec::with_capacity(history.len() + 2);
        if let Some(sys) = &self.req.instructions {
            messages.push(json!({"role": "system", "content": sys}));
        }
        for e in history {
            messages.push(json!({"role": e.role.as_str(), "content": e.text}));
        }
        messages.push(json!({"role": "user", "content": user_text}));
        let tools = self.registry.chat_tools();
        let url = self.req.backend.endpoint("chat/completions");
        let mut round_trips = 0;
        loop {
            let mut body = json!({
                "model": self.req.backend.model,
                "stream": true,
                "messages": messages,
            });
            if let Some(t) = &tools {
                body["tools"] = t.clone();
            }
            self.req
                .backend
                .sampling
                .apply(Transport::ChatCompletions, &mut body);
            let round = self.chat_round(&url, &body).await?;
            let waited = round.finish_reason.as_deref() == Some("tool_calls");
            if !results_go_back(&round.answered, &round.text, waited)
                || round_trips >= MAX_TOOL_ROUND_TRIPS
            {
                return Ok(());
            }
            round_trips += 1;
            let tool_calls: Vec<Value> = round
                .answered
                .iter()
                .map(|a| {
                    json!({
                        "id": a.call_id,
                        "type": "function",
                        "function": {"name": a.name, "arguments": a.arguments},
                    })
                })
                .collect();
            let content = if !spoke(&round.text) {
                Value::Null
            } else {
                json!(round.text)
            };
            messages
                .push(json!({"role": "assistant", "content": content, "tool_calls": tool_calls}));
            let mut images = Vec::new();
            for a in &round.answered {
                let content = match &a.result {
                    ToolOutput::Text(t) => t.clone(),
                    ToolOutput::Images { text, images: imgs } => {
                        images.extend(
                            imgs.iter()
                                .map(|u| json!({"type": "image_url", "image_url": {"url": u}})),
                        );
                        let note = if imgs.len() == 1 {
                            IMAGE_NOTE_ONE
                        } else {
                            IMAGE_NOTE_MANY
                        };
                        format!("{text}\n{note}")
                    }
                };
                messages
                    .push(json!({"role": "tool", "tool_call_id": a.call_id, "content": content}));
            }
            if !images.is_empty() {
                messages.push(json!({"role": "user", "content": images}));
            }
        }
    }

    async fn chat_round(&mut self, url: &str, body: &Value) -> std::result::Result<ChatRound, End> {
        let stream = self.open(url, body).await?;
        self.chat_stream(stream).await
    }

    async fn chat_stream(&mut self, mut stream: SseStream) -> std::result::Result<ChatRound, End> {
        let mut calls = ChatCalls::default();
        let mut round = ChatRound::default();
        let cancel = self.cancel;
        let cancelled = cancel.cancelled();
        tokio::pin!(cancelled);
        while let Some(ev) = Self::next_event(&mut stream, cancelled.as_mut()).await? {
            match ev.event.as_str() {
                "hermes.tool.progress" => {
                    self.hermes_progress(&ev.data).await;
                    continue;
                }
                "error" => {
                    return Err(BackendError::Server {
                        body: evidence(&ev.data),
                    }
                    .into())
                }
                _ => {}
            }
            let data = ev.data.trim();
            if data == "[DONE]" {
                break;
            }
            if data.is_empty() {
                continue;
            }
            let chunk: wchat::Chunk =
                serde_json::from_str(data).map_err(|e| BackendError::Parse {
                    line: evidence(data),
                    message: e.to_string(),
                })?;
            if let Some(err) = chunk.error {
                return Err(BackendError::Server {
                    body: evidence(&err.to_string()),
                }
                .into());
            }
            for choice in chunk.choices {
                if choice.index.unwrap_or(0) != 0 {
                    continue;
                }
                if let Some(delta) = choice.delta {
                    if let Some(c) = delta.content {
                        self.speech(&mut round.text, &c).await;
                    }
                    for tc in delta.tool_calls.into_iter().flatten() {
                        calls.add(tc);
                    }
                }
                // Some servers send `"finish_reason": ""` on every chunk: only a value counts.
                if let Some(fr) = choice.finish_reason.filter(|f| !f.is_empty()) {
                    round.finish_reason = Some(fr);
                    self.release_held(&mut calls, &mut round).await?;
                }
            }
        }
        drop(stream);
        self.release_held(&mut calls, &mut round).await?;
        Ok(round)
    }

    /// Run the held Chat Completions calls, in index order.
    async fn release_held(
        &mut self,
        calls: &mut ChatCalls,
        round: &mut ChatRound,
    ) -> std::result::Result<(), End> {
        for held in calls.take() {
            if let Some(a) = self.release(held, true).await? {
                round.answered.push(a);
            }
        }
        Ok(())
    }

    async fn hermes_progress(&self, data: &str) {
        match serde_json::from_str::<wchat::HermesProgress>(data) {
            Ok(p) => {
                self.emit(TurnEvent::ToolStatus {
                    call_id: None,
                    name: p.name.unwrap_or_default(),
                    status: p.status.unwrap_or_default(),
                })
                .await
            }
            // Telemetry: a malformed one is logged, never fatal.
            Err(e) => {
                tracing::warn!(error = %e, line = %evidence(data), "bad hermes.tool.progress")
            }
        }
    }

    // ---------------------------------------------------------------- Responses

    async fn responses_turn(&mut self, user_text: String) -> std::result::Result<(), End> {
        let store = &self.deps.store;
        let preset_id = &self.req.preset_id;
        let stored = chain::load(store, preset_id)
            .map_err(|e| End::Failed(format!("the response chain could not be read: {e}")))?;
        let mut prev_id = stored.as_ref().map(|c| c.response_id.clone());
        let mut input: Vec<Value> = stored.map(|c| c.pending).unwrap_or_default();
        let mut pending_len = input.len();
        input.push(json!({"role": "user", "content": user_text}));
        let tools = self.registry.responses_tools();
        let url = self.req.backend.endpoint("responses");
        let mut round_trips = 0;
        let mut retried = false;
        loop {
            let mut body = json!({
                "model": self.req.backend.model,
                "stream": true,
                "input": input,
            });
            if let Some(t) = &tools {
                body["tools"] = t.clone();
            }
            self.req
                .backend
                .sampling
                .apply(Transport::Responses, &mut body);
            if let Some(sys) = &self.req.instructions {
                body["instructions"] = json!(sys);
            }
            if let Some(id) = &prev_id {
                body["previous_response_id"] = json!(id);
            }
            let round = match self.responses_round(&url, &body).await {
                Err(End::Backend(BackendError::Http { status: 404, .. }))
                    if prev_id.is_some() && !retried =>
                {
                    // The server forgot the stored id: reset the chain, retry once without it.
                    retried = true;
                    tracing::info!(preset = %preset_id, "previous_response_id unknown (404): chain reset");
                    chain::reset(store, preset_id).map_err(|e| {
                        End::Failed(format!("the response chain could not be reset: {e}"))
                    })?;
                    prev_id = None;
                    input.drain(..pending_len);
                    pending_len = 0;
                    continue;
                }
                r => r?,
            };
            if round.response_id.is_some() {
                self.response_id = round.response_id.clone();
            }
            let outputs: Vec<Value> = round
                .answered
                .iter()
                .map(Answered::responses_output)
                .collect();
            if !results_go_back(&round.answered, &round.text, true)
                || round_trips >= MAX_TOOL_ROUND_TRIPS
            {
                if let Some(id) = &self.response_id {
                    chain::save(store, preset_id, id, &outputs, self.deps.clock.now()).map_err(
                        |e| End::Failed(format!("the response chain could not be stored: {e}")),
                    )?;
                }
                return Ok(());
            }
            round_trips += 1;
            if spoke(&round.text) {
                input.push(json!({"role": "assistant", "content": round.text}));
            }
            input.extend(round.items);
            input.extend(outputs);
        }
    }

    async fn responses_round(
        &mut self,
        url: &str,
        body: &Value,
    ) -> std::result::Result<RespRound, End> {
        let stream = self.open(url, body).await?;
        self.responses_stream(stream).await
    }

    async fn responses_stream(
        &mut self,
        mut stream: SseStream,
    ) -> std::result::Result<RespRound, End> {
        let mut round = RespRound::default();
        let mut items: Vec<Track> = Vec::new();
        let cancel = self.cancel;
        let cancelled = cancel.cancelled();
        tokio::pin!(cancelled);
        while let Some(ev) = Self::next_event(&mut stream, cancelled.as_mut()).await? {
            let data = ev.data.trim();
            if data == "[DONE]" {
                break;
            }
            if data.is_empty() {
                continue;
            }
            let bad = |e: serde_json::Error| BackendError::Parse {
                line: evidence(data),
                message: e.to_string(),
            };
            // Text deltas are nearly every event: read them without buffering the whole object
            // (an internally tagged enum does), by their type first.
            let head: wresp::Head<'_> = serde_json::from_str(data).map_err(bad)?;
            if head.kind.is_empty() {
                // No type: an unknown event, ignored like any other.
                continue;
            }
            if head.kind == "response.output_text.delta" {
                let d: wresp::Delta = serde_json::from_str(data).map_err(bad)?;
                self.speech(&mut round.text, &d.delta).await;
                continue;
            }
            let event: wresp::Event = serde_json::from_str(data).map_err(bad)?;
            match event {
                wresp::Event::Created { response } | wresp::Event::InProgress { response } => {
                    if let Some(id) = response.and_then(|r| r.id) {
                        round.response_id = Some(id);
                    }
                }
                wresp::Event::ItemAdded { output_index, item } => {
                    self.item_seen(&mut items, &mut round, output_index, item, false)
                        .await?;
                }
                wresp::Event::ItemDone { output_index, item } => {
                    self.item_seen(&mut items, &mut round, output_index, item, true)
                        .await?;
                }
                wresp::Event::BareCall { mut item } => {
                    item["type"] = json!("function_call");
                    self.item_seen(&mut items, &mut round, None, item, true)
                        .await?;
                }
                wresp::Event::ArgsDelta {
                    item_id,
                    output_index,
                    delta,
                } => {
                    if let Some(t) = find(&mut items, item_id.as_deref(), output_index) {
                        if let TrackKind::Call { args, ran, .. } = &mut t.kind {
                            if !*ran {
                                args.push_str(&delta);
                            }
                        }
                    }
                }
                wresp::Event::ArgsDone {
                    item_id,
                    output_index,
                    arguments,
                    name,
                } => {
                    let idx = match find_index(&items, item_id.as_deref(), output_index) {
                        Some(i) => i,
                        None => {
                            items.push(Track::call(output_index, item_id.clone(), None, name));
                            items.len() - 1
                        }
                    };
                    if let TrackKind::Call { args, .. } = &mut items[idx].kind {
                        if let Some(a) = arguments {
                            *args = a;
                        }
                    }
                    self.run_track(&mut items, idx, &mut round).await?;
                }
                wresp::Event::Completed { response } | wresp::Event::Incomplete { response } => {
                    if let Some(r) = response {
                        if let Some(id) = r.id {
                            round.response_id = Some(id);
                        }
                        for item in r.output.into_iter().flatten() {
                            self.item_seen(&mut items, &mut round, None, item, true)
                                .await?;
                        }
                    }
                    break;
                }
                wresp::Event::Failed { response } => {
                    let body = response
                        .as_ref()
                        .and_then(|r| r.get("error"))
                        .unwrap_or(&Value::Null)
                        .to_string();
                    return Err(BackendError::Server {
                        body: evidence(&body),
                    }
                    .into());
                }
                wresp::Event::Error { body } => {
                    return Err(BackendError::Server {
                        body: evidence(&body.to_string()),
                    }
                    .into())
                }
                wresp::Event::Unknown => {}
            }
        }
        drop(stream);
        // A stream that ended without every call's completion still runs what it delivered.
        for idx in 0..items.len() {
            self.run_track(&mut items, idx, &mut round).await?;
        }
        round.items = items
            .into_iter()
            .filter_map(|t| match t.kind {
                TrackKind::Reasoning(Some(v)) => Some(v),
                TrackKind::Call {
                    answered: true,
                    call_id,
                    name,
                    args,
                    ..
                } => Some(wresp::function_call_item(&call_id, &name, &args)),
                _ => None,
            })
            .collect();
        Ok(round)
    }

    /// An output item from `added`, `done`, or the completed response.
    async fn item_seen(
        &mut self,
        items: &mut Vec<Track>,
        round: &mut RespRound,
        output_index: Option<u64>,
        item: Value,
        done: bool,
    ) -> std::result::Result<(), End> {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        let item_id = item.get("id").and_then(Value::as_str).map(str::to_string);
        match kind {
            "function_call" => {
                let f: wresp::FunctionCallItem = serde_json::from_value(item).unwrap_or_default();
                let idx = match find_index(items, f.id.as_deref(), output_index)
                    .or_else(|| find_call(items, f.call_id.as_deref()))
                {
                    Some(i) => i,
                    None => {
                        items.push(Track::call(
                            output_index,
                            f.id.clone(),
                            f.call_id.clone(),
                            f.name.clone(),
                        ));
                        let i = items.len() - 1;
                        let name = f.name.clone().unwrap_or_default();
                        if self.registry.get(&name).is_none() {
                            // A backend-run tool: shown running from the moment it is added.
                            self.emit(TurnEvent::ToolStatus {
                                call_id: f.call_id.clone(),
                                name,
                                status: if done { "done" } else { "running" }.to_string(),
                            })
                            .await;
                            if let TrackKind::Call { status_done, .. } = &mut items[i].kind {
                                *status_done = done;
                            }
                        }
                        i
                    }
                };
                let complete = done
                    || f.status.as_deref() == Some("completed")
                    || f.arguments.as_deref().is_some_and(|a| {
                        !a.trim().is_empty()
                            && serde_json::from_str::<serde::de::IgnoredAny>(a).is_ok()
                    });
                if let TrackKind::Call {
                    call_id,
                    name,
                    args,
                    ran,
                    ..
                } = &mut items[idx].kind
                {
                    if call_id.is_empty() {
                        if let Some(c) = f.call_id {
                            *call_id = c;
                        }
                    }
                    if name.is_empty() {
                        if let Some(n) = f.name {
                            *name = n;
                        }
                    }
                    if !*ran {
                        if let Some(a) = f.arguments.filter(|a| !a.is_empty()) {
                            *args = a;
                        }
                    }
                }
                if complete {
                    self.run_track(items, idx, round).await?;
                }
                if done {
                    self.backend_done(items, idx).await;
                }
            }
            "reasoning" => {
                let idx = find_index(items, item_id.as_deref(), output_index);
                match idx {
                    Some(i) => {
                        if done {
                            items[i].kind = TrackKind::Reasoning(Some(item));
                        }
                    }
                    None => items.push(Track {
                        output_index,
                        item_id,
                        kind: TrackKind::Reasoning(done.then_some(item)),
                    }),
                }
            }
            "message" | "" => {}
            other => {
                // Server-side tool items (web_search_call, mcp_call…) run on the backend.
                let name = item
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or(other)
                    .to_string();
                let known = find_index(items, item_id.as_deref(), output_index).is_some();
                if !known {
                    items.push(Track {
                        output_index,
                        item_id: item_id.clone(),
                        kind: TrackKind::Backend,
                    });
                }
                if !known || done {
                    self.emit(TurnEvent::ToolStatus {
                        call_id: item_id,
                        name,
                        status: if done { "done" } else { "running" }.to_string(),
                    })
                    .await;
                }
            }
        }
        Ok(())
    }

    /// A backend-run function call completed: show it done, once.
    async fn backend_done(&mut self, items: &mut [Track], idx: usize) {
        if let TrackKind::Call {
            call_id,
            name,
            status_done,
            ..
        } = &mut items[idx].kind
        {
            if !*status_done && self.registry.get(name).is_none() {
                *status_done = true;
                let ev = TurnEvent::ToolStatus {
                    call_id: Some(call_id.clone()),
                    name: name.clone(),
                    status: "done".to_string(),
                };
                self.emit(ev).await;
            }
        }
    }

    /// Run a tracked call once.
    async fn run_track(
        &mut self,
        items: &mut [Track],
        idx: usize,
        round: &mut RespRound,
    ) -> std::result::Result<(), End> {
        let held = match &mut items[idx].kind {
            TrackKind::Call {
                call_id,
                name,
                args,
                ran,
                ..
            } if !*ran => {
                *ran = true;
                Held {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    arguments: args.clone(),
                }
            }
            _ => return Ok(()),
        };
        if let Some(a) = self.release(held, false).await? {
            round.answered.push(a);
            if let TrackKind::Call { answered, .. } = &mut items[idx].kind {
                *answered = true;
            }
        }
        Ok(())
    }
}

#[derive(Default)]
struct ChatRound {
    text: String,
    finish_reason: Option<String>,
    answered: Vec<Answered>,
}

#[derive(Default)]
struct RespRound {
    text: String,
    response_id: Option<String>,
    answered: Vec<Answered>,
    /// Reasoning items and answered function_call items, in the order the response produced them.
    items: Vec<Value>,
}

/// Chat Completions tool-call fragments, accumulated per call index.
#[derive(Default)]
struct ChatCalls {
    slots: Vec<Slot>,
}

struct Slot {
    index: usize,
    id: String,
    name: String,
    arguments: String,
}

impl ChatCalls {
    fn add(&mut self, d: wchat::ToolCallDelta) {
        let pos = match d.index {
            // A new id under an index already in use is a new call: some servers send every
            // whole call with index 0.
            Some(i) => self.slots.iter().position(|s| {
                s.index == i
                    && !matches!(&d.id, Some(id) if !id.is_empty() && !s.id.is_empty() && *id != s.id)
            }),
            // No index: the id names the call; a fragment with neither continues the last call.
            None => match &d.id {
                Some(id) => self.slots.iter().position(|s| &s.id == id),
                None => self.slots.len().checked_sub(1),
            },
        };
        let pos = match pos {
            Some(p) => p,
            None => {
                // The index comes from the server: no overflow on `usize::MAX`.
                let next = self
                    .slots
                    .iter()
                    .map(|s| s.index.saturating_add(1))
                    .max()
                    .unwrap_or(0);
                let index = match d.index {
                    Some(i) if self.slots.iter().all(|s| s.index != i) => i,
                    _ => next,
                };
                self.slots.push(Slot {
                    index,
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                });
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[pos];
        if let Some(id) = d.id.filter(|i| !i.is_empty()) {
            if slot.id.is_empty() {
                slot.id = id;
            }
        }
        if let Some(f) = d.function {
            if let Some(n) = f.name.filter(|n| !n.is_empty()) {
                // Names usually come whole once; some servers repeat them, a few split them.
                if slot.name != n {
                    slot.name.push_str(&n);
                }
            }
            if let Some(a) = f.arguments {
                slot.arguments.push_str(&a);
            }
        }
    }

    /// The held calls in index order; ids filled in for servers that send none.
    fn take(&mut self) -> Vec<Held> {
        let mut slots = std::mem::take(&mut self.slots);
        slots.sort_by_key(|s| s.index);
        slots
            .into_iter()
            .map(|s| Held {
                call_id: if s.id.is_empty() {
                    format!("call_{}", s.index)
                } else {
                    s.id
                },
                name: s.name,
                arguments: s.arguments,
            })
            .collect()
    }
}

/// A Responses output item being followed.
struct Track {
    output_index: Option<u64>,
    item_id: Option<String>,
    kind: TrackKind,
}

enum TrackKind {
    Call {
        call_id: String,
        name: String,
        args: String,
        ran: bool,
        answered: bool,
        status_done: bool,
    },
    Reasoning(Option<Value>),
    Backend,
}

impl Track {
    fn call(
        output_index: Option<u64>,
        item_id: Option<String>,
        call_id: Option<String>,
        name: Option<String>,
    ) -> Self {
        Self {
            output_index,
            item_id,
            kind: TrackKind::Call {
                call_id: call_id.unwrap_or_default(),
                name: name.unwrap_or_default(),
                args: String::new(),
                ran: false,
                answered: false,
                status_done: false,
            },
        }
    }
}

fn find_index(items: &[Track], item_id: Option<&str>, output_index: Option<u64>) -> Option<usize> {
    if let Some(id) = item_id {
        if let Some(i) = items.iter().position(|t| t.item_id.as_deref() == Some(id)) {
            return Some(i);
        }
    }
    let oi = output_index?;
    items.iter().position(|t| t.output_index == Some(oi))
}

fn find_call(items: &[Track], call_id: Option<&str>) -> Option<usize> {
    let call_id = call_id?;
    items
        .iter()
        .position(|t| matches!(&t.kind, TrackKind::Call { call_id: c, .. } if c == call_id))
}

fn find<'t>(
    items: &'t mut [Track],
    item_id: Option<&str>,
    output_index: Option<u64>,
) -> Option<&'t mut Track> {
    let i = find_index(items, item_id, output_index)?;
    items.get_mut(i)
}
