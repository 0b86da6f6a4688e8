//! `yui event` and `yui quiet` against a running stage (the app's core, on a real SQLite file and
//! the scripted Chat Completions server) through its inbox socket in the data dir: the event
//! becomes a proactive turn whose context says why; an unknown character is refused in plain
//! words; quiet mode holds the next one; with no app running, `yui event` says so and `yui
//! quiet` still stores the setting.

use crate::support::{json_ok, yui_command};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;
use std::time::Duration;
use yui_core::backend::{Backend, Transport};
use yui_core::clock::ShiftedClock;
use yui_core::paths::Paths;
use yui_core::stage::{inbox, BackendSource, Stage, StageEvent, StageOptions, Window};
use yui_core::turn::{Timeouts, TurnEvent, TurnStatus};
use yui_core::Store;
use yui_testkit::sse::*;

async fn yui(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = yui_command(dir);
    cmd.args(args);
    tokio::task::spawn_blocking(move || cmd.output().expect("run yui"))
        .await
        .unwrap()
}

/// The app's core on `dir`, serving its inbox, with the main window open.
fn app(
    dir: &Path,
    base_url: &str,
) -> (
    Store,
    Stage,
    tokio::sync::mpsc::UnboundedReceiver<StageEvent>,
    PathBuf,
) {
    let paths = Paths::resolve(Some(dir.to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let backend = Backend {
        transport: Transport::ChatCompletions,
        base_url: base_url.into(),
        model: "m".into(),
        api_key: None,
        max_output_tokens: None,
        temperature: None,
        push_url: None,
        realtime_url: None,
    };
    let opts = StageOptions {
        backend: BackendSource::Fixed {
            backend,
            timeouts: Timeouts {
                connect: Duration::from_secs(2),
                headers: Duration::from_secs(5),
                stall: Duration::from_secs(5),
            },
        },
        headless: true,
        ..StageOptions::default()
    };
    let (stage, rx) = Stage::new(
        store.clone(),
        Arc::new(ShiftedClock::at_hour(12)),
        paths,
        opts,
    );
    stage.window_opened(Window::Main);
    let sock = inbox::socket_path(dir);
    let s = stage.clone();
    let path = sock.clone();
    tokio::spawn(async move { s.serve_inbox(path).await });
    (store, stage, rx, sock)
}

async fn turn_end(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<StageEvent>,
) -> (TurnStatus, String) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let ev = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .unwrap()
            .unwrap();
        if let StageEvent::Turn {
            event: TurnEvent::TurnEnd { status, text, .. },
            ..
        } = ev
        {
            return (status, text);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yui_event_reaches_the_running_app_and_becomes_a_proactive_turn() {
    let server = ScriptServer::start(vec![chat_say("Yay, the build is done!")]).await;
    let dir = tempfile::tempdir().unwrap();
    let (_store, _stage, mut rx, sock) = app(dir.path(), &server.base_url);
    // Listening once a connect is taken (the file appears at bind(), a moment before listen());
    // seconds under load. The app drops the empty connection.
    let t = std::time::Instant::now();
    while std::os::unix::net::UnixStream::connect(&sock).is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the app never listened"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let args = [
        "event",
        "--preset",
        "yui",
        "--text",
        "the build finished",
        "--importance",
        "high",
    ];
    let out = json_ok(&args, &yui(dir.path(), &args).await);
    assert_eq!(out["outcome"], "went", "{out}");
    assert_eq!(
        turn_end(&mut rx).await,
        (TurnStatus::Ok, "Yay, the build is done!".into())
    );
    let body = &server.bodies()[0];
    let sent = body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        sent.contains(
            "\nproactive: event from another program (importance high): \"the build finished\"\n"
        ),
        "{sent}"
    );

    // An unknown character: a plain error, exit non-zero.
    let out = yui(dir.path(), &["event", "--preset", "nobody", "--text", "hi"]).await;
    assert!(!out.status.success());
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "not_found");
    assert_eq!(
        err["message"],
        "there is no character \"nobody\"; the characters are yui, kai"
    );
    // A bad importance is clap's refusal.
    let out = yui(
        dir.path(),
        &[
            "event",
            "--preset",
            "yui",
            "--text",
            "x",
            "--importance",
            "urgent",
        ],
    )
    .await;
    assert!(!out.status.success());

    // Quiet mode for an hour: the app is told, and the next event waits.
    let out = json_ok(&["quiet", "1h"], &yui(dir.path(), &["quiet", "1h"]).await);
    assert_eq!(out["app"], "told");
    assert!(out["quiet_until"].is_string(), "{out}");
    let args = ["event", "--preset", "yui", "--text", "lint clean"];
    let out = json_ok(&args, &yui(dir.path(), &args).await);
    assert_eq!(out["outcome"], "waiting", "{out}");
    assert!(
        out["reason"]
            .as_str()
            .unwrap()
            .starts_with("held: quiet mode until "),
        "{out}"
    );
    let out = json_ok(&["quiet", "off"], &yui(dir.path(), &["quiet", "off"]).await);
    assert_eq!(out, json!({"quiet_until": null, "app": "told"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_app_running_yui_event_says_so_and_yui_quiet_still_stores_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = yui(dir.path(), &["event", "--preset", "yui", "--text", "hi"]).await;
    assert!(!out.status.success());
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "not_found");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .starts_with("YUI is not running on "),
        "{err}"
    );
    let out = json_ok(
        &["quiet", "tomorrow"],
        &yui(dir.path(), &["quiet", "tomorrow"]).await,
    );
    assert_eq!(out["app"], "not running");
    let store = Store::open(Paths::resolve(Some(dir.path().to_path_buf())).db_path()).unwrap();
    let stored = yui_core::settings::get(&store, "yui.proactive.quiet_until").unwrap();
    assert_eq!(stored, out["quiet_until"]);
    let out = yui(dir.path(), &["quiet", "soon"]).await;
    assert!(!out.status.success());
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(
        err["message"],
        "\"soon\" is not a quiet time: say how long (30m, 1h, 2h), tomorrow, or off"
    );
}
