//! Fake OpenAI-compatible backends for the end-to-end tests: a TCP server on 127.0.0.1 that
//! reads each request's body (head, then `Content-Length` bytes), hands it back on a channel, and
//! lets the test script the response on the raw socket.

use serde_json::Value;
use std::future::Future;
use std::path::Path;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc::UnboundedReceiver;
use yui_core::backend::{BackendChange, Transport};

/// The head of every streamed reply. It allows any origin (CORS) so that only the app's CSP can
/// stop a page from reaching the fake; the core's HTTP client ignores the header.
const SSE_HEAD: &str = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n";

/// Serve on 127.0.0.1: every request's body goes to the returned receiver, then
/// `respond(n, socket)` writes the reply (`n` counts requests from 1). Returns the base URL
/// (`http://…/v1`) and the bodies.
pub async fn serve<F, Fut>(respond: F) -> (String, UnboundedReceiver<String>)
where
    F: Fn(usize, TcpStream) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let respond = std::sync::Arc::new(respond);
    tokio::spawn(async move {
        let mut n = 0usize;
        while let Ok((mut sock, _)) = listener.accept().await {
            n += 1;
            let (tx, respond) = (tx.clone(), respond.clone());
            tokio::spawn(async move {
                let Some(body) = read_body(&mut sock).await else {
                    return;
                };
                let _ = tx.send(body);
                respond(n, sock).await;
            });
        }
    });
    (base, rx)
}

/// Read one request: the head, then the body by `Content-Length`. `None` when the peer goes away.
async fn read_body(sock: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_string();
        let len = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        if buf.len() >= end + 4 + len {
            return Some(String::from_utf8_lossy(&buf[end + 4..end + 4 + len]).to_string());
        }
    }
}

/// `data: <event>` lines for `events`.
pub fn sse_events(events: &[Value]) -> String {
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

/// Write the stream head and the first part of a reply, flushed; `false` when the peer is gone.
pub async fn write_head(sock: &mut TcpStream, events: &[Value]) -> bool {
    let out = format!("{SSE_HEAD}{}", sse_events(events));
    sock.write_all(out.as_bytes()).await.is_ok() && sock.flush().await.is_ok()
}

/// Write a whole Chat Completions stream (`events`, then `[DONE]`) and close.
pub async fn write_chat_stream(mut sock: TcpStream, events: Vec<Value>) {
    let out = format!("{SSE_HEAD}{}data: [DONE]\n\n", sse_events(&events));
    let _ = sock.write_all(out.as_bytes()).await;
    let _ = sock.shutdown().await;
}

/// Point the store in `dir` at the fake on `transport`, with the model `fake-model`.
pub fn seed_backend(dir: &Path, base_url: &str, transport: Transport) {
    super::seed(dir, |st| point_at(st, base_url, transport));
}

/// The same as [`seed_backend`] on an open store, for tests that seed more.
pub fn point_at(st: &yui_core::Store, base_url: &str, transport: Transport) {
    let change = BackendChange {
        base_url: Some(base_url.to_string()),
        model: Some("fake-model".into()),
        transport: Some(transport),
        push_url: None,
        ..Default::default()
    };
    yui_core::backend::update(st, &change).unwrap();
}
