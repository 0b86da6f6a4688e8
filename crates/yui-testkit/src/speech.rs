//! A scripted OpenAI-compatible speech server on 127.0.0.1 (real TCP, real HTTP/1.1):
//! `POST /v1/audio/transcriptions` takes `multipart/form-data` (kept field by field, the uploaded
//! WAV decoded) and `POST /v1/audio/speech` takes JSON; each request gets the next scripted
//! [`SpeechReply`], then the responder's. Replies are JSON (`{"text": …}` or an error), audio
//! bytes (WAV or raw PCM, as real servers send them), garbage, or no answer at all.

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::Cursor;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// One part of a multipart upload.
#[derive(Debug, Clone)]
pub struct FormPart {
    pub name: String,
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub data: Vec<u8>,
}

/// A request the server read.
#[derive(Debug, Clone)]
pub struct SpeechSeen {
    pub n: usize,
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The JSON body (`Null` when not JSON).
    pub json: Value,
    /// The multipart fields (empty when not multipart).
    pub form: Vec<FormPart>,
}

impl SpeechSeen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    /// A text field of the multipart form.
    pub fn field(&self, name: &str) -> Option<String> {
        self.form
            .iter()
            .find(|p| p.name == name)
            .map(|p| String::from_utf8_lossy(&p.data).to_string())
    }
    /// The uploaded `file` as (rate, channels, bits, samples in −1…1), if it is a WAV.
    pub fn wav(&self) -> Option<(u32, u16, u16, Vec<f32>)> {
        let part = self.form.iter().find(|p| p.name == "file")?;
        let r = hound::WavReader::new(Cursor::new(&part.data)).ok()?;
        let spec = r.spec();
        let samples = r
            .into_samples::<i16>()
            .filter_map(Result::ok)
            .map(|s| s as f32 / 32768.0)
            .collect();
        Some((
            spec.sample_rate,
            spec.channels,
            spec.bits_per_sample,
            samples,
        ))
    }
}

/// A scripted answer.
#[derive(Debug, Clone)]
pub enum SpeechReply {
    /// A status with a JSON (or any text) body.
    Json(u16, String),
    /// `200` with these bytes and this content type.
    Bytes(String, Vec<u8>),
    /// Read the request and never answer.
    Hang,
}

impl SpeechReply {
    /// `{"text": text}`, as a transcription server answers.
    pub fn text(t: &str) -> Self {
        SpeechReply::Json(200, json!({ "text": t }).to_string())
    }
    /// A 16-bit mono WAV of `samples` at `rate`.
    pub fn wav(rate: u32, samples: &[f32]) -> Self {
        SpeechReply::Bytes("audio/wav".into(), wav_bytes(rate, samples))
    }
    /// Raw 16-bit little-endian mono PCM (OpenAI's `pcm` format).
    pub fn pcm(samples: &[f32]) -> Self {
        let mut b = Vec::with_capacity(samples.len() * 2);
        for s in samples {
            b.extend_from_slice(&((s.clamp(-1.0, 1.0) * 32767.0) as i16).to_le_bytes());
        }
        SpeechReply::Bytes("audio/pcm".into(), b)
    }
}

/// A 16-bit mono WAV file.
pub fn wav_bytes(rate: u32, samples: &[f32]) -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut c = Cursor::new(Vec::new());
    let mut w = hound::WavWriter::new(&mut c, spec).expect("wav header");
    for s in samples {
        w.write_sample((s.clamp(-1.0, 1.0) * 32767.0) as i16)
            .expect("wav sample");
    }
    w.finalize().expect("wav end");
    c.into_inner()
}

/// A tone of `ms` milliseconds at `rate` whose loudness follows `pattern` (one level per 100 ms),
/// so a test can tell the played envelope from a recording.
pub fn patterned_tone(rate: u32, pattern: &[f32]) -> Vec<f32> {
    let per = rate as usize / 10;
    let mut out = Vec::with_capacity(per * pattern.len());
    for (k, level) in pattern.iter().enumerate() {
        for i in 0..per {
            let n = (k * per + i) as f32;
            out.push(level * (n * 330.0 * std::f32::consts::TAU / rate as f32).sin());
        }
    }
    out
}

type Responder = Arc<dyn Fn(&SpeechSeen) -> SpeechReply + Send + Sync>;
/// Computes the reply to a request once the script is empty.
pub type BoxResponder = Box<dyn Fn(&SpeechSeen) -> SpeechReply + Send + Sync>;

struct Shared {
    script: Mutex<VecDeque<SpeechReply>>,
    responder: Option<Responder>,
    seen: Mutex<Vec<SpeechSeen>>,
}

/// The server: `base_url` is `http://127.0.0.1:<port>/v1`; it stops when dropped.
pub struct SpeechServer {
    pub base_url: String,
    shared: Arc<Shared>,
    stop: CancellationToken,
}

impl Drop for SpeechServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl SpeechServer {
    /// Start on a runtime of its own thread (works from plain and async tests alike).
    pub fn start(script: Vec<SpeechReply>, responder: Option<BoxResponder>) -> Self {
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            responder: responder.map(Arc::from),
            seen: Mutex::new(Vec::new()),
        });
        let stop = CancellationToken::new();
        let (tx, rx) = std::sync::mpsc::channel();
        let (sh, st) = (shared.clone(), stop.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async move {
                let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                let _ = tx.send(l.local_addr().expect("addr"));
                loop {
                    let a = tokio::select! {
                        _ = st.cancelled() => return,
                        a = l.accept() => a,
                    };
                    let Ok((sock, _)) = a else { return };
                    let (sh, st) = (sh.clone(), st.clone());
                    tokio::spawn(async move {
                        tokio::select! {
                            _ = st.cancelled() => {}
                            _ = serve(sock, sh) => {}
                        }
                    });
                }
            });
        });
        let addr = rx.recv().expect("the speech server started");
        Self {
            base_url: format!("http://{addr}/v1"),
            shared,
            stop,
        }
    }

    /// Every request read so far.
    pub fn seen(&self) -> Vec<SpeechSeen> {
        self.shared.seen.lock().unwrap().clone()
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

async fn read_request(sock: &mut TcpStream) -> std::io::Result<Option<SpeechSeen>> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 16384];
    let head_end = loop {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(i) = find(&buf, b"\r\n\r\n") {
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
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let get = |n: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .map(|(_, v)| v.clone())
    };
    let mut rest = buf[head_end..].to_vec();
    let chunked = get("transfer-encoding").is_some_and(|v| v.contains("chunked"));
    let body = if chunked {
        // Read until the last chunk, then decode.
        while find(&rest, b"0\r\n\r\n").is_none() {
            let n = sock.read(&mut tmp).await?;
            if n == 0 {
                return Ok(None);
            }
            rest.extend_from_slice(&tmp[..n]);
        }
        let mut out = Vec::new();
        let mut i = 0;
        while let Some(e) = find(&rest[i..], b"\r\n") {
            let size = usize::from_str_radix(String::from_utf8_lossy(&rest[i..i + e]).trim(), 16)
                .unwrap_or(0);
            i += e + 2;
            if size == 0 || i + size > rest.len() {
                break;
            }
            out.extend_from_slice(&rest[i..i + size]);
            i += size + 2;
        }
        out
    } else {
        let len: usize = get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        while rest.len() < len {
            let n = sock.read(&mut tmp).await?;
            if n == 0 {
                return Ok(None);
            }
            rest.extend_from_slice(&tmp[..n]);
        }
        rest.truncate(len);
        rest
    };
    let form = get("content-type")
        .and_then(|ct| {
            ct.split("boundary=")
                .nth(1)
                .map(|b| b.trim_matches('"').to_string())
        })
        .map(|b| parse_form(&body, &b))
        .unwrap_or_default();
    Ok(Some(SpeechSeen {
        n: 0,
        method,
        path,
        json: serde_json::from_slice(&body).unwrap_or(Value::Null),
        headers,
        body,
        form,
    }))
}

fn parse_form(body: &[u8], boundary: &str) -> Vec<FormPart> {
    let delim = format!("--{boundary}");
    let mut parts = Vec::new();
    let mut rest = body;
    while let Some(start) = find(rest, delim.as_bytes()) {
        rest = &rest[start + delim.len()..];
        if rest.starts_with(b"--") {
            break;
        }
        let Some(h) = find(rest, b"\r\n\r\n") else {
            break;
        };
        let head = String::from_utf8_lossy(&rest[..h]).to_string();
        let content = &rest[h + 4..];
        let end = find(content, format!("\r\n{delim}").as_bytes()).unwrap_or(content.len());
        let disposition = head
            .lines()
            .find(|l| l.to_ascii_lowercase().starts_with("content-disposition:"))
            .unwrap_or("")
            .to_string();
        let attr = |k: &str| {
            disposition
                .split(';')
                .map(str::trim)
                .find_map(|a| a.strip_prefix(&format!("{k}=\"")))
                .map(|v| v.trim_end_matches('"').to_string())
        };
        let content_type = head
            .lines()
            .find_map(|l| {
                l.strip_prefix("Content-Type:")
                    .or_else(|| l.strip_prefix("content-type:"))
            })
            .map(|v| v.trim().to_string());
        parts.push(FormPart {
            name: attr("name").unwrap_or_default(),
            filename: attr("filename"),
            content_type,
            data: content[..end].to_vec(),
        });
        rest = &content[end..];
    }
    parts
}

async fn serve(mut sock: TcpStream, sh: Arc<Shared>) -> std::io::Result<()> {
    let Some(mut req) = read_request(&mut sock).await? else {
        return Ok(());
    };
    let scripted = {
        let mut seen = sh.seen.lock().unwrap();
        req.n = seen.len() + 1;
        seen.push(req.clone());
        sh.script.lock().unwrap().pop_front()
    };
    let reply = match (scripted, &sh.responder) {
        (Some(r), _) => r,
        (None, Some(f)) => f(&req),
        (None, None) => SpeechReply::Json(
            500,
            r#"{"error":{"message":"no scripted reply left"}}"#.into(),
        ),
    };
    let (code, ctype, body) = match reply {
        SpeechReply::Hang => {
            let mut tmp = [0u8; 64];
            let _ = tokio::time::timeout(Duration::from_secs(60), sock.read(&mut tmp)).await;
            return Ok(());
        }
        SpeechReply::Json(code, b) => (code, "application/json".to_string(), b.into_bytes()),
        SpeechReply::Bytes(ct, b) => (200, ct, b),
    };
    let head = format!(
        "HTTP/1.1 {code} Scripted\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    sock.write_all(head.as_bytes()).await?;
    sock.write_all(&body).await?;
    sock.shutdown().await
}
