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

// The targets' bodies: each fuzz target is one call to its function here, and
// crates/yui-core/tests/fuzz_replay.rs replays every committed seed and regression input
// through the same functions in the ordinary test run.

/// Character-card import: a file's bytes (PNG with a `chara`/`ccv3` text chunk, or V1/V2/V3
/// JSON) through `cards::parse`, the PNG chunk reader, the persona built from the card, and the
/// card's picture reference (`cards::picture_of`).
pub fn card_import(data: &[u8]) {
    use yui_core::cards;
    if let Ok(card) = cards::parse(data) {
        let _ = cards::persona(&card);
    }
    let _ = cards::png_text_chunks(data);
    let _ = cards::picture_of(data);
}

/// Command client tools: every stdout line as a version 4 frame (`protocol::parse`); an input
/// whose first line is a JSON array is also read as `client-tools.json` entries, and each usable
/// definition's schema checks every other line that is JSON (as a call's arguments are checked).
pub fn command_frames(data: &[u8]) {
    use serde_json::Value;
    use yui_core::tools::command::{config, protocol, run};
    let mut lines = data.split(|&b| b == b'\n');
    let first = lines.next().unwrap_or_default();
    let _ = protocol::parse(first);
    let rest: Vec<&[u8]> = lines.collect();
    for line in &rest {
        let _ = protocol::parse(line);
    }
    let Ok(Value::Array(entries)) = serde_json::from_slice::<Value>(first) else {
        return;
    };
    let (defs, _diags) = config::parse_entries(&entries, None);
    for def in defs {
        let Ok(validator) = jsonschema::validator_for(&def.parameters) else {
            continue;
        };
        for line in &rest {
            if let Ok(args) = serde_json::from_slice::<Value>(line) {
                let _ = run::check_args(&validator, &args);
            }
        }
    }
}

/// MCP: the input as `mcp.json` text (`config::parse`), as a server's tool list (names, schemas:
/// `listing::build`), as a `tools/call` result (`result::parts`, and the answer when it holds no
/// image), and as SSE bytes through the event-size limit of our streamable HTTP client
/// (`http::SseLimit`), which must count the same whatever the chunking.
pub fn mcp_config(data: &[u8]) {
    use std::collections::HashSet;
    use yui_core::tools::mcp::{config, http::SseLimit, listing, result};
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = config::parse(text, None);
    }
    let mut whole = SseLimit::new((), 64);
    let all_at_once = whole.observe(data);
    let mut parts = SseLimit::new((), 64);
    let mut chunked = true;
    for c in data.chunks(7) {
        if !parts.observe(c) {
            chunked = false;
            break;
        }
    }
    assert_eq!(all_at_once, chunked);
    if let Ok(tools) = serde_json::from_slice::<Vec<rmcp::model::Tool>>(data) {
        let l = listing::build("s", &tools, &HashSet::new());
        for t in &l.tools {
            assert!(t.name.len() <= listing::MAX_NAME && t.name.starts_with("mcp__s__"));
        }
    }
    if let Ok(r) = serde_json::from_slice::<rmcp::model::CallToolResult>(data) {
        let p = result::parts(&r);
        if p.images.is_empty() {
            let _ = result::answer(p);
        }
    }
}

/// Settings values: the first line names the key (one of `settings::KNOWN`, or anything), the
/// rest is the value's JSON, checked by that key's declared validator (`settings::validate`).
pub fn settings_json(data: &[u8]) {
    use yui_core::settings;
    let text = String::from_utf8_lossy(data);
    let (key, value) = text.split_once('\n').unwrap_or(("", &text));
    let Ok(value) = serde_json::from_str::<serde_json::Value>(value) else {
        return;
    };
    let _ = settings::validate(key, &value);
    // Every known key's validator sees every value, so one input exercises all of them.
    for k in settings::KNOWN {
        let _ = (k.validate)(&value);
    }
}

/// A tool call's `arguments` text, parsed the way a turn parses it, then given to every client
/// tool of the main window (generate_express, body_action, look, browser, rate_relation,
/// address_character): their real `call` (no avatar, browser switch off, a real store) and their
/// pure argument checks.
pub fn tool_args(data: &[u8]) {
    use std::sync::Arc;
    use yui_core::relations::{Target, TowardEntry};
    use yui_core::tools::{avatar, browser, relation, CallScope, ToolContext};
    use yui_core::turn::call::parse_call_arguments;
    use yui_core::turn::CancellationToken;
    use yui_core::WindowKind;
    let text = String::from_utf8_lossy(data);
    let Ok(args) = parse_call_arguments(&text) else {
        return;
    };
    let _ = avatar::parse_action(&args);
    let _ = browser::parse(&args);
    let entries = [
        TowardEntry {
            label: "user".into(),
            target: Target::User,
        },
        TowardEntry {
            label: "Ren".into(),
            target: Target::Preset("ren".into()),
        },
    ];
    let _ = relation::parse_args(&args, &entries);

    let e = env();
    let registry = registry(&e.store);
    let ctx = ToolContext {
        store: e.store.clone(),
        clock: e.deps_clock(),
        preset_id: "yui".into(),
        window: WindowKind::Main,
        turn_id: "fuzz-args".into(),
        call: CallScope::default(),
    };
    e.rt.block_on(async {
        for tool in registry.tools() {
            let tool = Arc::clone(tool);
            let out = tool
                .call(args.clone(), &ctx, CancellationToken::new())
                .await;
            if let Ok(out) = out {
                let _ = tool.failed(&out);
            }
        }
    });
}

/// The `yui.vocab` value (the expression vocabulary): parse and check it, then build what a turn
/// builds from it (the generate_express description, parameters and declared tool).
pub fn vocab_json(data: &[u8]) {
    use yui_core::backend::Transport;
    use yui_core::vocab;
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(v) = vocab::from_value(&value) else {
        return;
    };
    let _ = vocab::vocab_is_empty(&v);
    let _ = vocab::tool_description(&v);
    let _ = vocab::parameters(&v);
    let _ = v.offered_motions();
    let _ = v.voice_tags();
    for t in [
        Transport::ChatCompletions,
        Transport::Responses,
        Transport::Push,
    ] {
        let _ = vocab::declared_tool(&v, t);
    }
}
