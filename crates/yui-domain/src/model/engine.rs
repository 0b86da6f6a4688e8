//! The built-in engine's supervisor: llama.cpp's `llama-server` as a child process, started
//! through the one process runner ([`crate::process::spawn`]: its own process group, killed with
//! YUI) on 127.0.0.1 with a random free port and a per-run API key passed in the environment
//! (`LLAMA_API_KEY`, never on the command line), `--jinja` (llama.cpp's own chat templates and
//! tool-call parsers), the model's name as its `--alias`, and the threads of
//! [`super::Config::threads`].
//!
//! [`Engine::ensure`] starts it on the first turn that needs it and waits for `/health`; it stays
//! warm while turns come ([`Engine::touch`]) and [`Engine::check_idle`] stops it once the clock
//! (passed in) says `idle_stop` has passed without a turn. A crash is found by
//! [`Engine::crashed`], said in one plain sentence, and the next [`Engine::ensure`] starts it
//! again. Turns reach it through the Chat Completions transport like any server
//! ([`Endpoint`] is its base URL and key).

use crate::clock::SharedClock;
use crate::process::{self, Group};
use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

/// The environment variable llama-server reads its API key from.
pub const KEY_ENV: &str = "LLAMA_API_KEY";
/// The program's name on PATH.
pub const PROGRAM: &str = "llama-server";
/// Context size when none is given: room for the system prompt, tools and a conversation.
pub const DEFAULT_CTX: u32 = 4096;
/// How long a failed turn waits for the engine's exit to show before calling it alive.
const EXIT_GRACE: Duration = Duration::from_millis(500);
/// How much of the engine's stderr is kept for the log.
const TAIL: usize = 4096;

/// How to run the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub program: PathBuf,
    pub model: PathBuf,
    /// The name the engine serves the model under (`/v1/models`, the `model` of answers): the
    /// name the user knows it by, so the doctor's model check finds it.
    pub alias: String,
    pub threads: u32,
    pub ctx: u32,
    pub idle_stop: Duration,
    /// How long a start may take before it counts as failed (loading a model from disk).
    pub start_timeout: Duration,
    /// Where to write the run file (`{pid, file, port}`) while it runs: `models/engine.json`.
    pub run_file: Option<PathBuf>,
}

/// Where a turn sends its request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `http://127.0.0.1:PORT/v1`
    pub base_url: String,
    pub api_key: String,
}

/// Why the engine could not serve; each message is one plain sentence.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("The built-in engine (llama-server) was not found: set yui.model.engine_path or put llama-server on PATH.")]
    NotFound,
    #[error("The model file {0} is missing; pull or add it again.")]
    NoModel(String),
    #[error("The built-in engine could not start: {source}.")]
    Spawn {
        #[source]
        source: std::io::Error,
    },
    #[error("The built-in engine stopped while starting ({how}){last}.")]
    Exited { how: String, last: String },
    #[error("The built-in engine did not get ready within {0} seconds.")]
    NotReady(u64),
}

struct Live {
    child: Child,
    group: Group,
    port: u16,
    key: String,
    tail: Arc<Mutex<Vec<u8>>>,
}

/// The supervisor of one engine process.
pub struct Engine {
    spec: Spec,
    clock: SharedClock,
    live: tokio::sync::Mutex<Option<Live>>,
    last_turn: Mutex<DateTime<Utc>>,
    starts: Mutex<u32>,
}

/// `program` as a path: the setting when given, else `llama-server` on PATH.
pub fn find_program(setting: Option<&Path>) -> Option<PathBuf> {
    match setting {
        Some(p) => Some(p.to_path_buf()).filter(|p| p.is_file()),
        None => crate::paths::find_program(PROGRAM, std::env::var_os("PATH").as_deref()),
    }
}

/// How a child ended, in words (`exit code 1`, `signal SIGKILL`).
fn how(status: Option<std::process::ExitStatus>) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.and_then(|s| s.signal()) {
            return format!("signal {}", process::signal_name(sig));
        }
    }
    match status.and_then(|s| s.code()) {
        Some(c) => format!("exit code {c}"),
        None => "no exit status".into(),
    }
}

fn last_line(tail: &Mutex<Vec<u8>>) -> String {
    let t = tail.lock().unwrap_or_else(|p| p.into_inner());
    String::from_utf8_lossy(&t)
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| format!(": {l}"))
        .unwrap_or_default()
}

impl Engine {
    pub fn new(spec: Spec, clock: SharedClock) -> Self {
        let now = clock.now();
        Self {
            spec,
            clock,
            live: tokio::sync::Mutex::new(None),
            last_turn: Mutex::new(now),
            starts: Mutex::new(0),
        }
    }

    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// How many times the engine was started.
    pub fn starts(&self) -> u32 {
        *self.starts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A turn happened now: the idle stop counts from here.
    pub fn touch(&self) {
        *self.last_turn.lock().unwrap_or_else(|p| p.into_inner()) = self.clock.now();
    }

    /// The running engine's endpoint, starting it first when it is not running (or died).
    pub async fn ensure(&self) -> Result<Endpoint, EngineError> {
        self.touch();
        let mut live = self.live.lock().await;
        if let Some(l) = live.as_mut() {
            if matches!(l.child.try_wait(), Ok(None)) {
                return Ok(endpoint(l.port, &l.key));
            }
            self.clear_run_file();
            *live = None;
        }
        let l = self.start().await?;
        let ep = endpoint(l.port, &l.key);
        *live = Some(l);
        Ok(ep)
    }

    /// The pid of the running engine, if one runs.
    pub async fn pid(&self) -> Option<u32> {
        let mut live = self.live.lock().await;
        let l = live.as_mut()?;
        match l.child.try_wait() {
            Ok(None) => l.child.id(),
            _ => None,
        }
    }

    /// After a failed turn: the plain sentence when the engine has died (it is then forgotten,
    /// so the next turn starts it again), `None` when it still runs or never ran.
    pub async fn crashed(&self) -> Option<String> {
        let mut live = self.live.lock().await;
        let l = live.as_mut()?;
        // A killed engine's connections may close a moment before its exit can be read.
        let status = match tokio::time::timeout(EXIT_GRACE, l.child.wait()).await {
            Err(_) => return None,
            Ok(s) => s.ok(),
        };
        // Its last words go to the log; the user gets the plain sentence.
        tracing::warn!(engine_stderr = %last_line(&l.tail), "the built-in engine died");
        l.group.kill_now();
        *live = None;
        self.clear_run_file();
        Some(format!(
            "The built-in engine stopped unexpectedly ({}); your next message starts it again.",
            how(status)
        ))
    }

    /// Stop the engine when no turn came for `idle_stop` (by the clock). `true` when it stopped.
    pub async fn check_idle(&self) -> bool {
        let last = *self.last_turn.lock().unwrap_or_else(|p| p.into_inner());
        let idle = self.clock.now().signed_duration_since(last);
        let limit =
            chrono::Duration::from_std(self.spec.idle_stop).unwrap_or(chrono::Duration::MAX);
        if idle < limit {
            return false;
        }
        self.stop().await
    }

    /// Stop the engine (its whole process group). `true` when one was running.
    pub async fn stop(&self) -> bool {
        let Some(mut l) = self.live.lock().await.take() else {
            return false;
        };
        l.group.terminate(process::DEFAULT_GRACE).await;
        let _ = l.child.start_kill();
        let _ = l.child.wait().await;
        self.clear_run_file();
        true
    }

    /// Check the idle stop every `every` until the engine is dropped (the app and a long CLI
    /// session run this; the clock decides, the interval only how often it is asked).
    pub fn watch_idle(self: &Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(e) = weak.upgrade() else { return };
                e.check_idle().await;
            }
        })
    }

    fn clear_run_file(&self) {
        if let Some(f) = &self.spec.run_file {
            let _ = std::fs::remove_file(f);
        }
    }

    async fn start(&self) -> Result<Live, EngineError> {
        if !self.spec.program.is_file() {
            return Err(EngineError::NotFound);
        }
        if !self.spec.model.is_file() {
            return Err(EngineError::NoModel(self.spec.model.display().to_string()));
        }
        let port = super::sys::free_port().map_err(|source| EngineError::Spawn { source })?;
        let key = super::sys::random_key().map_err(|source| EngineError::Spawn { source })?;
        let mut cmd = Command::new(&self.spec.program);
        cmd.arg("-m")
            .arg(&self.spec.model)
            .args(["--alias", &self.spec.alias])
            .args([
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--jinja",
            ])
            .args(["-t", &self.spec.threads.max(1).to_string()])
            .args(["-c", &self.spec.ctx.to_string()])
            .env(KEY_ENV, &key)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let (mut child, group) = process::spawn(&mut cmd)
            .await
            .map_err(|source| EngineError::Spawn { source })?;
        *self.starts.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        let tail = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut err) = child.stderr.take() {
            let tail = tail.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                while let Ok(n) = err.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                    t.extend_from_slice(&buf[..n]);
                    let cut = t.len().saturating_sub(TAIL);
                    t.drain(..cut);
                }
            });
        }
        let mut live = Live {
            child,
            group,
            port,
            key,
            tail,
        };
        if let Err(e) = self.wait_healthy(&mut live).await {
            live.group.terminate(process::DEFAULT_GRACE).await;
            let _ = live.child.start_kill();
            return Err(e);
        }
        if let (Some(f), Some(pid)) = (&self.spec.run_file, live.child.id()) {
            let run = super::local::Running {
                pid,
                file: self.spec.model.display().to_string(),
                port,
            };
            if let Ok(text) = serde_json::to_vec(&run) {
                let _ = std::fs::write(f, text);
            }
        }
        Ok(live)
    }

    /// Poll `/health` until it answers 200, the child exits, or the start timeout passes.
    async fn wait_healthy(&self, live: &mut Live) -> Result<(), EngineError> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(2))
            .build()
            .map_err(|e| EngineError::Spawn {
                source: std::io::Error::other(e),
            })?;
        let url = format!("http://127.0.0.1:{}/health", live.port);
        let until = tokio::time::Instant::now() + self.spec.start_timeout;
        loop {
            if let Ok(Some(status)) = live.child.try_wait() {
                // Let the stderr reader take the last words.
                tokio::time::sleep(Duration::from_millis(50)).await;
                return Err(EngineError::Exited {
                    how: how(Some(status)),
                    last: last_line(&live.tail),
                });
            }
            let ok = client
                .get(&url)
                .header("authorization", format!("Bearer {}", live.key))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if ok {
                return Ok(());
            }
            if tokio::time::Instant::now() >= until {
                return Err(EngineError::NotReady(self.spec.start_timeout.as_secs()));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn endpoint(port: u16, key: &str) -> Endpoint {
    Endpoint {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        api_key: key.to_string(),
    }
}
