//! Cue latency with two characters' turns streaming at once, through the whole core stage: two
//! real Chat Completions streams over 127.0.0.1 (one per character), a cue call written to each
//! every 2 ms, and the clock stopped when that character's `cue` event leaves the stage. Goal
//! (issue 9): p99 ≤ 1 ms for each. Prints p50/p99/max per character. `cargo bench -p yui-core
//! --bench stage_cues`.
//!
//! The streams are Responses streams (a Chat Completions stream holds its calls until
//! `finish_reason`): each cue is a `generate_express` function_call item, released by its
//! `response.function_call_arguments.done` (or `output_item.done`); the clock starts when those
//! two events are written.

#[path = "../tests/turn_support/backends.rs"]
mod backends;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use yui_core::backend::Transport;
use yui_core::clock::SystemClock;
use yui_core::paths::Paths;
use yui_core::stage::UserTurn;
use yui_core::stage::{BackendSource, Stage, StageEvent, StageOptions};
use yui_core::turn::{Timeouts, TurnEvent};
use yui_core::{Store, WindowKind};

const CUES: usize = 200;

async fn read_request(sock: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16384];
    loop {
        let n = sock.read(&mut chunk).await.unwrap();
        assert!(n > 0, "client went away");
        buf.extend_from_slice(&chunk[..n]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if buf.len() >= end + 4 + len {
            return String::from_utf8_lossy(&buf[end + 4..end + 4 + len]).into_owned();
        }
    }
}

/// The item's first events, and the two that complete it.
fn call_events(i: usize) -> (String, String) {
    let (id, call, args) = (
        format!("fc_{i}"),
        format!("call_{i}"),
        r#"{"emotion_id":"happy"}"#,
    );
    let ev = |v: serde_json::Value| format!("data: {v}\n\n");
    let head = [
        ev(json!({"type":"response.output_item.added","output_index":i,"item":{"type":"function_call","id":id,"call_id":call,"name":"generate_express","arguments":"","status":"in_progress"}})),
        ev(json!({"type":"response.function_call_arguments.delta","item_id":id,"output_index":i,"delta":args})),
    ]
    .concat();
    let done = [
        ev(json!({"type":"response.function_call_arguments.done","item_id":id,"output_index":i,"arguments":args})),
        ev(json!({"type":"response.output_item.done","output_index":i,"item":{"type":"function_call","id":id,"call_id":call,"name":"generate_express","arguments":args,"status":"completed"}})),
    ]
    .concat();
    (head, done)
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::resolve(Some(dir.path().to_path_buf()));
        let store = Store::open(paths.db_path()).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let opts = StageOptions {
            backend: BackendSource::Fixed {
                backend: backends::backend(Transport::Responses, &base_url),
                timeouts: Timeouts::default(),
            },
            headless: true,
            ..StageOptions::default()
        };
        let (stage, mut rx) = Stage::new(store, Arc::new(SystemClock), paths, opts);
        // preset → arrival time of each cue.
        let arrived: Arc<Mutex<HashMap<String, Vec<Instant>>>> = Arc::default();
        let a2 = arrived.clone();
        let reader = tokio::spawn(async move {
            while let Some(ev) = rx.recv().await {
                if let StageEvent::Turn {
                    preset_id,
                    event: TurnEvent::Cue { .. },
                    ..
                } = ev
                {
                    a2.lock().unwrap().entry(preset_id).or_default().push(Instant::now());
                }
            }
        });
        stage.user_turn(UserTurn::to("yui", WindowKind::Main, "go")).unwrap();
        stage.user_turn(UserTurn::to("kai", WindowKind::Pet, "go")).unwrap();
        let mut socks = Vec::new();
        for _ in 0..2 {
            let (mut s, _) = listener.accept().await.unwrap();
            let body = read_request(&mut s).await;
            let who = if body.contains("You are Yui") { "yui" } else { "kai" };
            let created = json!({"type":"response.created","response":{"id":format!("resp_{who}"),"status":"in_progress","output":[]}});
            let head = format!("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\ndata: {created}\n\n");
            s.write_all(head.as_bytes()).await.unwrap();
            socks.push((who.to_string(), s));
        }
        // The write time of each cue's releasing event, per preset.
        let mut written: HashMap<String, Vec<Instant>> = HashMap::new();
        for i in 0..CUES {
            let (head, done) = call_events(i);
            for (_, s) in socks.iter_mut() {
                s.write_all(head.as_bytes()).await.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
            for (who, s) in socks.iter_mut() {
                let t = Instant::now();
                s.write_all(done.as_bytes()).await.unwrap();
                written.entry(who.clone()).or_default().push(t);
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        stage.stop_all();
        drop(socks);
        tokio::time::sleep(Duration::from_millis(200)).await;
        reader.abort();
        let arrived = arrived.lock().unwrap();
        println!("cue latency, two characters streaming at once ({CUES} cues each, 2 ms apart):");
        for who in ["yui", "kai"] {
            let w = &written[who];
            let a = &arrived[who];
            let mut lat: Vec<Duration> = (0..CUES.min(a.len()))
                .map(|k| a[k].saturating_duration_since(w[k]))
                .collect();
            lat.sort();
            println!(
                "  {who}: n {} p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms",
                lat.len(),
                pct(&lat, 0.5).as_secs_f64() * 1e3,
                pct(&lat, 0.99).as_secs_f64() * 1e3,
                lat.last().unwrap().as_secs_f64() * 1e3
            );
        }
    });
}
