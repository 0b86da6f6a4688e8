//! Downloading a model file: resumable (HTTP `Range` into `<file>.part`, the URL kept beside it in
//! `<file>.part.url` so a partial file is resumed only for the same URL), retried with backoff,
//! refused up front when the disk is too small, cancellable, checked against the size and then
//! the SHA-256 before it takes its name. Progress goes to a callback as [`Progress`] events.
//! One pull of a file at a time: `<file>.part.lock` holds the puller's pid.

use super::sys;
use futures_util::StreamExt;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What to fetch and where it goes.
#[derive(Debug, Clone)]
pub struct Job {
    /// The model's name, for the messages.
    pub name: String,
    pub url: String,
    pub size: u64,
    pub sha256: String,
    /// The final path (`models/<file>`); the partial file is beside it.
    pub dest: PathBuf,
}

/// How often and how long to wait between tries.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    pub first: Duration,
    pub max: Duration,
    /// Tries in a row that move no byte before giving up.
    pub tries: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            first: Duration::from_secs(1),
            max: Duration::from_secs(30),
            tries: 6,
        }
    }
}

impl Backoff {
    /// The wait before try `n` (1-based, after the first): doubling from `first`, at most `max`.
    pub fn wait(&self, n: u32) -> Duration {
        self.first
            .saturating_mul(1u32 << n.saturating_sub(1).min(16))
            .min(self.max)
    }
}

/// What a pull reports as it goes (the app shows it in the bubble and in Settings; the CLI on
/// stderr).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Progress {
    /// Bytes already there from an earlier pull of the same URL.
    Resumed {
        from: u64,
        total: u64,
    },
    Bytes {
        done: u64,
        total: u64,
    },
    Retry {
        attempt: u32,
        wait_ms: u64,
        reason: String,
    },
    Verifying,
    Verified,
}

/// Why a pull ended without the file; each message is one plain sentence.
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error("Not enough disk space for {name}: it needs {need} and {free} is free in {dir}.")]
    NoSpace {
        name: String,
        need: String,
        free: String,
        dir: String,
    },
    #[error("Could not download {name} from {host}: {reason}.")]
    Unreachable {
        name: String,
        host: String,
        reason: String,
        #[source]
        source: Option<reqwest::Error>,
    },
    #[error("The server sent {got} bytes for {name}, not the {want} its catalog entry names, so nothing was kept.")]
    WrongSize { name: String, got: u64, want: u64 },
    #[error("The downloaded file of {name} did not match its checksum and was deleted.")]
    Checksum { name: String, got: String },
    #[error("The download of {name} was cancelled; pulling it again resumes it.")]
    Cancelled { name: String },
    #[error("{name} is already being downloaded by process {pid}.")]
    Busy { name: String, pid: u32 },
    #[error("Could not write {path}: {source}.")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PullError + '_ {
    move |source| PullError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// `<dest>` plus a suffix (`.part`, `.part.url`, `.part.lock`).
pub fn beside(dest: &Path, suffix: &str) -> PathBuf {
    let mut s = dest.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The pid of a live pull of `dest`, if one is under way.
pub fn pulling(dest: &Path) -> Option<u32> {
    std::fs::read_to_string(beside(dest, ".part.lock"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .filter(|&p| sys::pid_alive(p))
}

/// Bytes of a partial file kept for `url` (0 when there is none, or it is for another URL).
pub fn partial(dest: &Path, url: &str) -> u64 {
    let same = std::fs::read_to_string(beside(dest, ".part.url")).is_ok_and(|u| u.trim() == url);
    if !same {
        return 0;
    }
    std::fs::metadata(beside(dest, ".part")).map_or(0, |m| m.len())
}

/// The files this process is pulling now (the lock file alone cannot tell two pulls of one
/// process apart).
static PULLING_HERE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Holds `<dest>.part.lock` while a pull runs.
struct Lock(PathBuf);

impl Lock {
    fn take(dest: &Path, name: &str) -> Result<Self, PullError> {
        let path = beside(dest, ".part.lock");
        let busy = |pid| PullError::Busy {
            name: name.to_string(),
            pid,
        };
        if let Some(pid) = pulling(dest).filter(|&p| p != std::process::id()) {
            return Err(busy(pid));
        }
        let mut here = PULLING_HERE.lock().unwrap_or_else(|p| p.into_inner());
        if here.contains(&path) {
            return Err(busy(std::process::id()));
        }
        std::fs::write(&path, std::process::id().to_string()).map_err(io_err(&path))?;
        here.push(path.clone());
        Ok(Self(path))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        PULLING_HERE
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|p| p != &self.0);
    }
}

/// The host (and port) of a URL, for messages.
fn host_of(url: &str) -> String {
    url.split_once("://")
        .map(|(_, r)| r.split('/').next().unwrap_or(r))
        .unwrap_or(url)
        .to_string()
}

/// A reqwest failure in a few plain words (`connection refused`).
fn reason(e: &reqwest::Error) -> String {
    let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return match io.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection refused".into(),
                std::io::ErrorKind::ConnectionReset => "the connection was reset".into(),
                std::io::ErrorKind::UnexpectedEof => "the connection closed early".into(),
                _ => io.to_string(),
            };
        }
        src = s.source();
    }
    if e.is_timeout() {
        "the server did not answer in time".into()
    } else if e.is_connect() {
        "could not connect".into()
    } else if e.is_body() || e.is_decode() {
        "the connection closed early".into()
    } else {
        e.to_string()
    }
}

/// One try's end: done, or why to try again.
enum Try {
    Done,
    Again(String, Option<reqwest::Error>),
}

/// Download `job` to `job.dest` and verify it. An existing file of the right size is kept as it
/// is. On cancellation the partial file stays, for the next pull of the same URL.
pub async fn pull(
    client: &reqwest::Client,
    job: &Job,
    backoff: Backoff,
    cancel: &CancellationToken,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<PathBuf, PullError> {
    let dir = job.dest.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    if std::fs::metadata(&job.dest).is_ok_and(|m| m.len() == job.size) {
        return Ok(job.dest.clone());
    }
    let _lock = Lock::take(&job.dest, &job.name)?;
    let part = beside(&job.dest, ".part");
    let url_file = beside(&job.dest, ".part.url");
    let mut have = partial(&job.dest, &job.url);
    if have == 0 || have > job.size {
        have = 0;
        let _ = std::fs::remove_file(&part);
    }
    let need = job.size - have;
    if let Some(free) = sys::free_bytes(dir) {
        if free < need {
            return Err(PullError::NoSpace {
                name: job.name.clone(),
                need: super::catalog::human(need),
                free: super::catalog::human(free),
                dir: dir.display().to_string(),
            });
        }
    }
    std::fs::write(&url_file, &job.url).map_err(io_err(&url_file))?;
    if have > 0 {
        progress(Progress::Resumed {
            from: have,
            total: job.size,
        });
    }
    let mut failed = 0u32;
    loop {
        if have == job.size {
            break;
        }
        let before = have;
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(PullError::Cancelled { name: job.name.clone() }),
            r = one_try(client, job, &part, &mut have, progress) => r?,
        };
        match outcome {
            Try::Done => break,
            Try::Again(why, source) => {
                failed = if have > before { 1 } else { failed + 1 };
                if failed >= backoff.tries {
                    return Err(PullError::Unreachable {
                        name: job.name.clone(),
                        host: host_of(&job.url),
                        reason: why,
                        source,
                    });
                }
                let wait = backoff.wait(failed);
                progress(Progress::Retry {
                    attempt: failed,
                    wait_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                    reason: why,
                });
                tokio::select! {
                    () = cancel.cancelled() => return Err(PullError::Cancelled { name: job.name.clone() }),
                    () = tokio::time::sleep(wait) => {}
                }
            }
        }
    }
    progress(Progress::Verifying);
    let path = part.clone();
    let got = tokio::task::spawn_blocking(move || sha256_of(&path))
        .await
        .map_err(|e| PullError::Io {
            path: part.display().to_string(),
            source: std::io::Error::other(e),
        })?
        .map_err(io_err(&part))?;
    if !got.eq_ignore_ascii_case(&job.sha256) {
        let _ = std::fs::remove_file(&part);
        let _ = std::fs::remove_file(&url_file);
        return Err(PullError::Checksum {
            name: job.name.clone(),
            got,
        });
    }
    std::fs::rename(&part, &job.dest).map_err(io_err(&job.dest))?;
    let _ = std::fs::remove_file(&url_file);
    progress(Progress::Verified);
    Ok(job.dest.clone())
}

/// One request: appends to `part` from `*have` on, moving `*have`. `Err` ends the pull.
async fn one_try(
    client: &reqwest::Client,
    job: &Job,
    part: &Path,
    have: &mut u64,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Try, PullError> {
    let mut req = client.get(&job.url);
    if *have > 0 {
        req = req.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) => return Ok(Try::Again(reason(&e), Some(e))),
    };
    let status = resp.status();
    let wrong_size = |got: u64| {
        let _ = std::fs::remove_file(part);
        let _ = std::fs::remove_file(beside(&job.dest, ".part.url"));
        Err(PullError::WrongSize {
            name: job.name.clone(),
            got,
            want: job.size,
        })
    };
    let mut append = false;
    match status.as_u16() {
        206 => {
            let (start, total) = content_range(resp.headers()).unwrap_or((u64::MAX, None));
            if let Some(t) = total.filter(|&t| t != job.size) {
                return wrong_size(t);
            }
            if start != *have {
                // Not the bytes asked for: start over without a range.
                *have = 0;
                let _ = std::fs::remove_file(part);
                return Ok(Try::Again("the server sent another range".into(), None));
            }
            append = true;
        }
        200 => {
            if let Some(len) = resp.content_length().filter(|&l| l != job.size) {
                return wrong_size(len);
            }
            *have = 0;
        }
        416 => {
            *have = 0;
            let _ = std::fs::remove_file(part);
            return Ok(Try::Again(
                "the server refused to resume, so it starts over".into(),
                None,
            ));
        }
        s if (500..600).contains(&s) || s == 429 || s == 408 => {
            return Ok(Try::Again(format!("the server answered {status}"), None));
        }
        _ => {
            return Err(PullError::Unreachable {
                name: job.name.clone(),
                host: host_of(&job.url),
                reason: format!("the server answered {status}"),
                source: None,
            })
        }
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(part)
        .map_err(io_err(part))?;
    let mut stream = resp.bytes_stream();
    let mut shown = *have;
    while let Some(chunk) = stream.next().await {
        let bytes = match chunk {
            Ok(b) => b,
            Err(e) => return Ok(Try::Again(reason(&e), Some(e))),
        };
        if *have + bytes.len() as u64 > job.size {
            return wrong_size(*have + bytes.len() as u64);
        }
        file.write_all(&bytes).map_err(io_err(part))?;
        *have += bytes.len() as u64;
        if *have - shown >= 1 << 20 || *have == job.size {
            shown = *have;
            progress(Progress::Bytes {
                done: *have,
                total: job.size,
            });
        }
    }
    file.flush().map_err(io_err(part))?;
    if *have < job.size {
        return Ok(Try::Again("the connection closed early".into(), None));
    }
    Ok(Try::Done)
}

/// `Content-Range: bytes START-END/TOTAL` → (START, TOTAL unless `*`).
fn content_range(h: &reqwest::header::HeaderMap) -> Option<(u64, Option<u64>)> {
    let v = h.get(reqwest::header::CONTENT_RANGE)?.to_str().ok()?;
    let rest = v.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let start = range.split_once('-')?.0.trim().parse().ok()?;
    Some((start, total.trim().parse().ok()))
}

/// Lower-case hex SHA-256 of a file.
pub fn sha256_of(path: &Path) -> std::io::Result<String> {
    use sha2::Digest;
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let b = Backoff {
            first: Duration::from_millis(100),
            max: Duration::from_millis(500),
            tries: 5,
        };
        let waits: Vec<u128> = (1..=5).map(|n| b.wait(n).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 500, 500]);
    }

    #[test]
    fn content_range_is_read() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            reqwest::header::CONTENT_RANGE,
            "bytes 100-199/200".parse().unwrap(),
        );
        assert_eq!(content_range(&h), Some((100, Some(200))));
        h.insert(
            reqwest::header::CONTENT_RANGE,
            "bytes 5-9/*".parse().unwrap(),
        );
        assert_eq!(content_range(&h), Some((5, None)));
        assert_eq!(host_of("http://127.0.0.1:9/a/b.gguf"), "127.0.0.1:9");
    }
}
