//! The realtime path's cost (figures in docs/PERFORMANCE.md):
//! - client overhead per server event: parse + map + dispatch + event out, no socket (10,000
//!   `response.output_audio_transcript.delta` events, the bulk of a spoken reply's text side);
//! - cue latency over a real WebSocket on 127.0.0.1: the test kit's realtime server writes a
//!   generate_express call's `response.function_call_arguments.done`, and the clock stops when
//!   the turn's `cue` event comes out of the core (200 cues);
//! - microphone frame → `input_audio_buffer.append` received by the server: 20 ms of pcm16
//!   24 kHz (960 bytes) through `RealtimeClient::append` (base64, JSON, the socket; 200 frames).
//!
//! - session set-up with the history seed: `RealtimeClient::spawn` → connected, for a character
//!   with no history and one with 40 lines (the seed's `conversation.item.create`s are sent
//!   before the session counts as connected, so the difference is what seeding adds before the
//!   first `response.create`; 30 sessions each).
//!
//! `cargo bench -p yui-core --bench realtime_stream` prints the figures.

use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use yui_core::backend::Transport;
use yui_core::clock::{SharedClock, SystemClock};
use yui_core::tools::registry::{RegistryEnv, ToolRegistry};
use yui_core::turn::transport::realtime::{self, RealtimeClient};
use yui_core::turn::{self, Backend, Timeouts, TurnDeps, TurnEvent, TurnRequest};
use yui_core::{Store, WindowKind};
use yui_testkit::realtime::{self as rt, RealtimeServer};

const EVENTS: usize = 10_000;
const CUES: usize = 200;
const FRAMES: usize = 200;

fn request(url: &str) -> TurnRequest {
    TurnRequest {
        turn_id: "bench".into(),
        preset_id: "yui".into(),
        window: WindowKind::Main,
        message: "hi".into(),
        instructions: None,
        context: None,
        backend: Backend {
            transport: Transport::Realtime,
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            api_key: None,
            max_output_tokens: None,
            temperature: None,
            push_url: None,
            realtime_url: Some(url.into()),
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
    let deps = TurnDeps::new(store.clone(), clock.clone(), &Timeouts::default()).unwrap();
    let env = RegistryEnv::load(&store, "yui", WindowKind::Main).unwrap();
    let registry = ToolRegistry::for_window(&env).unwrap();

    // 1. Client overhead per server event.
    let mut events: Vec<String> = vec![rt::created("resp_1").to_string()];
    events.extend(
        (0..EVENTS - 2)
            .map(|i| rt::transcript_delta("msg_resp_1", &format!("word {i} ")).to_string()),
    );
    events.push(rt::done("resp_1", "completed").to_string());
    let req = request("ws://127.0.0.1:9/v1/realtime");
    let mut per = Vec::new();
    for _ in 0..15 {
        let (tx, mut rx) = mpsc::channel(EVENTS * 2);
        let t0 = Instant::now();
        let n = rt.block_on(realtime::replay_events(
            &deps, &req, &registry, &events, &tx,
        ));
        let took = t0.elapsed();
        assert_eq!(n, EVENTS);
        drop(tx);
        while rx.try_recv().is_ok() {}
        per.push(took / EVENTS as u32);
    }
    let med = pct(&mut per, 0.5);
    println!("realtime per server event (parse+map+dispatch, a transcript delta → speech event): median {med:?} over 15 runs of {EVENTS}");

    // 2. Cue latency over a real WebSocket.
    let lat = rt.block_on(async {
        let mut srv = RealtimeServer::start().await;
        let req = request(&srv.url);
        let (tx, mut rx) = mpsc::channel(4096);
        let cancel = CancellationToken::new();
        let (d2, r2, g2, c2) = (deps.clone(), req.clone(), registry.clone(), cancel.clone());
        let turn = tokio::spawn(async move { turn::run(&d2, &r2, &g2, &tx, &c2).await });
        let (mut c, _) = srv.accept_session().await;
        c.user_turn().await;
        c.send(&rt::created("r1"));
        c.send(&rt::transcript_delta("m1", "Watch this."));
        let mut lat = Vec::with_capacity(CUES);
        for i in 0..CUES {
            let ev = rt::call_events(
                &format!("c{i}"),
                "generate_express",
                r#"{"emotion_id":"happy"}"#,
            );
            c.send(&ev[0]);
            c.send(&ev[1]);
            tokio::time::sleep(Duration::from_millis(2)).await;
            let t0 = Instant::now();
            c.send(&ev[2]);
            loop {
                match rx.recv().await {
                    Some(TurnEvent::Cue { .. }) => break,
                    Some(_) => {}
                    None => panic!("turn ended at cue {i}"),
                }
            }
            lat.push(t0.elapsed());
            c.send(&ev[3]);
        }
        c.send(&rt::done("r1", "completed"));
        let _ = turn.await;
        lat
    });
    let mut lat = lat;
    let (p50, p99, max) = (pct(&mut lat, 0.5), pct(&mut lat, 0.99), pct(&mut lat, 1.0));
    println!("realtime cue latency (arguments.done written -> cue event out, {CUES} cues over ws://127.0.0.1): p50 {p50:?} p99 {p99:?} max {max:?}");

    // 3. Microphone frame -> append received by the server.
    let lat = rt.block_on(async {
        let mut srv = RealtimeServer::start().await;
        let req = request(&srv.url);
        let client = RealtimeClient::spawn(
            realtime::config(&req, None),
            realtime::session_fn(
                store.clone(),
                clock.clone(),
                "yui".into(),
                WindowKind::Main,
                false,
            ),
        );
        let (mut c, _) = srv.accept_session().await;
        let mut st = client.state();
        st.wait_for(|s| *s == realtime::ConnState::Connected)
            .await
            .unwrap();
        // The session's seed (part 2's turn is history now) goes before any append.
        while c.recv_within(Duration::from_millis(200)).await.is_some() {}
        let frame: Vec<u8> = rt::tone(20).iter().flat_map(|s| s.to_le_bytes()).collect();
        let mut lat = Vec::with_capacity(FRAMES);
        for _ in 0..FRAMES {
            tokio::time::sleep(Duration::from_millis(2)).await;
            let t0 = Instant::now();
            assert!(client.append(&frame));
            let got = c.recv().await.unwrap();
            lat.push(t0.elapsed());
            assert_eq!(got["type"], "input_audio_buffer.append");
        }
        lat
    });
    let mut lat = lat;
    let (p50, p99, max) = (pct(&mut lat, 0.5), pct(&mut lat, 0.99), pct(&mut lat, 1.0));
    println!("realtime microphone frame (20 ms pcm16) -> append received, {FRAMES} frames over ws://127.0.0.1: p50 {p50:?} p99 {p99:?} max {max:?}");

    // 4. Session set-up, without and with a 40-line history to seed.
    let empty = yui_core::presets::add(&store, "Empty").unwrap();
    let talked = yui_core::presets::add(&store, "Talked").unwrap();
    for i in 0..40 {
        let role = if i % 2 == 0 {
            yui_core::transcript::Role::User
        } else {
            yui_core::transcript::Role::Assistant
        };
        let text =
            format!("line {i}: a sentence of ordinary length about the day, the weather and plans");
        yui_core::transcript::append(&store, &talked.id, role, &text, None, clock.now()).unwrap();
    }
    for (label, preset) in [("no history", &empty.id), ("40 lines", &talked.id)] {
        let mut lat = rt.block_on(async {
            let mut srv = RealtimeServer::start().await;
            let req = request(&srv.url);
            let mut lat = Vec::with_capacity(30);
            for _ in 0..30 {
                let t0 = Instant::now();
                let client = RealtimeClient::spawn(
                    realtime::config(&req, None),
                    realtime::session_fn(
                        store.clone(),
                        clock.clone(),
                        preset.clone(),
                        WindowKind::Main,
                        false,
                    ),
                );
                let mut st = client.state();
                let (server, ready) = tokio::join!(
                    srv.accept_session(),
                    st.wait_for(|s| *s == realtime::ConnState::Connected)
                );
                ready.unwrap();
                lat.push(t0.elapsed());
                drop((server, client));
            }
            lat
        });
        let (p50, p99) = (pct(&mut lat, 0.5), pct(&mut lat, 0.99));
        println!("realtime session set-up (spawn -> connected, session.update + seed, {label}), 30 sessions over ws://127.0.0.1: p50 {p50:?} p99 {p99:?}");
    }
}
