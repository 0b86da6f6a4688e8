//! Turn stream benchmark: the client's own cost over a recorded 10,000-event stream, and cue
//! latency. Run: `cargo bench -p yui-core --bench turn_stream`. Figures: docs/PERFORMANCE.md.
//!
//! - `per_event/*`: one whole response of 10,000 SSE events (Chat Completions chunks in the
//!   shape llama.cpp / vLLM send, or Responses events) replayed from memory through the same code
//!   a turn reads the network with (framing, SSE parser, JSON, speech join, event channel).
//!   Criterion reports time per stream; divide by 10,000 for the per-event figure (throughput is
//!   set to elements, so criterion also prints events/s).
//! - `cue_latency/*`: from handing the last byte of the event that makes a `generate_express`
//!   call runnable (Chat: the `finish_reason` chunk; Responses: `output_item.done`) to the `cue`
//!   event arriving on the receiver side of the turn's channel.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use yui_core::backend::Transport;
use yui_core::clock::{ManualClock, SharedClock};
use yui_core::tools::registry::{ToolRegistry, TurnToolState};
use yui_core::tools::{ClientTool, ToolContext, ToolError, ToolOutput};
use yui_core::turn::engine::replay_response;
use yui_core::turn::sse::SseStream;
use yui_core::turn::{Backend, Timeouts, TurnDeps, TurnEvent, TurnRequest};
use yui_core::{Store, WindowKind};

const EVENTS: usize = 10_000;

struct Express;

#[async_trait::async_trait]
impl ClientTool for Express {
    fn name(&self) -> &str {
        "generate_express"
    }
    fn description(&self) -> String {
        "cue".into()
    }
    fn parameters(&self) -> serde_json::Value {
        json!({"type":"object"})
    }
    fn one_way(&self) -> bool {
        true
    }
    async fn call(
        &self,
        _a: serde_json::Value,
        _c: &ToolContext,
        _x: yui_core::turn::CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ok"))
    }
}

/// A Chat Completions response as a llama.cpp-style server streams it: one token per chunk,
/// a generate_express call in the middle, a finish chunk with timings, [DONE].
fn chat_recording() -> Vec<String> {
    let mut ev = Vec::with_capacity(EVENTS);
    let head = |delta: serde_json::Value, fr: serde_json::Value| json!({"id":"chatcmpl-8f3a","object":"chat.completion.chunk","created":1764496800,"model":"qwen2.5-7b-instruct","system_fingerprint":"b4500-fp","choices":[{"index":0,"delta":delta,"logprobs":null,"finish_reason":fr}]});
    ev.push(format!(
        "data: {}\n\n",
        head(json!({"role":"assistant","content":null}), json!(null))
    ));
    let words = [
        "Well", ",", " I", " think", " that", "'s", " a", " lovely", " idea", ".",
    ];
    while ev.len() < EVENTS - 4 {
        let w = words[ev.len() % words.len()];
        ev.push(format!(
            "data: {}\n\n",
            head(json!({"content":w}), json!(null))
        ));
    }
    ev.push(format!("data: {}\n\n", head(json!({"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"generate_express","arguments":""}}]}), json!(null))));
    ev.push(format!("data: {}\n\n", head(json!({"tool_calls":[{"index":0,"function":{"arguments":"{\"emotion_id\":\"happy\",\"motion_id\":\"nod\"}"}}]}), json!(null))));
    ev.push(format!("data: {}\n\n", json!({"id":"chatcmpl-8f3a","object":"chat.completion.chunk","created":1764496800,"model":"qwen2.5-7b-instruct","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":812,"completion_tokens":9996,"total_tokens":10808},"timings":{"prompt_n":812,"predicted_n":9996,"predicted_ms":166600.5}})));
    ev.push("data: [DONE]\n\n".into());
    assert_eq!(ev.len(), EVENTS);
    ev
}

/// A Responses stream: text deltas with `event:` lines, a function_call item, completed.
fn responses_recording() -> Vec<String> {
    let mut ev = Vec::with_capacity(EVENTS);
    let put = |ev: &mut Vec<String>, v: serde_json::Value| {
        ev.push(format!(
            "event: {}\ndata: {v}\n\n",
            v["type"].as_str().unwrap()
        ));
    };
    put(
        &mut ev,
        json!({"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}),
    );
    let words = [
        "Well", ",", " I", " think", " that", "'s", " a", " lovely", " idea", ".",
    ];
    while ev.len() < EVENTS - 4 {
        let n = ev.len();
        put(
            &mut ev,
            json!({"type":"response.output_text.delta","sequence_number":n,"item_id":"msg_1","output_index":0,"content_index":0,"delta":words[n % words.len()],"logprobs":[]}),
        );
    }
    let item = json!({"type":"function_call","id":"fc_1","call_id":"call_1","name":"generate_express","arguments":"{\"emotion_id\":\"happy\",\"motion_id\":\"nod\"}","status":"completed"});
    put(
        &mut ev,
        json!({"type":"response.output_item.added","sequence_number":EVENTS-4,"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"generate_express","arguments":"","status":"in_progress"}}),
    );
    put(
        &mut ev,
        json!({"type":"response.function_call_arguments.delta","sequence_number":EVENTS-3,"item_id":"fc_1","output_index":1,"delta":"{\"emotion_id\":\"happy\",\"motion_id\":\"nod\"}"}),
    );
    put(
        &mut ev,
        json!({"type":"response.output_item.done","sequence_number":EVENTS-2,"output_index":1,"item":item}),
    );
    put(
        &mut ev,
        json!({"type":"response.completed","sequence_number":EVENTS-1,"response":{"id":"resp_1","object":"response","status":"completed","usage":{"input_tokens":812,"output_tokens":9996}}}),
    );
    assert_eq!(ev.len(), EVENTS);
    ev
}

/// Cut the recording into network-sized chunks (`size` bytes), or one chunk per event (`0`).
fn chunks(events: &[String], size: usize) -> Vec<Bytes> {
    if size == 0 {
        return events.iter().map(|e| Bytes::from(e.clone())).collect();
    }
    let all: Vec<u8> = events.concat().into_bytes();
    all.chunks(size).map(Bytes::copy_from_slice).collect()
}

struct Setup {
    _dir: tempfile::TempDir,
    deps: TurnDeps,
    registry: ToolRegistry,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("b.sqlite3")).unwrap();
    let clock: SharedClock = Arc::new(ManualClock::new(chrono::Utc::now(), 0));
    let deps = TurnDeps::new(store, clock, &Timeouts::default()).unwrap();
    let tools: Vec<Arc<dyn ClientTool>> = vec![Arc::new(Express)];
    let registry = ToolRegistry::from_tools(tools, Arc::new(TurnToolState::default())).unwrap();
    Setup {
        _dir: dir,
        deps,
        registry,
    }
}

fn request(transport: Transport) -> TurnRequest {
    TurnRequest {
        turn_id: "bench".into(),
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
            push_url: None,
            realtime_url: None,
        },
        timeouts: Timeouts::default(),
        history_limit: 0,
        addressed_by: None,
    }
}

fn per_event(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let s = setup();
    let mut g = c.benchmark_group("per_event");
    g.throughput(Throughput::Elements(EVENTS as u64));
    g.sample_size(30);
    for (name, transport, rec) in [
        ("chat", Transport::ChatCompletions, chat_recording()),
        ("responses", Transport::Responses, responses_recording()),
    ] {
        let req = request(transport);
        for (label, size) in [("event_chunks", 0usize), ("16KiB_chunks", 16 * 1024)] {
            let parts = chunks(&rec, size);
            g.bench_function(BenchmarkId::new(name, label), |b| {
                b.iter(|| {
                    rt.block_on(async {
                        let (tx, mut rx) = mpsc::channel(EVENTS + 16);
                        let bytes = futures_util::stream::iter(
                            parts.clone().into_iter().map(Ok::<Bytes, reqwest::Error>),
                        );
                        let stream = SseStream::from_bytes(bytes, Some(Duration::from_secs(60)));
                        let text = replay_response(&s.deps, &req, &s.registry, stream, &tx)
                            .await
                            .unwrap();
                        drop(tx);
                        let mut n = 0;
                        while rx.recv().await.is_some() {
                            n += 1;
                        }
                        assert!(n >= EVENTS - 5 && !text.is_empty());
                    })
                })
            });
        }
    }
    g.finish();
}

/// The SSE layer alone (byte layer + SSE parser), to split the per-event figure.
fn sse_only(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut g = c.benchmark_group("sse_only");
    g.throughput(Throughput::Elements(EVENTS as u64));
    g.sample_size(30);
    let parts = chunks(&chat_recording(), 0);
    g.bench_function("chat/event_chunks", |b| {
        b.iter(|| {
            rt.block_on(async {
                let bytes = futures_util::stream::iter(
                    parts.clone().into_iter().map(Ok::<Bytes, reqwest::Error>),
                );
                let mut stream = SseStream::from_bytes(bytes, Some(Duration::from_secs(60)));
                let mut n = 0;
                while let Some(ev) = stream.next().await {
                    ev.unwrap();
                    n += 1;
                }
                assert_eq!(n, EVENTS);
            })
        })
    });
    g.finish();
}

fn cue_latency(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let s = Arc::new(setup());
    let mut g = c.benchmark_group("cue_latency");
    g.sample_size(50);
    for (name, transport, rec) in [
        ("chat", Transport::ChatCompletions, chat_recording()),
        ("responses", Transport::Responses, responses_recording()),
    ] {
        // Everything before the releasing event is sent first; the releasing event is timed.
        // Chat: the finish_reason chunk; Responses: response.output_item.done.
        let release_at = EVENTS - 2;
        let before = Bytes::from(rec[..release_at].concat());
        let release = Bytes::from(rec[release_at].clone());
        let req = Arc::new(request(transport));
        let _ = transport;
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let (btx, brx) = mpsc::unbounded_channel::<Bytes>();
                        let bytes =
                            Box::pin(futures_util::stream::unfold(brx, |mut rx| async move {
                                rx.recv()
                                    .await
                                    .map(|b| (Ok::<Bytes, reqwest::Error>(b), rx))
                            }));
                        let stream = SseStream::from_bytes(bytes, Some(Duration::from_secs(60)));
                        let (tx, mut rx) = mpsc::channel(EVENTS + 16);
                        let (s2, r2) = (s.clone(), req.clone());
                        let task = tokio::spawn(async move {
                            replay_response(&s2.deps, &r2, &s2.registry, stream, &tx).await
                        });
                        btx.send(before.clone()).unwrap();
                        // Drain until the engine has consumed everything sent so far.
                        let mut seen = 0;
                        // Both recordings carry EVENTS - 5 text deltas before the release.
                        while seen < EVENTS - 5 {
                            match rx.recv().await {
                                Some(TurnEvent::Speech { .. }) => seen += 1,
                                Some(_) => {}
                                None => panic!("stream ended early"),
                            }
                        }
                        tokio::time::sleep(Duration::from_micros(200)).await;
                        let t0 = Instant::now();
                        btx.send(release.clone()).unwrap();
                        loop {
                            match rx.recv().await {
                                Some(TurnEvent::Cue { .. }) => break,
                                Some(_) => {}
                                None => panic!("no cue"),
                            }
                        }
                        total += t0.elapsed();
                        drop(btx);
                        let _ = task.await;
                    }
                    total
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, per_event, sse_only, cue_latency);
criterion_main!(benches);
