//! The push path's cost (figures in docs/PERFORMANCE.md):
//! - client overhead per `segment` frame: parse + map + dispatch + event out, no socket
//!   (10,000 frames, each a short speech segment with one cue);
//! - cue latency over a real WebSocket on 127.0.0.1: the test kit's server writes a segment with
//!   a cue, and the clock stops when the turn's `cue` event comes out of the core (200 cues).
//!
//! `cargo bench -p yui-core --bench push_stream` prints the figures.

use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use yui_core::backend::Transport;
use yui_core::clock::{SharedClock, SystemClock};
use yui_core::tools::registry::{RegistryEnv, ToolRegistry};
use yui_core::turn::transport::push;
use yui_core::turn::{self, Backend, Timeouts, TurnDeps, TurnEvent, TurnRequest};
use yui_core::{Store, WindowKind};
use yui_testkit::ws::WsServer;

const FRAMES: usize = 10_000;
const CUES: usize = 200;

fn request(url: &str) -> TurnRequest {
    TurnRequest {
        turn_id: "bench".into(),
        preset_id: "yui".into(),
        window: WindowKind::Main,
        message: "hi".into(),
        instructions: None,
        context: None,
        backend: Backend {
            transport: Transport::Push,
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            api_key: None,
            max_output_tokens: None,
            temperature: None,
            push_url: Some(url.into()),
            realtime_url: None,
        },
        timeouts: Timeouts::default(),
        history_limit: 0,
        addressed_by: None,
    }
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("yui.sqlite3")).unwrap();
    let clock: SharedClock = Arc::new(SystemClock);
    let deps = TurnDeps::new(store.clone(), clock, &Timeouts::default()).unwrap();
    let env = RegistryEnv::load(&store, "yui", WindowKind::Main).unwrap();
    let registry = ToolRegistry::for_window(&env).unwrap();

    // 1. Client overhead per segment frame.
    let frames: Vec<String> = (0..FRAMES)
        .map(|i| {
            json!({"type":"segment","turn_id":"bench","kind":"speech","text":format!("word {i} "),"cues":[{"at":2,"emotion_id":"happy"}]}).to_string()
        })
        .collect();
    let req = request("ws://127.0.0.1:9/push");
    let mut per = Vec::new();
    for _ in 0..15 {
        let (tx, mut rx) = mpsc::channel(FRAMES * 4);
        let t0 = Instant::now();
        let n = rt.block_on(push::replay_frames(&deps, &req, &registry, &frames, &tx));
        let took = t0.elapsed();
        assert_eq!(n, FRAMES);
        drop(tx);
        while rx.try_recv().is_ok() {}
        per.push(took / FRAMES as u32);
    }
    let med = pct(&mut per, 0.5);
    println!("push per segment frame (parse+map+dispatch, 1 cue + 2 speech events): median {med:?} over 15 runs of {FRAMES}");

    // 2. Cue latency over a real WebSocket.
    let lat = rt.block_on(async {
        let mut srv = WsServer::start().await;
        let req = request(&srv.url);
        let (tx, mut rx) = mpsc::channel(4096);
        let cancel = CancellationToken::new();
        let (d2, r2, g2, c2) = (deps.clone(), req.clone(), registry.clone(), cancel.clone());
        let turn = tokio::spawn(async move { turn::run(&d2, &r2, &g2, &tx, &c2).await });
        let (mut c, _) = srv.accept_hello().await;
        let tid = c.recv_type("user_message").await.unwrap()["turn_id"].clone();
        let mut lat = Vec::with_capacity(CUES);
        for i in 0..CUES {
            let f = json!({"type":"segment","turn_id":tid,"kind":"speech","text":"ok ","cues":[{"at":0,"emotion_id":"happy"}]});
            tokio::time::sleep(Duration::from_millis(2)).await;
            let t0 = Instant::now();
            c.send(&f);
            loop {
                match rx.recv().await {
                    Some(TurnEvent::Cue { .. }) => break,
                    Some(_) => {}
                    None => panic!("turn ended at cue {i}"),
                }
            }
            lat.push(t0.elapsed());
        }
        c.send(&json!({"type":"turn_end","turn_id":tid,"status":"ok"}));
        let _ = turn.await;
        lat
    });
    let mut lat = lat;
    let (p50, p99, max) = (pct(&mut lat, 0.5), pct(&mut lat, 0.99), pct(&mut lat, 1.0));
    println!("push cue latency (server write -> cue event out, {CUES} cues over ws://127.0.0.1): p50 {p50:?} p99 {p99:?} max {max:?}");
}
