//! YUI's share of a turn's time to first token on the built-in engine (`builtin_model --
//! --share`, docs/PERFORMANCE.md): turns as the app makes them (`turn::prepare`, then
//! `turn::run` and the Chat Completions transport) against the real engine, warm, through the
//! timestamping proxy of `stamp_proxy.rs`. Per turn:
//!
//! - YUI before the engine: the turn's start (before `turn::prepare`) → the request's last byte
//!   out of YUI (prepare, the request's body, the connection, the send), plus the warm
//!   engine's `ensure()` that `turn::builtin::prepare` does first (timed on its own: the turn
//!   is sent to the proxy, so it does not go through the engine's supervisor);
//! - the engine: that last byte → its first SSE chunk with text (its HTTP, template, prompt
//!   processing — `timings.prompt_ms` — and the first token);
//! - YUI after the engine: that chunk read by the proxy → the turn's first `speech` event (the
//!   proxy's write, the transport's read and parse, the mapper, the dispatch).
//!
//! YUI's share = the first + the last, goal ≤ 20 ms.

use super::stamp_proxy::StampProxy;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use yui_core::backend::Transport;
use yui_core::clock::SharedClock;
use yui_core::model::engine::Engine;
use yui_core::turn::{self, TurnDeps, TurnEvent, TurnRequest};
use yui_core::{Store, WindowKind};

/// Turns measured per conversation turn (first, second), alternating.
const SHARE_RUNS: usize = 7;

/// One turn's split, in ms.
struct Split {
    prepare: f64,
    to_sent: f64,
    /// `TurnDeps::new` (its HTTP client), part of `to_sent`.
    deps: f64,
    engine: f64,
    prompt_ms: f64,
    prompt_n: i64,
    cache_n: i64,
    after: f64,
    ensure: f64,
}

impl Split {
    fn yui(&self) -> f64 {
        self.ensure + self.to_sent + self.after
    }
}

/// One turn through the proxy; `None` (said) when something came before the first word that
/// is not the engine's prompt and first token (a tool call's round trip).
async fn turn(
    store: &Store,
    clock: &SharedClock,
    engine: &Arc<Engine>,
    proxy: &StampProxy,
    key: &str,
    id: String,
    msg: &str,
) -> Option<Split> {
    // The warm engine's `ensure()`, as `turn::builtin::prepare` calls it first.
    let t = Instant::now();
    engine.ensure().await.unwrap();
    let ensure = super::ms(t.elapsed());
    let backend = yui_core::turn::Backend {
        api_key: Some(key.into()),
        max_output_tokens: Some(24),
        temperature: Some(0.0),
        ..super::backends::backend(Transport::ChatCompletions, &proxy.base_url)
    };
    let from = proxy.count();
    let t0 = Instant::now();
    let (mut req, reg): (TurnRequest, _) =
        turn::prepare(store, clock, "yui", WindowKind::Main, msg, backend).unwrap();
    let prepared = Instant::now();
    req.turn_id = id;
    req.timeouts = yui_core::turn::Timeouts {
        connect: Duration::from_secs(5),
        headers: Duration::from_secs(120),
        stall: Duration::from_secs(120),
    };
    let deps = TurnDeps::new(store.clone(), clock.clone(), &req.timeouts).unwrap();
    let deps_at = Instant::now();
    let (tx, mut rx) = mpsc::channel(4096);
    let run = async {
        let out = turn::run(&deps, &req, &reg, &tx, &CancellationToken::new()).await;
        drop(tx);
        out
    };
    let first = async {
        let (mut at, mut calls) = (None, 0);
        while let Some(e) = rx.recv().await {
            match e {
                TurnEvent::Speech { .. } if at.is_none() => at = Some(Instant::now()),
                TurnEvent::ToolCall { .. } if at.is_none() => calls += 1,
                _ => {}
            }
        }
        (at, calls)
    };
    let (_, (at, calls)) = tokio::join!(run, first);
    let x = proxy.since(from);
    if calls > 0 || x.len() != 1 {
        println!(
            "  {} tool call(s), {} request(s) before the first word: not counted",
            calls,
            x.len()
        );
        return None;
    }
    let x = &x[0];
    let (sent, token_in) = (x.sent?, x.token_in?);
    let t = x.timings.clone().unwrap_or_default();
    Some(Split {
        prepare: super::ms(prepared - t0),
        to_sent: super::ms(sent - t0),
        deps: super::ms(deps_at - prepared),
        engine: super::ms(token_in - sent),
        prompt_ms: t["prompt_ms"].as_f64().unwrap_or(f64::NAN),
        prompt_n: t["prompt_n"].as_i64().unwrap_or(-1),
        cache_n: t["cache_n"].as_i64().unwrap_or(-1),
        after: super::ms(at? - token_in),
        ensure,
    })
}

fn show(label: &str, s: &Split) {
    println!(
        "  {label}: YUI {:.2} ms = ensure {:.3} + start→sent {:.2} (prepare {:.2}, deps {:.2}) + first chunk→speech {:.2}; engine {:.0} ms (prompt {:.0} ms: {} tokens, {} cached), load {}",
        s.yui(),
        s.ensure,
        s.to_sent,
        s.prepare,
        s.deps,
        s.after,
        s.engine,
        s.prompt_ms,
        s.prompt_n,
        s.cache_n,
        super::load()
    );
}

/// The engine warm, a fresh conversation per run, its first and second turn each measured.
pub async fn share(engine: Arc<Engine>, clock: &SharedClock) {
    let ep = engine.ensure().await.unwrap();
    let upstream = ep
        .base_url
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string();
    let proxy = StampProxy::start(upstream).await;
    let mut firsts = Vec::new();
    let mut seconds = Vec::new();
    // Run 0 warms the engine (pages the model in, fills its prompt cache) and is not counted.
    for run in 0..=SHARE_RUNS {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("yui.sqlite3")).unwrap();
        // The app's store is open and warm before its first turn (it read the presets and
        // settings to show the window): one turn prepared and dropped, so the first turn
        // does not count a new database file's first reads.
        let warm = super::backends::backend(Transport::ChatCompletions, &proxy.base_url);
        turn::prepare(&store, clock, "yui", WindowKind::Main, "hi", warm).unwrap();
        println!("run {run}{}", if run == 0 { " (warm-up)" } else { "" });
        let msgs = ["Hello! Who are you?", "And what do you like?"];
        for (n, msg) in msgs.iter().enumerate() {
            let id = format!("r{run}t{n}");
            let Some(s) = turn(&store, clock, &engine, &proxy, &ep.api_key, id, msg).await else {
                continue;
            };
            show(if n == 0 { "turn 1" } else { "turn 2" }, &s);
            match (run, n) {
                (0, _) => {}
                (_, 0) => firsts.push(s),
                _ => seconds.push(s),
            }
        }
    }
    engine.stop().await;
    for (label, v) in [("turn 1", &firsts), ("turn 2", &seconds)] {
        let yui: Vec<f64> = v.iter().map(Split::yui).collect();
        if !yui.is_empty() {
            println!(
                "{label}: YUI's share median {:.2} ms of {} turns",
                super::median(yui),
                v.len()
            );
        }
    }
    let all: Vec<&Split> = firsts.iter().chain(&seconds).collect();
    if all.is_empty() {
        println!("no turn was counted");
        return;
    }
    let med = |f: &dyn Fn(&Split) -> f64| super::median(all.iter().map(|s| f(s)).collect());
    let max = all.iter().map(|s| s.yui()).fold(0.0, f64::max);
    println!(
        "YUI's share of the time to first token, median of {} turns: {:.2} ms (max {max:.2}) = ensure {:.3} + start→sent {:.2} (prepare {:.2}, deps {:.2}) + first chunk→speech {:.2}; engine's part {:.0} ms (prompt processing {:.0} ms); goal ≤ 20 ms; load {}",
        all.len(),
        med(&|s| s.yui()),
        med(&|s| s.ensure),
        med(&|s| s.to_sent),
        med(&|s| s.prepare),
        med(&|s| s.deps),
        med(&|s| s.after),
        med(&|s| s.engine),
        med(&|s| s.prompt_ms),
        super::load()
    );
}
