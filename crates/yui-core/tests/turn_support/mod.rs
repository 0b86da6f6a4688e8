//! Test support for the turn engine: a scripted OpenAI-compatible SSE server on 127.0.0.1 (real
//! TCP, real HTTP/1.1), test tools, and a harness that runs one turn and collects its events.
// Each turn test binary uses its own part of this module.
#![allow(dead_code)]

use async_trait::async_trait;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use yui_core::backend::Transport;
use yui_core::clock::{ManualClock, SharedClock};
use yui_core::tools::registry::{ToolRegistry, TurnToolState};
use yui_core::tools::{ClientTool, ToolContext, ToolError, ToolOutput};
use yui_core::turn::{self, Backend, Timeouts, TurnDeps, TurnEvent, TurnOutcome, TurnRequest};
use yui_core::{Store, WindowKind};

/// One piece of a scripted SSE body.
#[derive(Debug, Clone)]
pub enum Part {
    /// Raw bytes, written as they are.
    Raw(String),
    /// Pause before the next part.
    Sleep(Duration),
    /// Keep the connection open, sending nothing, until the client closes it.
    Hold,
}

/// A scripted reply to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// `200 text/event-stream`, body = the parts, then the connection closes (end of body).
    Sse(Vec<Part>),
    /// Any status with a body.
    Status(u16, String),
    /// Any status with extra header lines (each ending in `\r\n`) and a body.
    StatusHeaders(u16, String, String),
    /// Read the request and never answer (no headers), until the client closes.
    Hang,
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub auth: Option<String>,
    pub body: Value,
}

/// The scripted server. Each request takes the next reply from the script.
pub struct ScriptServer {
    pub base_url: String,
    script: Arc<Mutex<VecDeque<Reply>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Set when a connection held open by [`Part::Hold`] was closed by the client.
    pub client_closed: Arc<AtomicBool>,
    pub connections: Arc<AtomicUsize>,
    stop: CancellationToken,
}

impl Drop for ScriptServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl ScriptServer {
    pub async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let script = Arc::new(Mutex::new(VecDeque::from(replies)));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let client_closed = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(AtomicUsize::new(0));
        let stop = CancellationToken::new();
        let (s2, seen2, cc2, conn2, stop2) = (
            script.clone(),
            seen.clone(),
            client_closed.clone(),
            connections.clone(),
            stop.clone(),
        );
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    _ = stop2.cancelled() => return,
                    a = listener.accept() => a,
                };
                let Ok((sock, _)) = accepted else { return };
                conn2.fetch_add(1, Ordering::SeqCst);
                let (s, sn, cc) = (s2.clone(), seen2.clone(), cc2.clone());
                tokio::spawn(async move {
                    let _ = serve(sock, s, sn, cc).await;
                });
            }
        });
        Self {
            base_url: format!("http://{addr}/v1"),
            script,
            seen,
            client_closed,
            connections,
            stop,
        }
    }

    pub fn push(&self, r: Reply) {
        self.script.lock().unwrap().push_back(r);
    }

    /// The bodies of the requests received so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.body.clone())
            .collect()
    }
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Wait (bounded) until the client closed a held connection.
    pub async fn wait_client_closed(&self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        while tokio::time::Instant::now() < deadline {
            if self.client_closed.load(Ordering::SeqCst) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.client_closed.load(Ordering::SeqCst)
    }
}

async fn serve(
    mut sock: TcpStream,
    script: Arc<Mutex<VecDeque<Reply>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    client_closed: Arc<AtomicBool>,
) -> std::io::Result<()> {
    // Read the head, then Content-Length bytes of body.
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.lines();
    let path = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("")
        .to_string();
    let mut len = 0usize;
    let mut auth = None;
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            }
            if k.eq_ignore_ascii_case("authorization") {
                auth = Some(v.trim().to_string());
            }
        }
    }
    while buf.len() < head_end + len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body: Value = serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null);
    seen.lock().unwrap().push(Seen { path, auth, body });
    let reply = script
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or(Reply::Status(500, "no scripted reply left".into()));
    match reply {
        Reply::Hang => {
            let r = tokio::time::timeout(Duration::from_secs(20), sock.read(&mut tmp)).await;
            if matches!(r, Ok(Ok(0)) | Ok(Err(_))) {
                client_closed.store(true, Ordering::SeqCst);
            }
        }
        Reply::Status(code, body) => {
            status_reply(&mut sock, code, "", &body).await?;
        }
        Reply::StatusHeaders(code, headers, body) => {
            status_reply(&mut sock, code, &headers, &body).await?;
        }
        Reply::Sse(parts) => {
            sock.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
            )
            .await?;
            for p in parts {
                match p {
                    Part::Raw(s) => {
                        sock.write_all(s.as_bytes()).await?;
                        sock.flush().await?;
                    }
                    Part::Sleep(d) => tokio::time::sleep(d).await,
                    Part::Hold => {
                        // The client sent its whole request: a read now ends only when it
                        // closes the connection (0 bytes or an error). Bounded at 20 s.
                        let r = tokio::time::timeout(Duration::from_secs(20), sock.read(&mut tmp))
                            .await;
                        if matches!(r, Ok(Ok(0)) | Ok(Err(_))) {
                            client_closed.store(true, Ordering::SeqCst);
                        }
                        return Ok(());
                    }
                }
            }
            sock.shutdown().await?;
        }
    }
    Ok(())
}

async fn status_reply(
    sock: &mut TcpStream,
    code: u16,
    headers: &str,
    body: &str,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {code} Scripted\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    sock.write_all(head.as_bytes()).await?;
    sock.write_all(body.as_bytes()).await?;
    sock.shutdown().await
}

// ------------------------------------------------------------------ SSE builders

pub fn data(v: &Value) -> Part {
    Part::Raw(format!("data: {v}\n\n"))
}
pub fn done() -> Part {
    Part::Raw("data: [DONE]\n\n".into())
}
pub fn raw(s: &str) -> Part {
    Part::Raw(s.to_string())
}

/// Chat chunk with a content delta.
pub fn c_text(t: &str) -> Part {
    data(&json!({"choices":[{"index":0,"delta":{"content":t},"finish_reason":null}]}))
}
/// Chat chunk with one whole tool call.
pub fn c_call(index: usize, id: &str, name: &str, args: &str) -> Part {
    data(
        &json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":index,"id":id,"type":"function","function":{"name":name,"arguments":args}}]},"finish_reason":null}]}),
    )
}
/// Chat chunk with an arguments fragment only.
pub fn c_args(index: usize, frag: &str) -> Part {
    data(
        &json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":index,"function":{"arguments":frag}}]},"finish_reason":null}]}),
    )
}
pub fn c_finish(reason: &str) -> Part {
    data(&json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}]}))
}
/// A whole Chat response: text then stop.
pub fn chat_say(t: &str) -> Reply {
    Reply::Sse(vec![c_text(t), c_finish("stop"), done()])
}

/// Responses event.
pub fn r_ev(v: Value) -> Part {
    data(&v)
}
pub fn r_created(id: &str) -> Part {
    r_ev(json!({"type":"response.created","response":{"id":id,"status":"in_progress","output":[]}}))
}
pub fn r_text(t: &str) -> Part {
    r_ev(
        json!({"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":t}),
    )
}
pub fn r_completed(id: &str) -> Part {
    r_ev(json!({"type":"response.completed","response":{"id":id,"status":"completed"}}))
}
/// A function_call item: added (empty arguments), arguments delta, arguments done, item done.
pub fn r_call(oi: u64, item_id: &str, call_id: &str, name: &str, args: &str) -> Vec<Part> {
    vec![
        r_ev(
            json!({"type":"response.output_item.added","output_index":oi,"item":{"type":"function_call","id":item_id,"call_id":call_id,"name":name,"arguments":"","status":"in_progress"}}),
        ),
        r_ev(
            json!({"type":"response.function_call_arguments.delta","item_id":item_id,"output_index":oi,"delta":args}),
        ),
        r_ev(
            json!({"type":"response.function_call_arguments.done","item_id":item_id,"output_index":oi,"arguments":args}),
        ),
        r_ev(
            json!({"type":"response.output_item.done","output_index":oi,"item":{"type":"function_call","id":item_id,"call_id":call_id,"name":name,"arguments":args,"status":"completed"}}),
        ),
    ]
}
pub fn responses_say(id: &str, t: &str) -> Reply {
    Reply::Sse(vec![r_created(id), r_text(t), r_completed(id)])
}

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
            Act::Throw(message) => Err(ToolError(message.into())),
            Act::Hang { .. } => tokio::select! {
                _ = x.cancelled() => Err(ToolError("turn stopped".into())),
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
            backend: Backend {
                transport,
                base_url: base_url.into(),
                model: "m".into(),
                api_key: None,
                sampling: Default::default(),
            },
            timeouts: Timeouts {
                connect: Duration::from_secs(2),
                headers: Duration::from_secs(5),
                stall: Duration::from_secs(5),
            },
            history_limit: 40,
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

    /// The transcript of `yui`, as (role, text).
    pub fn transcript(&self) -> Vec<(String, String)> {
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
