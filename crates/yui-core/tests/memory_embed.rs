//! A turn's message embedded for recall (docs/memory.md, "Embeddings"): against a scripted
//! OpenAI-compatible `/embeddings` server, the message's vector finds a memory no word of the
//! message matches; a server that hangs or fails leaves the turn its words-only recall, late by
//! at most `embeddings.timeout_ms`.

use crate::turn_support::backends;
use crate::turn_support::{chat_say, Harness, Reply, ScriptServer};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use yui_core::backend::Transport;
use yui_core::longterm::{self, Kind, NewMemory};
use yui_core::turn::{self, Backend, TurnDeps};
use yui_core::WindowKind;

const MESSAGE: &str = "which instrument do I practise?";
const HIDDEN: &str = "memory: Takes xylophone lessons on Fridays";

fn backend(base: &str) -> Backend {
    Backend {
        api_key: Some("sk-test".into()),
        ..backends::backend(Transport::ChatCompletions, base)
    }
}

/// `/embeddings` that puts text about music on the x axis and everything else on the y axis.
async fn embeddings_server() -> ScriptServer {
    ScriptServer::builder()
        .responder(|s| {
            let data: Vec<Value> = s.body["input"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let t = t.as_str().unwrap_or_default();
                    let music = t.contains("instrument") || t.contains("xylophone");
                    let v = if music { [2.0, 0.0] } else { [0.0, 1.0] };
                    json!({"object": "embedding", "index": i, "embedding": v})
                })
                .collect();
            Reply::Status(200, json!({"object": "list", "data": data}).to_string())
        })
        .start()
        .await
}

/// Two memories, embedded by `emb` (the background backfill), and `yui.memory.embeddings`.
async fn setup(h: &Harness, emb: &ScriptServer, timeout_ms: u64) {
    for text in ["Takes xylophone lessons on Fridays", "Drinks green tea"] {
        longterm::add(
            &h.store,
            h.clock.now(),
            "yui",
            &NewMemory::new(Kind::Fact, text),
        )
        .unwrap();
    }
    let http = reqwest::Client::new();
    longterm::embed::backfill(&h.store, &http, &emb.base_url, None, "emb")
        .await
        .unwrap();
    let cfg =
        json!({"embeddings": {"model": "emb", "base_url": emb.base_url, "timeout_ms": timeout_ms}});
    yui_core::settings::set(&h.store, "yui.memory", &cfg).unwrap();
}

/// One turn built as the app builds it; the last user message the model got, and how long the
/// turn took.
async fn turn_text(h: &Harness, model: &ScriptServer) -> (String, Duration) {
    model.push(chat_say("ok"));
    let before = model.bodies().len();
    let (req, reg) = turn::prepare(
        &h.store,
        &h.clock,
        "yui",
        WindowKind::Main,
        MESSAGE,
        backend(&model.base_url),
    )
    .unwrap();
    let deps = TurnDeps::new(h.store.clone(), h.clock.clone(), &req.timeouts).unwrap();
    let t = Instant::now();
    let handle = turn::start(deps, req, reg);
    let out = tokio::time::timeout(Duration::from_secs(30), handle.join)
        .await
        .expect("the turn ended")
        .unwrap();
    assert_eq!(out.text, "ok");
    let user = crate::memory::last_user(&model.bodies()[before]);
    (user, t.elapsed())
}

#[tokio::test]
async fn the_messages_vector_recalls_what_no_word_matches() {
    let h = Harness::new();
    let emb = embeddings_server().await;
    let model = ScriptServer::start(Vec::new()).await;
    setup(&h, &emb, 2000).await;
    // Without a model set, recall is by words: nothing in the message matches the memory.
    yui_core::settings::set(&h.store, "yui.memory", &json!({"embeddings": null})).unwrap();
    let (words_only, _) = turn_text(&h, &model).await;
    assert!(!words_only.contains(HIDDEN), "{words_only}");
    let asked = emb.seen().len();

    let cfg = json!({"embeddings": {"model": "emb", "base_url": emb.base_url, "timeout_ms": 2000}});
    yui_core::settings::set(&h.store, "yui.memory", &cfg).unwrap();
    let (text, _) = turn_text(&h, &model).await;
    assert!(text.contains(HIDDEN), "{text}");
    let seen = emb.seen();
    assert_eq!(seen.len(), asked + 1, "one embeddings request for the turn");
    let q = &seen[asked];
    assert_eq!(q.path, "/v1/embeddings");
    assert_eq!(q.body, json!({"model": "emb", "input": [MESSAGE]}));
    assert_eq!(q.auth.as_deref(), Some("Bearer sk-test"));
    // The turn counts each memory it used once, though it recalled twice.
    let used = longterm::last_used(&h.store, "yui").unwrap();
    let hidden = used
        .memories
        .iter()
        .find(|m| m.text.contains("xylophone"))
        .unwrap();
    assert_eq!(hidden.times_used, 1);
}

#[tokio::test]
async fn a_hanging_or_failing_embeddings_server_costs_at_most_the_timeout() {
    let h = Harness::new();
    let emb = embeddings_server().await;
    setup(&h, &emb, 300).await;
    let model = ScriptServer::start(Vec::new()).await;
    for reply in [
        Reply::Hang,
        Reply::Status(500, r#"{"error":"down"}"#.into()),
        Reply::Close,
    ] {
        let bad = ScriptServer::builder()
            .responder(move |_| reply.clone())
            .start()
            .await;
        let cfg =
            json!({"embeddings": {"model": "emb", "base_url": bad.base_url, "timeout_ms": 300}});
        yui_core::settings::set(&h.store, "yui.memory", &cfg).unwrap();
        let (text, took) = turn_text(&h, &model).await;
        assert_eq!(bad.seen().len(), 1, "the message was sent to be embedded");
        // Words-only recall: the turn went on without the vector's memory.
        assert!(!text.contains(HIDDEN), "{text}");
        assert!(text.contains("which instrument"), "{text}");
        // 300 ms of waiting at most, plus the turn itself on a loaded machine; the request's
        // own 60 s timeout would fail this.
        assert!(took < Duration::from_secs(15), "{took:?}");
    }
}
