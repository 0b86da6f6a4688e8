//! A realtime server on 127.0.0.1 that speaks the OpenAI Realtime protocol (GA names), for the
//! realtime transport's tests, the CLI, the doctor and the audio tests.
//!
//! Two ways to drive it:
//! - by hand: [`RealtimeServer::accept_session`] hands the test a [`RtConn`] whose session is
//!   set up (`session.created` sent, `session.update` read, `session.updated` sent); the test
//!   reads the client's events and plays the server's (the builders below);
//! - automatically: [`RealtimeServer::auto`] answers every connection itself and plays the next
//!   scripted response on each `response.create` (then a default text reply). Every client event
//!   of every connection is recorded ([`RealtimeServer::events`]);
//! - a set-up that never completes: [`RealtimeServer::unconfirmed`] sends `session.created` and
//!   leaves every `session.update` unanswered until [`RealtimeServer::confirm`], then answers as
//!   the automatic server does.

use crate::ws::{WsConn, WsServer};
use base64::Engine as _;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The server: `url` is `ws://127.0.0.1:<port>/v1/realtime`.
pub struct RealtimeServer {
    pub url: String,
    ws: Option<WsServer>,
    events: Arc<Mutex<Vec<Value>>>,
    task: Option<tokio::task::JoinHandle<()>>,
    commits: Option<Commits>,
    /// The automatic server answers `session.update` (false: [`RealtimeServer::unconfirmed`]).
    confirming: Arc<AtomicBool>,
}

type Commits = Arc<Mutex<Vec<std::time::Instant>>>;

/// Speech for the automatic server's voice activity: an append's RMS past this (−34 dBFS).
const VAD_LEVEL: f64 = 0.02;
/// Quiet after speech that ends an utterance.
const VAD_HANG_MS: u64 = 500;

impl Drop for RealtimeServer {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

/// One connection, driven by the test; every client event it reads is recorded.
pub struct RtConn {
    pub conn: WsConn,
    /// What the client sent, in order.
    pub events: Vec<Value>,
}

impl RealtimeServer {
    /// A server the test drives by hand.
    pub async fn start() -> Self {
        let ws = WsServer::start().await;
        Self {
            url: ws.url.replace("/push", "/v1/realtime"),
            ws: Some(ws),
            events: Arc::default(),
            task: None,
            commits: None,
            confirming: Arc::new(AtomicBool::new(true)),
        }
    }

    /// A server that answers by itself: `responses` are played in order, one per
    /// `response.create` (across connections); past them each `response.create` gets a text
    /// reply "ok". The script may be shared with the test to add responses later.
    pub async fn auto(responses: Vec<Vec<Value>>) -> Self {
        Self::auto_with(responses, None, true).await
    }

    /// A server whose session set-up never completes: it accepts, sends `session.created`, reads
    /// every event and answers no `session.update`, until [`RealtimeServer::confirm`]; from then
    /// on it is [`RealtimeServer::auto`] with `responses`.
    pub async fn unconfirmed(responses: Vec<Vec<Value>>) -> Self {
        Self::auto_with(responses, None, false).await
    }

    /// From now on `session.update` is answered (see [`RealtimeServer::unconfirmed`]).
    pub fn confirm(&self) {
        self.confirming.store(true, Ordering::SeqCst);
    }

    /// [`RealtimeServer::auto`] with server voice activity as a real server's `server_vad`: the
    /// appended audio is measured per append; sound past −34 dBFS is speech
    /// (`input_audio_buffer.speech_started`), and 500 ms of quiet after it ends the utterance:
    /// `speech_stopped`, `committed`, then the next scripted response, started by the server
    /// itself (no `response.create`). Each commit's moment is kept ([`RealtimeServer::commits`]).
    pub async fn auto_vad(responses: Vec<Vec<Value>>) -> Self {
        Self::auto_with(responses, Some(Arc::default()), true).await
    }

    async fn auto_with(responses: Vec<Vec<Value>>, vad: Option<Commits>, confirm: bool) -> Self {
        let mut ws = WsServer::start().await;
        let url = ws.url.replace("/push", "/v1/realtime");
        let events: Arc<Mutex<Vec<Value>>> = Arc::default();
        let script = Arc::new(Mutex::new(VecDeque::from(responses)));
        let rec = events.clone();
        let commits = vad.clone();
        let confirming = Arc::new(AtomicBool::new(confirm));
        let confirm = confirming.clone();
        let task = tokio::spawn(async move {
            let mut n = 0;
            while let Some(c) = ws.accept(Duration::from_secs(3600)).await {
                n += 1;
                let (rec, script) = (rec.clone(), script.clone());
                let auto = Auto {
                    rec,
                    script,
                    n,
                    vad: vad.clone(),
                    confirm: confirm.clone(),
                };
                tokio::spawn(serve_auto(c, auto));
            }
        });
        Self {
            url,
            ws: None,
            events,
            task: Some(task),
            commits,
            confirming,
        }
    }

    /// When the automatic server's voice activity ended each utterance (`auto_vad`).
    pub fn commits(&self) -> Vec<std::time::Instant> {
        self.commits
            .as_ref()
            .map(|c| c.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .unwrap_or_default()
    }

    /// Every client event the automatic server read, in order.
    pub fn events(&self) -> Vec<Value> {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The next connection as it came (no session set up), within `within`.
    pub async fn accept(&mut self, within: Duration) -> Option<WsConn> {
        self.ws.as_mut()?.accept(within).await
    }

    /// How many connections were accepted.
    pub fn accepted(&self) -> usize {
        self.ws
            .as_ref()
            .map(|w| w.accepted.load(std::sync::atomic::Ordering::SeqCst))
            .unwrap_or(0)
    }

    /// The next connection with its session set up; the `session` object of the client's
    /// `session.update`.
    pub async fn accept_session(&mut self) -> (RtConn, Value) {
        let c = self
            .accept(Duration::from_secs(10))
            .await
            .expect("a connection");
        let mut c = RtConn {
            conn: c,
            events: Vec::new(),
        };
        c.send(&json!({"type": "session.created", "event_id": "ev_0", "session": {"type": "realtime", "id": "sess_1"}}));
        let up = c.recv_type("session.update").await.expect("session.update");
        c.send(&json!({"type": "session.updated", "session": up["session"]}));
        (c, up["session"].clone())
    }
}

/// What one connection of the automatic server shares with the others.
struct Auto {
    rec: Arc<Mutex<Vec<Value>>>,
    script: Arc<Mutex<VecDeque<Vec<Value>>>>,
    /// The connection's number (from 1).
    n: usize,
    vad: Option<Commits>,
    confirm: Arc<AtomicBool>,
}

async fn serve_auto(mut c: WsConn, auto: Auto) {
    let Auto {
        rec,
        script,
        n,
        vad,
        confirm,
    } = auto;
    c.send(&json!({"type": "session.created", "session": {"type": "realtime", "id": format!("sess_{n}")}}));
    let mut replies = 0;
    // Server voice activity: speaking now, and the quiet milliseconds since.
    let (mut speaking, mut quiet, mut utterances) = (false, 0u64, 0);
    while let Some(t) = c.recv_text(Duration::from_secs(3600)).await {
        let v: Value = serde_json::from_str(&t).unwrap_or(Value::String(t));
        rec.lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(v.clone());
        match v["type"].as_str().unwrap_or("") {
            "session.update" if confirm.load(Ordering::SeqCst) => {
                c.send(&json!({"type": "session.updated", "session": v["session"]}));
            }
            "conversation.item.create" => {
                c.send(&json!({"type": "conversation.item.added", "item": v["item"]}));
            }
            "response.create" => {
                replies += 1;
                if !play_next(&c, &script, &format!("resp_{n}_{replies}")).await {
                    c.kill();
                    return;
                }
            }
            "input_audio_buffer.append" => {
                let Some(commits) = &vad else { continue };
                let (rms, ms) = level(v["audio"].as_str().unwrap_or(""));
                let item = format!("item_u{}", utterances + 1);
                if rms > VAD_LEVEL {
                    quiet = 0;
                    if !speaking {
                        speaking = true;
                        c.send(&speech_started(&item, 0));
                    }
                } else if speaking {
                    quiet += ms;
                    if quiet >= VAD_HANG_MS {
                        speaking = false;
                        utterances += 1;
                        c.send(
                            &json!({"type": "input_audio_buffer.speech_stopped", "item_id": item}),
                        );
                        c.send(&json!({"type": "input_audio_buffer.committed", "item_id": item}));
                        commits
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(std::time::Instant::now());
                        replies += 1;
                        if !play_next(&c, &script, &format!("resp_{n}_{replies}")).await {
                            c.kill();
                            return;
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// The RMS (0…1) and milliseconds of one append's base64 pcm16 24 kHz audio.
fn level(b64: &str) -> (f64, u64) {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap_or_default();
    let samples: Vec<f64> = bytes
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]) as f64 / 32768.0)
        .collect();
    if samples.is_empty() {
        return (0.0, 0);
    }
    let rms = (samples.iter().map(|s| s * s).sum::<f64>() / samples.len() as f64).sqrt();
    (rms, samples.len() as u64 / 24)
}

/// Play the next scripted response (else a text reply "ok" as `resp`); `false`: the script
/// says to close the socket here.
async fn play_next(c: &WsConn, script: &Mutex<VecDeque<Vec<Value>>>, resp: &str) -> bool {
    let next = script.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
    let events = next.unwrap_or_else(|| text_reply(resp, &["ok"]));
    for e in events {
        if e["type"] == "test.close" {
            return false;
        }
        if let Some(ms) = e["test.sleep_ms"].as_u64() {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            continue;
        }
        c.send(&e);
    }
    true
}

impl RtConn {
    /// The client's next event (bounded: `None` after 10 s or when it closed).
    pub async fn recv(&mut self) -> Option<Value> {
        let t = self.conn.recv_text(Duration::from_secs(10)).await?;
        let v: Value = serde_json::from_str(&t).unwrap_or(Value::String(t));
        self.events.push(v.clone());
        Some(v)
    }
    /// The client's next event within `within`.
    pub async fn recv_within(&mut self, within: Duration) -> Option<Value> {
        let t = self.conn.recv_text(within).await?;
        let v: Value = serde_json::from_str(&t).unwrap_or(Value::String(t));
        self.events.push(v.clone());
        Some(v)
    }
    /// The next event of a type, recording the others.
    pub async fn recv_type(&mut self, kind: &str) -> Option<Value> {
        loop {
            let v = self.recv().await?;
            if v["type"] == kind {
                return Some(v);
            }
        }
    }
    /// Read the user's text turn (`conversation.item.create` then `response.create`); the
    /// text.
    pub async fn user_turn(&mut self) -> String {
        let item = self
            .recv_type("conversation.item.create")
            .await
            .expect("the user's item");
        self.recv_type("response.create")
            .await
            .expect("response.create");
        item["item"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }
    pub fn send(&self, v: &Value) {
        self.conn.send(v);
    }
    pub fn send_raw(&self, s: &str) {
        self.conn.send_raw(s);
    }
    pub fn play(&self, events: &[Value]) {
        for e in events {
            self.send(e);
        }
    }
    /// Drop the socket without a close handshake.
    pub fn kill(self) {
        self.conn.kill();
    }
    /// The recorded events of a type.
    pub fn of_type(&self, kind: &str) -> Vec<Value> {
        self.events
            .iter()
            .filter(|e| e["type"] == kind)
            .cloned()
            .collect()
    }
}

// ------------------------------------------------------------------ builders

pub fn created(resp: &str) -> Value {
    json!({"type": "response.created", "response": {"id": resp, "object": "realtime.response", "status": "in_progress", "output": []}})
}

pub fn done(resp: &str, status: &str) -> Value {
    json!({"type": "response.done", "response": {"id": resp, "object": "realtime.response", "status": status, "output": []}})
}

pub fn text_delta(item: &str, d: &str) -> Value {
    json!({"type": "response.output_text.delta", "item_id": item, "output_index": 0, "content_index": 0, "delta": d})
}

pub fn transcript_delta(item: &str, d: &str) -> Value {
    json!({"type": "response.output_audio_transcript.delta", "item_id": item, "output_index": 0, "content_index": 0, "delta": d})
}

/// pcm16 samples as one `response.output_audio.delta`.
pub fn audio_delta(item: &str, samples: &[i16]) -> Value {
    json!({"type": "response.output_audio.delta", "item_id": item, "output_index": 0, "content_index": 0, "delta": b64_pcm(samples)})
}

/// Base64 of pcm16 little-endian samples.
pub fn b64_pcm(samples: &[i16]) -> String {
    let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// `ms` of a 440 Hz tone at 24 kHz.
pub fn tone(ms: u64) -> Vec<i16> {
    (0..ms * 24)
        .map(|i| ((i as f64 * 440.0 * std::f64::consts::TAU / 24000.0).sin() * 8000.0) as i16)
        .collect()
}

fn message_added(item: &str) -> Value {
    json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": item, "type": "message", "role": "assistant", "status": "in_progress", "content": []}})
}

/// A text-mode reply: `response.created`, the message item, the text deltas, `response.done`.
pub fn text_reply(resp: &str, pieces: &[&str]) -> Vec<Value> {
    let item = format!("msg_{resp}");
    let mut v = vec![created(resp), message_added(&item)];
    v.extend(pieces.iter().map(|p| text_delta(&item, p)));
    v.push(json!({"type": "response.output_text.done", "item_id": item, "text": pieces.concat()}));
    v.push(done(resp, "completed"));
    v
}

/// An audio reply: each transcript piece followed by `ms_per_piece` of tone in 20 ms deltas.
pub fn audio_reply(resp: &str, pieces: &[&str], ms_per_piece: u64) -> Vec<Value> {
    let item = format!("msg_{resp}");
    let mut v = vec![created(resp), message_added(&item)];
    for p in pieces {
        v.push(transcript_delta(&item, p));
        let mut left = ms_per_piece;
        while left > 0 {
            let ms = left.min(20);
            v.push(audio_delta(&item, &tone(ms)));
            left -= ms;
        }
    }
    v.push(json!({"type": "response.output_audio.done", "item_id": item}));
    v.push(done(resp, "completed"));
    v
}

/// One function call's events as a GA server streams them: the item added without arguments,
/// an arguments delta, `.done` with the name and arguments, the item done.
pub fn call_events(call_id: &str, name: &str, args: &str) -> Vec<Value> {
    let item = format!("fc_{call_id}");
    let full = json!({"id": item, "type": "function_call", "status": "completed", "call_id": call_id, "name": name, "arguments": args});
    vec![
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": item, "type": "function_call", "status": "in_progress", "call_id": call_id, "name": name, "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": item, "call_id": call_id, "output_index": 0, "delta": args}),
        json!({"type": "response.function_call_arguments.done", "item_id": item, "call_id": call_id, "output_index": 0, "name": name, "arguments": args}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": full}),
    ]
}

/// A response of calls only: `(call_id, name, arguments)` each.
pub fn call_reply(resp: &str, calls: &[(&str, &str, &str)]) -> Vec<Value> {
    let mut v = vec![created(resp)];
    for (id, name, args) in calls {
        v.extend(call_events(id, name, args));
    }
    v.push(done(resp, "completed"));
    v
}

/// In an [`RealtimeServer::auto`] script: close the socket here.
pub fn close() -> Value {
    json!({"type": "test.close"})
}

/// In an [`RealtimeServer::auto`] script: wait `ms` before the next event.
pub fn sleep(ms: u64) -> Value {
    json!({"test.sleep_ms": ms})
}

/// The user's words as the server transcribed them (server voice activity or a commit):
/// `conversation.item.input_audio_transcription.completed` for user item `item`.
pub fn input_transcript(item: &str, text: &str) -> Value {
    json!({"type": "conversation.item.input_audio_transcription.completed", "item_id": item, "content_index": 0, "transcript": text})
}

/// `input_audio_buffer.speech_started` (server voice activity heard the user begin).
pub fn speech_started(item: &str, audio_start_ms: u64) -> Value {
    json!({"type": "input_audio_buffer.speech_started", "item_id": item, "audio_start_ms": audio_start_ms})
}

/// `input_audio_buffer.committed`: the user's audio became item `item` (a push-to-talk commit,
/// or the server's voice activity at the end of speech).
pub fn committed(item: &str) -> Value {
    json!({"type": "input_audio_buffer.committed", "item_id": item, "previous_item_id": null})
}
