//! A file server on 127.0.0.1 for the model downloads' tests: HTTP/1.1 `GET` of one file at any
//! path, `Range: bytes=N-` answered with `206` and `Content-Range`, `HEAD` too. Its [`Fault`]
//! makes it behave like the servers a download meets: one that cuts the connection halfway
//! through the first answer, one that ignores `Range`, one that sends a file of another size,
//! and [`down`]: a port nothing listens on. Every request's `Range` header is kept.

use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the server misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    None,
    /// The first answer stops (the connection closes) after this many bytes of the body; later
    /// answers are whole.
    CutFirstAt(usize),
    /// Every answer cuts after this many bytes of body, so no download can finish.
    CutAlwaysAt(usize),
    /// `Range` is ignored: always `200` with the whole file.
    IgnoreRange,
    /// The file sent has this many extra bytes (its `Content-Length` says so).
    ExtraBytes(usize),
}

/// A running file server (stopped when dropped).
pub struct FileServer {
    pub port: u16,
    ranges: Arc<Mutex<Vec<Option<String>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FileServer {
    /// Serve `body` at every path, misbehaving as `fault` says.
    pub async fn start(body: Arc<Vec<u8>>, fault: Fault) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("local addr").port();
        let ranges = Arc::new(Mutex::new(Vec::new()));
        let seen = ranges.clone();
        let task = tokio::spawn(async move {
            let mut n = 0usize;
            while let Ok((sock, _)) = listener.accept().await {
                let (body, seen) = (body.clone(), seen.clone());
                let first = n == 0;
                n += 1;
                tokio::spawn(async move {
                    let _ = answer(sock, &body, fault, first, &seen).await;
                });
            }
        });
        Self { port, ranges, task }
    }

    /// `http://127.0.0.1:PORT`
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The `Range` header of each request, in order (`None`: it had none).
    pub fn ranges(&self) -> Vec<Option<String>> {
        self.ranges
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// A 127.0.0.1 URL base on a port nothing listens on (bound, then released).
pub fn down() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let port = l.local_addr().expect("local addr").port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

async fn answer(
    mut sock: TcpStream,
    body: &[u8],
    fault: Fault,
    first: bool,
    seen: &Mutex<Vec<Option<String>>>,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = sock.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head).to_string();
    let is_head = text.starts_with("HEAD ");
    let range = text
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("range"))
        })
        .map(|(_, v)| v.trim().to_string());
    seen.lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(range.clone());
    let mut full = body.to_vec();
    if let Fault::ExtraBytes(n) = fault {
        full.extend(std::iter::repeat_n(0u8, n));
    }
    let total = full.len();
    let start = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.split('-').next())
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|_| fault != Fault::IgnoreRange);
    let (status, part) = match start {
        Some(s) if s >= total => {
            let h = format!(
                "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{total}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            sock.write_all(h.as_bytes()).await?;
            return Ok(());
        }
        Some(s) => (
            format!(
                "206 Partial Content\r\nContent-Range: bytes {s}-{}/{total}",
                total - 1
            ),
            &full[s..],
        ),
        None => ("200 OK".to_string(), &full[..]),
    };
    let h = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/octet-stream\r\nAccept-Ranges: bytes\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        part.len()
    );
    sock.write_all(h.as_bytes()).await?;
    if is_head {
        return Ok(());
    }
    let cut = match fault {
        Fault::CutFirstAt(n) if first => Some(n),
        Fault::CutAlwaysAt(n) => Some(n),
        _ => None,
    };
    match cut {
        Some(n) => {
            sock.write_all(&part[..n.min(part.len())]).await?;
            sock.flush().await?;
            // Close without finishing: the client sees the body end early.
            drop(sock);
        }
        None => {
            for chunk in part.chunks(256 * 1024) {
                sock.write_all(chunk).await?;
            }
            sock.shutdown().await?;
        }
    }
    Ok(())
}
