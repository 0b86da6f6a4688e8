//! A timestamping TCP proxy on 127.0.0.1 between YUI and an OpenAI-compatible engine, for the
//! built-in model bench's share of the time to first token (`builtin_model -- --share`): it
//! forwards every byte unchanged, both ways, and notes per request (in order, a kept-alive
//! connection carrying several) when its last byte left YUI, when the engine's first SSE chunk
//! with reply text arrived and when it was passed on, and the engine's own
//! `timings` from the stream's last chunk. The times are `Instant`s of this process, the same
//! clock the bench reads around the turn, so the two sides subtract.

use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request through the proxy.
#[derive(Debug, Clone, Default)]
pub struct Exchange {
    /// Its last byte (headers and `Content-Length` body) read from YUI: the request has left.
    pub sent: Option<Instant>,
    /// The engine's first chunk with reply text, read from the engine.
    pub token_in: Option<Instant>,
    /// The same chunk written to YUI.
    pub token_out: Option<Instant>,
    /// The engine's `timings` (llama.cpp: `prompt_n`, `prompt_ms`, `cache_n`, …), from the
    /// last chunk that carried them.
    pub timings: Option<serde_json::Value>,
}

/// The proxy: its address and every request it carried, in the order they began.
pub struct StampProxy {
    pub base_url: String,
    log: Arc<Mutex<Vec<Exchange>>>,
}

impl StampProxy {
    /// Listen on a free port of 127.0.0.1 and carry each connection to `upstream` (host:port).
    pub async fn start(upstream: String) -> StampProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        tokio::spawn(async move {
            while let Ok((down, _)) = listener.accept().await {
                let _ = down.set_nodelay(true);
                let Ok(up) = TcpStream::connect(&upstream).await else {
                    continue;
                };
                let _ = up.set_nodelay(true);
                tokio::spawn(carry(down, up, l.clone()));
            }
        });
        StampProxy {
            base_url: format!("http://{addr}/v1"),
            log,
        }
    }

    /// How many requests it has seen so far (the index the next one gets).
    pub fn count(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    /// The requests from index `from` on.
    pub fn since(&self, from: usize) -> Vec<Exchange> {
        self.log.lock().unwrap()[from..].to_vec()
    }
}

/// One connection: requests one after the other (HTTP/1.1 keep-alive), each answered before
/// the next, so the answer's stamps belong to the last request begun on the connection.
async fn carry(down: TcpStream, up: TcpStream, log: Arc<Mutex<Vec<Exchange>>>) {
    let (mut down_r, mut down_w) = down.into_split();
    let (mut up_r, mut up_w) = up.into_split();
    let current: Arc<Mutex<Option<usize>>> = Arc::new(Mutex::new(None));
    let (cur, l) = (current.clone(), log.clone());
    let requests = async move {
        let mut buf = vec![0u8; 64 * 1024];
        let mut head = Vec::new();
        // Bytes of the current request's body still to come; `None` while reading its head.
        let mut body_left: Option<usize> = None;
        loop {
            let n = match down_r.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let at = Instant::now();
            let mut rest = &buf[..n];
            while !rest.is_empty() {
                match body_left {
                    None => {
                        if head.is_empty() {
                            let mut g = l.lock().unwrap();
                            g.push(Exchange::default());
                            *cur.lock().unwrap() = Some(g.len() - 1);
                        }
                        let take = head_end(&head, rest).unwrap_or(rest.len());
                        head.extend_from_slice(&rest[..take]);
                        rest = &rest[take..];
                        if head.ends_with(b"\r\n\r\n") {
                            body_left = Some(content_length(&head));
                            head.clear();
                        }
                    }
                    Some(left) => {
                        let take = left.min(rest.len());
                        rest = &rest[take..];
                        body_left = Some(left - take);
                    }
                }
                if body_left == Some(0) {
                    body_left = None;
                    if let Some(i) = *cur.lock().unwrap() {
                        l.lock().unwrap()[i].sent = Some(at);
                    }
                }
            }
            if up_w.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = up_w.shutdown().await;
    };
    let answers = async move {
        let mut buf = vec![0u8; 64 * 1024];
        let mut lines = Vec::new();
        loop {
            let n = match up_r.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let at = Instant::now();
            if down_w.write_all(&buf[..n]).await.is_err() {
                break;
            }
            let out = Instant::now();
            lines.extend_from_slice(&buf[..n]);
            let Some(i) = *current.lock().unwrap() else {
                continue;
            };
            // Whole lines only: a `data:` line may span two reads.
            let Some(cut) = lines.iter().rposition(|&b| b == b'\n') else {
                continue;
            };
            let whole: Vec<u8> = lines.drain(..=cut).collect();
            let mut g = log.lock().unwrap();
            let x = &mut g[i];
            for line in String::from_utf8_lossy(&whole).lines() {
                let Some(json) = line.strip_prefix("data: ") else {
                    continue;
                };
                let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else {
                    continue;
                };
                if x.token_in.is_none() && carries_reply(&v) {
                    x.token_in = Some(at);
                    x.token_out = Some(out);
                }
                if v.get("timings").is_some() {
                    x.timings = v.get("timings").cloned();
                }
            }
        }
        let _ = down_w.shutdown().await;
    };
    tokio::join!(requests, answers);
}

/// Where the head ends within `rest` (just past its blank line), given what came before.
fn head_end(head: &[u8], rest: &[u8]) -> Option<usize> {
    let mut joined = head[head.len().saturating_sub(3)..].to_vec();
    let skip = joined.len();
    joined.extend_from_slice(rest);
    joined
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| p + 4 - skip)
}

fn content_length(head: &[u8]) -> usize {
    String::from_utf8_lossy(head)
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0)
}

/// A chunk with reply text: what becomes the turn's first `speech` event (a tool call or
/// reasoning first is a round trip or a wait before it, which the bench reports apart).
fn carries_reply(v: &serde_json::Value) -> bool {
    v["choices"][0]["delta"]["content"]
        .as_str()
        .is_some_and(|s| !s.is_empty())
}
