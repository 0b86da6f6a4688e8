//! A WebSocket server on 127.0.0.1 for the push transport. Each accepted connection is handed to
//! the test as a [`WsConn`]: read the client's JSON frames, send the server's, drop the
//! connection (or the server) to simulate a lost socket.

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// The server: `url` is `ws://127.0.0.1:<port>/push`.
pub struct WsServer {
    pub url: String,
    conns: mpsc::UnboundedReceiver<WsConn>,
    pub accepted: Arc<AtomicUsize>,
    stop: CancellationToken,
}

impl Drop for WsServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// One client connection, driven by the test.
pub struct WsConn {
    /// The `Authorization` header of the upgrade request.
    pub auth: Option<String>,
    /// The upgrade request's path and query (`/v1/realtime?model=m`).
    pub path: String,
    from_client: mpsc::UnboundedReceiver<String>,
    to_client: mpsc::UnboundedSender<Out>,
}

enum Out {
    Text(String),
    Close,
}

impl WsServer {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (tx, rx) = mpsc::unbounded_channel();
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = CancellationToken::new();
        let (acc, st) = (accepted.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                let sock = tokio::select! {
                    _ = st.cancelled() => return,
                    a = listener.accept() => match a { Ok((s, _)) => s, Err(_) => return },
                };
                // As WebSocket servers usually do (Node's ws, Python's websockets): no Nagle, so a
                // frame is never held for the ACK of the one before.
                let _ = sock.set_nodelay(true);
                let (tx, st) = (tx.clone(), st.clone());
                acc.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move { serve(sock, tx, st).await });
            }
        });
        Self {
            url: format!("ws://{addr}/push"),
            conns: rx,
            accepted,
            stop,
        }
    }

    /// The next connection (bounded wait: `None` after `within`).
    pub async fn accept(&mut self, within: Duration) -> Option<WsConn> {
        tokio::time::timeout(within, self.conns.recv())
            .await
            .ok()
            .flatten()
    }

    /// The next connection, with its `hello` read and `welcome` (protocol 1) sent.
    pub async fn accept_hello(&mut self) -> (WsConn, Value) {
        let mut c = self
            .accept(Duration::from_secs(10))
            .await
            .expect("a connection");
        let hello = c.recv().await.expect("hello");
        assert_eq!(hello["type"], "hello", "{hello}");
        c.send(&serde_json::json!({"type": "welcome", "protocol": 1}));
        (c, hello)
    }
}

async fn serve(
    sock: tokio::net::TcpStream,
    conns: mpsc::UnboundedSender<WsConn>,
    stop: CancellationToken,
) {
    let mut auth = None;
    let mut path = String::new();
    // The callback's error type is tungstenite's (large); it never errs here.
    #[allow(clippy::result_large_err)]
    let cb = |req: &tokio_tungstenite::tungstenite::handshake::server::Request,
              resp: tokio_tungstenite::tungstenite::handshake::server::Response| {
        auth = req
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        path = req.uri().to_string();
        Ok(resp)
    };
    let Ok(ws) = tokio_tungstenite::accept_hdr_async(sock, cb).await else {
        return;
    };
    let (mut sink, mut stream) = ws.split();
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    let (out_tx, mut out_rx) = mpsc::unbounded_channel();
    if conns
        .send(WsConn {
            auth,
            path,
            from_client: in_rx,
            to_client: out_tx,
        })
        .is_err()
    {
        return;
    }
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            m = stream.next() => match m {
                Some(Ok(Message::Text(t))) => { let _ = in_tx.send(t.as_str().to_string()); }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
            o = out_rx.recv() => match o {
                Some(Out::Text(t)) => { if sink.send(Message::text(t)).await.is_err() { return; } }
                // The test dropped the connection or asked to close: the socket goes at once.
                Some(Out::Close) | None => return,
            },
        }
    }
}

impl WsConn {
    /// The client's next frame as JSON (bounded: `None` after 10 s or when it closed).
    pub async fn recv(&mut self) -> Option<Value> {
        let t = self.recv_text(Duration::from_secs(10)).await?;
        Some(serde_json::from_str(&t).unwrap_or(Value::String(t)))
    }
    /// The client's next frame as text, within `within`.
    pub async fn recv_text(&mut self, within: Duration) -> Option<String> {
        tokio::time::timeout(within, self.from_client.recv())
            .await
            .ok()
            .flatten()
    }
    /// The next frame of a type, skipping others (e.g. `pong`).
    pub async fn recv_type(&mut self, kind: &str) -> Option<Value> {
        loop {
            let f = self.recv().await?;
            if f["type"] == kind {
                return Some(f);
            }
        }
    }
    pub fn send(&self, v: &Value) {
        let _ = self.to_client.send(Out::Text(v.to_string()));
    }
    /// Send raw text (malformed frames).
    pub fn send_raw(&self, s: &str) {
        let _ = self.to_client.send(Out::Text(s.to_string()));
    }
    /// Drop the socket without a close handshake.
    pub fn kill(self) {
        let _ = self.to_client.send(Out::Close);
    }
}
