//! What the fuzz targets share: one process-wide set-up (a real SQLite store in a temp folder,
//! the turn's dependencies, a current-thread runtime) built on the first input, and the replay
//! drivers that feed one input through the same code a turn reads the network with.
//!
//! The store lives under `<temp>/yui-fuzz-<pid>`; scripts/fuzz.sh removes those folders after a
//! run (libFuzzer ends the process with `exit`, so no destructor runs).

use bytes::Bytes;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::mpsc;
use yui_core::backend::Transport;
use yui_core::clock::{ManualClock, SharedClock};
use yui_core::tools::registry::{RegistryEnv, ToolRegistry, TurnToolState};
use yui_core::turn::engine::replay_response;
use yui_core::turn::sse::SseStream;
use yui_core::turn::transport::{push, realtime};
use yui_core::turn::{Backend, Timeouts, TurnDeps, TurnEvent, TurnRequest};
use yui_core::{Store, WindowKind};

pub struct Env {
    pub rt: tokio::runtime::Runtime,
    pub store: Store,
    pub deps: TurnDeps,
    pub clock: SharedClock,
}

/// The process's set-up, built once.
pub fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("yui-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("fuzz temp dir");
        let store = Store::open(dir.join("yui.sqlite3")).expect("fuzz store");
        let clock: SharedClock = Arc::new(ManualClock::new(chrono::Utc::now(), 0));
        let deps =
            TurnDeps::new(store.clone(), clock.clone(), &Timeouts::default()).expect("turn deps");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        Env {
            rt,
            store,
            deps,
            clock,
        }
    })
}

/// The main window's real tools (generate_express, body_action, look, browser, rate_relation,
/// address_character), with a fresh per-turn state, so every input starts like a new turn. No
/// avatar is installed and the browser switch is off: no call reaches the desktop or a process.
pub fn registry(store: &Store) -> ToolRegistry {
    let mut env = RegistryEnv::load(store, "yui", WindowKind::Main).expect("registry env");
    env.others = vec![("ren".into(), "Ren".into())];
    env.state = Arc::new(TurnToolState::default());
    ToolRegistry::for_window(&env).expect("registry")
}

pub fn request(transport: Transport, turn_id: String) -> TurnRequest {
    TurnRequest {
        turn_id,
        preset_id: "yui".into(),
        window: WindowKind::Main,
        message: String::new(),
        instructions: None,
        context: None,
        backend: Backend {
            transport,
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            api_key: None,
            max_output_tokens: None,
            temperature: None,
            push_url: Some("ws://127.0.0.1:9/push".into()),
            realtime_url: Some("ws://127.0.0.1:9/v1/realtime".into()),
        },
        timeouts: Timeouts::default(),
        history_limit: 0,
        addressed_by: None,
    }
}

fn turn_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!("fuzz-{}", N.fetch_add(1, Ordering::Relaxed))
}

/// Drain a turn's events concurrently, so a full channel never stalls the replay.
fn drain(
    rt: &tokio::runtime::Runtime,
) -> (mpsc::Sender<TurnEvent>, tokio::task::JoinHandle<usize>) {
    let (tx, mut rx) = mpsc::channel::<TurnEvent>(64);
    let task = rt.spawn(async move {
        let mut n = 0;
        while rx.recv().await.is_some() {
            n += 1;
        }
        n
    });
    (tx, task)
}

/// One SSE response body through `replay_response`. The first byte picks how the body is cut
/// into network chunks (0: one chunk; n: n-byte chunks), so framing sees split lines and split
/// UTF-8 sequences.
pub fn replay_sse(transport: Transport, data: &[u8]) {
    let Some((&cut, body)) = data.split_first() else {
        return;
    };
    let e = env();
    let registry = registry(&e.store);
    let req = request(transport, turn_id());
    let parts: Vec<Bytes> = if cut == 0 {
        vec![Bytes::copy_from_slice(body)]
    } else {
        body.chunks(cut as usize)
            .map(Bytes::copy_from_slice)
            .collect()
    };
    e.rt.block_on(async {
        let (tx, task) = drain(&e.rt);
        let bytes = futures_util::stream::iter(parts.into_iter().map(Ok::<Bytes, reqwest::Error>));
        let stream = SseStream::from_bytes(bytes, Some(Duration::from_secs(60)));
        let _ = replay_response(&e.deps, &req, &registry, stream, &tx).await;
        drop(tx);
        let _ = task.await;
    });
}

/// Push frames (one per line, as the connection reads text messages) through `replay_frames`.
pub fn replay_push(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let frames: Vec<String> = text.split('\n').map(str::to_string).collect();
    let e = env();
    let registry = registry(&e.store);
    let req = request(Transport::Push, turn_id());
    e.rt.block_on(async {
        let (tx, task) = drain(&e.rt);
        let _ = push::replay_frames(&e.deps, &req, &registry, &frames, &tx).await;
        drop(tx);
        let _ = task.await;
    });
}

/// Realtime server events (one per line, as the session reads text messages) through
/// `replay_events`: parse, map, dispatch, as one response reads them.
pub fn replay_realtime(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let events: Vec<String> = text.split('\n').map(str::to_string).collect();
    let e = env();
    let registry = registry(&e.store);
    let req = request(Transport::Realtime, turn_id());
    e.rt.block_on(async {
        let (tx, task) = drain(&e.rt);
        let _ = realtime::replay_events(&e.deps, &req, &registry, &events, &tx).await;
        drop(tx);
        let _ = task.await;
    });
}

impl Env {
    /// The turn's clock, for tool contexts built outside a turn.
    pub fn deps_clock(&self) -> SharedClock {
        self.clock.clone()
    }
}
