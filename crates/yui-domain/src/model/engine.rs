//! The built-in engine's supervisor: llama.cpp's `llama-server` as a child process, started
//! through the one process runner ([`crate::process::spawn`]: its own process group, killed with
//! YUI) on 127.0.0.1 with a random free port and a per-run API key passed in the environment
//! (`LLAMA_API_KEY`, never on the command line), `--jinja` (llama.cpp's own chat templates and
//! tool-call parsers), the model's name as its `--alias`, the threads of
//! [`super::Config::threads`], and the DRY sampler against loops ([`DRY_MULTIPLIER`],
//! [`DRY_BREAKERS`]).
//!
//! [`Engine::ensure`] starts it on the first turn that needs it and waits for `/health`; it stays
//! warm while turns come ([`Engine::touch`]) and [`Engine::check_idle`] stops it once the clock
//! (passed in) says `idle_stop` has passed without a turn. A crash is found by
//! [`Engine::crashed`], said in one plain sentence, and the next [`Engine::ensure`] starts it
//! again. Turns reach it through the Chat Completions transport like any server
//! ([`Endpoint`] is its base URL and key).
//!
//! [`locate`] finds the program: the setting `yui.model.engine_path`, else the engine bundled
//! with YUI (beside the executable, see [`bundled_candidates`]), else `llama-server` on PATH.

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
/// A folder holding the bundled engine, ahead of the folders found from the executable: set by
/// `scripts/dev.sh run` to the build cache of `scripts/build-engine.sh`.
pub const ENGINE_DIR_ENV: &str = "YUI_ENGINE_DIR";
/// Where the packages install the engine, relative to the executable's folder (`/usr/bin` →
/// `/usr/lib/yui/engine`), and where `scripts/build-engine.sh` links its build for a dev build
/// (`target/debug` → `target/engine`).
pub const BUNDLED_DIRS: [&str; 2] = ["../lib/yui/engine", "../engine"];
/// llama.cpp's DRY ("don't repeat yourself") sampler, off in llama-server by default: it
/// penalizes continuing a sequence already in the last 64 tokens, which is how small models
/// loop. 0.8 is the value its author and llama.cpp's docs suggest.
pub const DRY_MULTIPLIER: &str = "0.8";
/// DRY's sequence breakers: llama.cpp's defaults without the newline. A match stops at a
/// breaker, so with the newline one a sentence repeated on lines of its own ("I am Kai." 75
/// times) never grew a match long enough to be penalized.
pub const DRY_BREAKERS: [&str; 3] = [":", "\"", "*"];
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
    #[error("The built-in engine (llama-server) was not found beside YUI nor on PATH: reinstall YUI, or set yui.model.engine_path to a llama-server.")]
    NotFound,
    #[error("The engine that yui.model.engine_path names, {0}, is not there: correct or clear that setting.")]
    NotAtSetting(String),
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

/// Where the engine was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `yui.model.engine_path`
    Setting,
    /// The engine shipped with YUI ([`bundled_candidates`]).
    Bundled,
    /// `llama-server` on PATH.
    Path,
}

/// The engine to run, as this process finds it: [`locate_in`] with the executable's folder,
/// [`ENGINE_DIR_ENV`] and `PATH`.
pub fn locate(setting: Option<&Path>) -> Result<(PathBuf, Source), EngineError> {
    let exe = std::env::current_exe().ok();
    let bundled = bundled_candidates(exe.as_deref(), std::env::var_os(ENGINE_DIR_ENV).as_deref());
    locate_in(setting, &bundled, std::env::var_os("PATH").as_deref())
}

/// `program` as a path ([`locate`] without the reason).
pub fn find_program(setting: Option<&Path>) -> Option<PathBuf> {
    locate(setting).ok().map(|(p, _)| p)
}

/// The engine: the setting when given (an error when it names no file: the user chose that
/// program, another one would surprise), else the first of `bundled` that is an executable
/// file, else `llama-server` in `path_var`.
pub fn locate_in(
    setting: Option<&Path>,
    bundled: &[PathBuf],
    path_var: Option<&std::ffi::OsStr>,
) -> Result<(PathBuf, Source), EngineError> {
    if let Some(p) = setting {
        return if p.is_file() {
            Ok((p.to_path_buf(), Source::Setting))
        } else {
            Err(EngineError::NotAtSetting(p.display().to_string()))
        };
    }
    if let Some(p) = bundled.iter().find(|p| crate::paths::is_executable_file(p)) {
        return Ok((p.clone(), Source::Bundled));
    }
    crate::paths::find_program(PROGRAM, path_var)
        .map(|p| (p, Source::Path))
        .ok_or(EngineError::NotFound)
}

/// Where a bundled engine may be, in order: `env_dir/llama-server` ([`ENGINE_DIR_ENV`]), then
/// each of [`BUNDLED_DIRS`] from the folder of `exe` (`/usr/bin/yui-app` →
/// `/usr/lib/yui/engine/llama-server`; `target/release/yui-app` → `target/engine/llama-server`).
pub fn bundled_candidates(exe: Option<&Path>, env_dir: Option<&std::ffi::OsStr>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(d) = env_dir.filter(|d| !d.is_empty()) {
        out.push(Path::new(d).join(PROGRAM));
    }
    if let Some(dir) = exe.and_then(Path::parent) {
        for rel in BUNDLED_DIRS {
            let p = dir.join(rel).join(PROGRAM);
            // `..` resolved by hand: `target/debug/../engine` reads better in a log, and a
            // missing folder on the way must not matter.
            out.push(normalize(&p));
        }
    }
    out
}

/// `a/b/../c` → `a/c`, lexically (no file system access).
fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
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
            // llama.cpp's DRY sampler against loops: a fresh machine's first reply from the
            // registry's small model repeated "Sinbad the Bull." for its whole reply cap.
            .args(["--dry-multiplier", DRY_MULTIPLIER])
            .args(
                DRY_BREAKERS
                    .iter()
                    .flat_map(|b| ["--dry-sequence-breaker", b]),
            )
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// An executable `llama-server` in `dir` (made).
    fn program_in(dir: &Path) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join(PROGRAM);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    /// A setting, a bundled engine and one on PATH: each wins only when those before it are
    /// absent.
    #[test]
    fn the_setting_comes_first_then_the_bundled_engine_then_path() {
        let t = tempfile::tempdir().unwrap();
        let own = program_in(&t.path().join("own"));
        let bundled = program_in(&t.path().join("usr/lib/yui/engine"));
        let on_path = program_in(&t.path().join("bin"));
        let path_var = std::env::join_paths([t.path().join("bin")]).unwrap();
        let candidates = vec![t.path().join("nowhere/llama-server"), bundled.clone()];

        let got = locate_in(Some(&own), &candidates, Some(&path_var)).unwrap();
        assert_eq!(got, (own, Source::Setting));
        let got = locate_in(None, &candidates, Some(&path_var)).unwrap();
        assert_eq!(got, (bundled.clone(), Source::Bundled));
        std::fs::remove_file(&bundled).unwrap();
        let got = locate_in(None, &candidates, Some(&path_var)).unwrap();
        assert_eq!(got, (on_path, Source::Path));
        let err = locate_in(None, &candidates, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "The built-in engine (llama-server) was not found beside YUI nor on PATH: reinstall \
             YUI, or set yui.model.engine_path to a llama-server."
        );
    }

    /// A setting that names no file is said as such, not passed over for another engine.
    #[test]
    fn a_setting_naming_no_file_is_an_error_even_with_a_bundled_engine() {
        let t = tempfile::tempdir().unwrap();
        let bundled = program_in(&t.path().join("engine"));
        let gone = t.path().join("gone/llama-server");
        let err = locate_in(Some(&gone), &[bundled], None).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "The engine that yui.model.engine_path names, {}, is not there: correct or clear \
                 that setting.",
                gone.display()
            )
        );
    }

    /// A bundled file without an execute bit (a broken install) is passed over.
    #[test]
    fn a_bundled_file_that_cannot_run_is_passed_over() {
        let t = tempfile::tempdir().unwrap();
        let bundled = program_in(&t.path().join("engine"));
        std::fs::set_permissions(&bundled, std::fs::Permissions::from_mode(0o644)).unwrap();
        let on_path = program_in(&t.path().join("bin"));
        let path_var = std::env::join_paths([t.path().join("bin")]).unwrap();
        let got = locate_in(None, &[bundled], Some(&path_var)).unwrap();
        assert_eq!(got, (on_path, Source::Path));
    }

    /// The packages' layout, a dev build's, and the environment's folder ahead of both.
    #[test]
    fn bundled_places_follow_the_executable() {
        let got = bundled_candidates(Some(Path::new("/usr/bin/yui-app")), None);
        assert_eq!(
            got,
            vec![
                PathBuf::from("/usr/lib/yui/engine/llama-server"),
                PathBuf::from("/usr/engine/llama-server"),
            ]
        );
        let got = bundled_candidates(
            Some(Path::new("/src/yui/target/release/yui")),
            Some(std::ffi::OsStr::new("/cache/engine/1")),
        );
        assert_eq!(
            got,
            vec![
                PathBuf::from("/cache/engine/1/llama-server"),
                PathBuf::from("/src/yui/target/lib/yui/engine/llama-server"),
                PathBuf::from("/src/yui/target/engine/llama-server"),
            ]
        );
        // An empty variable is no folder (not the current one).
        let got = bundled_candidates(None, Some(std::ffi::OsStr::new("")));
        assert!(got.is_empty());
    }

    /// The dev build's link: a folder found through `target/engine` → the cache.
    #[test]
    fn the_dev_build_finds_the_engine_through_target_engine() {
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("cache/engine/11434.0.0");
        let built = program_in(&cache);
        std::fs::create_dir_all(t.path().join("target/release")).unwrap();
        std::os::unix::fs::symlink(&cache, t.path().join("target/engine")).unwrap();
        let exe = t.path().join("target/release/yui-app");
        let candidates = bundled_candidates(Some(&exe), None);
        let (p, from) = locate_in(None, &candidates, None).unwrap();
        assert_eq!(from, Source::Bundled);
        assert_eq!(p, t.path().join("target/engine/llama-server"));
        assert_eq!(p.canonicalize().unwrap(), built.canonicalize().unwrap());
    }
}
