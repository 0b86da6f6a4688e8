//! A scripted OpenAI-compatible SSE server on 127.0.0.1 (real TCP, real HTTP/1.1): each request
//! takes the next [`Reply`] of the script; the bodies it received are kept for assertions. And
//! builders for Chat Completions chunks and Responses events as real servers send them.

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

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
