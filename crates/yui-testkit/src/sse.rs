//! A scripted OpenAI-compatible SSE server on 127.0.0.1 (real TCP, real HTTP/1.1), and builders
//! for Chat Completions chunks and Responses events as real servers send them.
//!
//! Each request takes the next [`Reply`] of the script; once the script is empty, the
//! [`Builder::responder`] (if any) computes the reply from the request ([`Seen`]: its number,
//! method, path, headers and body), so one server can route `GET /v1/models` apart from
//! `POST /v1/chat/completions`, or answer the first request with a call and later ones with text.
//! Every request is kept for assertions ([`ScriptServer::seen`]) and sent to each
//! [`ScriptServer::requests`] receiver, for tests that wait for a request to arrive.
//!
//! Async tests call [`ScriptServer::start`] or [`Builder::start`] on their runtime. Plain
//! `#[test]`s that block on a child process (the CLI tests) call [`Builder::start_blocking`]: the
//! server then runs on a runtime of its own thread, which stops when the server is dropped.

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;

/// One piece of a scripted SSE body.
#[derive(Debug, Clone)]
pub enum Part {
    /// Raw bytes, written as they are.
    Raw(String),
    /// Pause before the next part.
    Sleep(Duration),
    /// Pause until the test releases the gate (`notify_one`), at most the bound, then go on: a
    /// stream held mid-reply while the test looks at what the client shows so far.
    Gate(Arc<Notify>, Duration),
    /// Keep the connection open, sending nothing, until the client closes it.
    Hold,
    /// Send the wall-clock time to the test, then go on: the next part is written right after
    /// (latency benchmarks put one before the bytes they time).
    Mark(mpsc::UnboundedSender<std::time::SystemTime>),
}

/// A scripted reply to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// `200 text/event-stream`, body = the parts, then the connection closes (end of body).
    Sse(Vec<Part>),
    /// Any status with a body (`application/json`, as the errors and `/v1/models` of real
    /// servers are).
    Status(u16, String),
    /// Any status with extra header lines (each ending in `\r\n`) and a body.
    StatusHeaders(u16, String, String),
    /// Read the request and never answer (no headers), until the client closes.
    Hang,
    /// Read the request and close the connection without a byte of answer (a kept-alive
    /// connection the server dropped, a crashed server).
    Close,
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Seen {
    /// 1 for the first request the server read, 2 for the next...
    pub n: usize,
    pub method: String,
    pub path: String,
    /// The value of the `Authorization` header.
    pub auth: Option<String>,
    /// Every header line, as sent (name, value trimmed).
    pub headers: Vec<(String, String)>,
    /// The body as text, and as JSON (`Null` when it is not JSON).
    pub text: String,
    pub body: Value,
}

/// Computes a reply from the request once the script is empty.
pub type Responder = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;

/// What one server does; built by [`ScriptServer::builder`].
#[derive(Default)]
pub struct Builder {
    script: Vec<Reply>,
    responder: Option<Responder>,
    headers: String,
}

impl Builder {
    /// The replies for the first requests, in order.
    pub fn script(mut self, replies: Vec<Reply>) -> Self {
        self.script = replies;
        self
    }
    /// The reply to every request the script does not cover. Without one, such a request gets
    /// `500 no scripted reply left`.
    pub fn responder(mut self, f: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Self {
        self.responder = Some(Arc::new(f));
        self
    }
    /// An extra header on every reply, e.g. `Access-Control-Allow-Origin: *` so that only a
    /// page's own CSP can stop it from reaching the server.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push_str(&format!("{name}: {value}\r\n"));
        self
    }
    /// Start on the current tokio runtime.
    pub async fn start(self) -> ScriptServer {
        ScriptServer::launch(self).await
    }
    /// Start on a runtime of its own thread, for tests without one (they block on a child
    /// process); the thread ends when the server is dropped.
    pub fn start_blocking(self) -> ScriptServer {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a test kit runtime");
            rt.block_on(async move {
                let srv = ScriptServer::launch(self).await;
                let stop = srv.stop.clone();
                if tx.send(srv).is_ok() {
                    stop.cancelled().await;
                }
            });
        });
        rx.recv().expect("the test kit server started")
    }
}

/// What every connection shares.
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    responder: Option<Responder>,
    headers: String,
    seen: Mutex<Vec<Seen>>,
    subscribers: Mutex<Vec<mpsc::UnboundedSender<Seen>>>,
    client_closed: Arc<AtomicBool>,
}

/// The scripted server: `base_url` is `http://127.0.0.1:<port>/v1`. It stops accepting when
/// dropped.
pub struct ScriptServer {
    pub base_url: String,
    shared: Arc<Shared>,
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
    /// A server answering from `replies` only.
    pub async fn start(replies: Vec<Reply>) -> Self {
        Self::builder().script(replies).start().await
    }

    pub fn builder() -> Builder {
        Builder::default()
    }

    async fn launch(b: Builder) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let client_closed = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared {
            script: Mutex::new(VecDeque::from(b.script)),
            responder: b.responder,
            headers: b.headers,
            seen: Mutex::new(Vec::new()),
            subscribers: Mutex::new(Vec::new()),
            client_closed: client_closed.clone(),
        });
        let connections = Arc::new(AtomicUsize::new(0));
        let stop = CancellationToken::new();
        let (sh2, conn2, stop2) = (shared.clone(), connections.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    _ = stop2.cancelled() => return,
                    a = listener.accept() => a,
                };
                let Ok((sock, _)) = accepted else { return };
                conn2.fetch_add(1, Ordering::SeqCst);
                let sh = sh2.clone();
                tokio::spawn(async move {
                    let _ = serve(sock, sh).await;
                });
            }
        });
        Self {
            base_url: format!("http://{addr}/v1"),
            shared,
            client_closed,
            connections,
            stop,
        }
    }

    pub fn push(&self, r: Reply) {
        self.shared.script.lock().unwrap().push_back(r);
    }

    /// The bodies of the requests received so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.seen().into_iter().map(|s| s.body).collect()
    }
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// Every request read from now on, as it arrives (before it is answered).
    pub fn requests(&self) -> mpsc::UnboundedReceiver<Seen> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.shared.subscribers.lock().unwrap().push(tx);
        rx
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

/// Read the head, then `Content-Length` bytes of body; `None` when the client went away first.
async fn read_request(sock: &mut TcpStream) -> std::io::Result<Option<Seen>> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.lines();
    let mut first = lines.next().unwrap_or("").split_whitespace();
    let method = first.next().unwrap_or("").to_string();
    let path = first.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect();
    let find = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let len: usize = find("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let auth = find("authorization");
    while buf.len() < head_end + len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let raw = &buf[head_end..head_end + len];
    Ok(Some(Seen {
        n: 0,
        method,
        path,
        auth,
        text: String::from_utf8_lossy(raw).to_string(),
        body: serde_json::from_slice(raw).unwrap_or(Value::Null),
        headers,
    }))
}

async fn serve(mut sock: TcpStream, sh: Arc<Shared>) -> std::io::Result<()> {
    let Some(mut req) = read_request(&mut sock).await? else {
        return Ok(());
    };
    let scripted = {
        // Numbered, recorded, announced and given its scripted reply under one lock, so that
        // concurrent requests keep `n`, the record and the script in the same order.
        let mut seen = sh.seen.lock().unwrap();
        req.n = seen.len() + 1;
        seen.push(req.clone());
        sh.subscribers
            .lock()
            .unwrap()
            .retain(|tx| tx.send(req.clone()).is_ok());
        sh.script.lock().unwrap().pop_front()
    };
    let reply = match (scripted, &sh.responder) {
        (Some(r), _) => r,
        (None, Some(f)) => f(&req),
        (None, None) => Reply::Status(500, "no scripted reply left".into()),
    };
    let mut tmp = [0u8; 1024];
    match reply {
        Reply::Hang => {
            let r = tokio::time::timeout(Duration::from_secs(20), sock.read(&mut tmp)).await;
            if matches!(r, Ok(Ok(0)) | Ok(Err(_))) {
                sh.client_closed.store(true, Ordering::SeqCst);
            }
        }
        Reply::Close => {
            let _ = sock.shutdown().await;
        }
        Reply::Status(code, body) => {
            status_reply(&mut sock, code, &sh.headers, &body).await?;
        }
        Reply::StatusHeaders(code, headers, body) => {
            let headers = format!("{}{headers}", sh.headers);
            status_reply(&mut sock, code, &headers, &body).await?;
        }
        Reply::Sse(parts) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n{}Connection: close\r\n\r\n",
                sh.headers
            );
            sock.write_all(head.as_bytes()).await?;
            for p in parts {
                match p {
                    Part::Raw(s) => {
                        sock.write_all(s.as_bytes()).await?;
                        sock.flush().await?;
                    }
                    Part::Sleep(d) => tokio::time::sleep(d).await,
                    Part::Mark(tx) => {
                        let _ = tx.send(std::time::SystemTime::now());
                    }
                    Part::Gate(gate, bound) => {
                        let _ = tokio::time::timeout(bound, gate.notified()).await;
                    }
                    Part::Hold => {
                        // The client sent its whole request: a read now ends only when it
                        // closes the connection (0 bytes or an error). Bounded at 20 s.
                        let r = tokio::time::timeout(Duration::from_secs(20), sock.read(&mut tmp))
                            .await;
                        if matches!(r, Ok(Ok(0)) | Ok(Err(_))) {
                            sh.client_closed.store(true, Ordering::SeqCst);
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

/// A data line for each event, in order.
pub fn events(events: &[Value]) -> Vec<Part> {
    events.iter().map(data).collect()
}
/// A whole Chat Completions stream: a data line for each chunk, then `[DONE]`.
pub fn chat_stream(chunks: &[Value]) -> Reply {
    let mut parts = events(chunks);
    parts.push(done());
    Reply::Sse(parts)
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

/// A whole non-streaming Chat Completions answer (`stream: false`): one `chat.completion`
/// object, as real servers send it. `finish_reason` `length` is an answer the server cut.
pub fn chat_json(content: &str, finish_reason: &str) -> Reply {
    Reply::Status(
        200,
        json!({
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "scripted",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason
            }],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        })
        .to_string(),
    )
}
