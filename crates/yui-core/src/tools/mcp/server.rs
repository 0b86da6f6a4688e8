//! One configured MCP server's life: started on demand (stdio through the one process runner, its
//! stdout/stdin handed to rmcp as the transport; or streamable HTTP), its tools listed and listed
//! again on `notifications/tools/list_changed`, watched until it exits, restarted by the next call
//! with backoff, and stopped as a process group. Stopping it gives up a start in progress at once
//! (a server that never answers `initialize` would hold it for its whole timeout).

use super::config::{ServerDef, Transport};
use super::listing::{self, Listing};
use crate::process::{self, Group};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, Peer, RoleClient, RunningService};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use serde::Serialize;
use std::collections::HashSet;
use std::process::Stdio;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// stderr of one start written to the log at most; the rest is read and dropped.
pub const MAX_STDERR_LOGGED: usize = 64 * 1024;
/// The longest a JSON-RPC line from a stdio server may be (longer ones are dropped).
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// The grace between `SIGTERM` and `SIGKILL` when a server is stopped.
pub const GRACE: Duration = Duration::from_millis(500);
/// The longest wait between restarts after repeated crashes.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Why a start ended when the server was stopped meanwhile (reload, exit).
const STOPPED: &str = "stopped before it was ready";
/// A server that stayed up this long starts its backoff over.
const STABLE: Duration = Duration::from_secs(60);

/// Where a server is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "reason", rename_all = "lowercase")]
pub enum State {
    /// Not started yet (servers start when a character window opens, or at the first call).
    Idle,
    Starting,
    Ready,
    /// Could not start (or list its tools): why.
    Failed(String),
    /// Was ready, then went away: why. The next call starts it again.
    Stopped(String),
    /// `"disabled": true` in mcp.json.
    Disabled,
}

impl State {
    /// The state's name as reports show it (`idle`, `starting`, `ready`, `failed`, `stopped`,
    /// `disabled`).
    pub fn word(&self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Starting => "starting",
            Self::Ready => "ready",
            Self::Failed(_) => "failed",
            Self::Stopped(_) => "stopped",
            Self::Disabled => "disabled",
        }
    }
    /// Why it failed or stopped.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Self::Failed(r) | Self::Stopped(r) => Some(r),
            _ => None,
        }
    }
}

struct Conn {
    service: RunningService<RoleClient, Handler>,
    group: Option<Group>,
}

#[derive(Default)]
struct Shared {
    listing: Arc<Listing>,
    conn: Option<Conn>,
    gen: u64,
    /// Starts since the server was last stable.
    attempts: u32,
    last_start: Option<Instant>,
    ready_at: Option<Instant>,
    /// Cancelled by [`Server::stop`]: the start in progress gives up (then a fresh one).
    abort: CancellationToken,
}

/// One server.
pub struct Server {
    pub def: Arc<ServerDef>,
    /// Names a tool of this server may not take (built-in and command tools).
    taken: Arc<HashSet<String>>,
    state: watch::Sender<State>,
    shared: Mutex<Shared>,
    starting: tokio::sync::Mutex<()>,
}

impl Server {
    pub fn new(def: Arc<ServerDef>, taken: Arc<HashSet<String>>) -> Arc<Self> {
        let first = if def.disabled {
            State::Disabled
        } else {
            State::Idle
        };
        Arc::new(Self {
            def,
            taken,
            state: watch::channel(first).0,
            shared: Mutex::default(),
            starting: tokio::sync::Mutex::new(()),
        })
    }

    fn shared(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn state(&self) -> State {
        self.state.borrow().clone()
    }

    /// A receiver that sees every state change.
    pub fn watch(&self) -> watch::Receiver<State> {
        self.state.subscribe()
    }

    /// The tools listed last (kept while the server is stopped, so the declared set holds still).
    pub fn listing(&self) -> Arc<Listing> {
        self.shared().listing.clone()
    }

    /// Start it in the background if it never started.
    pub fn warm(self: &Arc<Self>, rt: &tokio::runtime::Handle) {
        if self.state() == State::Idle {
            // Starting from now, not from when the task first runs: a report made right after
            // (Reload tools answers with one) says so, and the page asks again until it is ready.
            self.state.send_replace(State::Starting);
            let me = self.clone();
            // Taken now: a stop before the task runs gives this start up too.
            let abort = self.shared().abort.clone();
            rt.spawn(async move {
                let _ = me
                    .ensure_with(Instant::now() + me.def.timeout(), abort)
                    .await;
            });
        }
    }

    /// A connection to call through: the running one, or a new start (after the backoff a crash
    /// earned, when that ends before `deadline`). `Err` is the answer's text after `error: `.
    pub(crate) async fn ensure(
        self: &Arc<Self>,
        deadline: Instant,
    ) -> Result<Peer<RoleClient>, String> {
        // Taken before the lock: a stop while this waits for it gives this start up too.
        let abort = self.shared().abort.clone();
        self.ensure_with(deadline, abort).await
    }

    /// [`Server::ensure`], given up when `abort` is cancelled ([`Server::stop`]).
    async fn ensure_with(
        self: &Arc<Self>,
        deadline: Instant,
        abort: CancellationToken,
    ) -> Result<Peer<RoleClient>, String> {
        let name = &self.def.name;
        let _one = self.starting.lock().await;
        if abort.is_cancelled() {
            return Err(format!("{name} was stopped"));
        }
        match self.state() {
            State::Ready => {
                if let Some(c) = &self.shared().conn {
                    return Ok(c.service.peer().clone());
                }
            }
            State::Disabled => return Err(format!("{name} is disabled in mcp.json")),
            _ => {}
        }
        let wait = self.backoff();
        if Instant::now() + wait > deadline {
            return Err(match self.state() {
                State::Stopped(r) => format!("{name} stopped: {r}"),
                State::Failed(r) => format!("{name} could not start: {r}"),
                _ => format!("{name} is not running"),
            });
        }
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = abort.cancelled() => return Err(format!("{name} was stopped")),
        }
        let gen = {
            let mut s = self.shared();
            s.gen += 1;
            s.attempts += 1;
            s.last_start = Some(Instant::now());
            s.gen
        };
        self.state.send_replace(State::Starting);
        let limit = deadline
            .saturating_duration_since(Instant::now())
            .min(self.def.timeout());
        // `connect` watches `abort` itself, so what it started is stopped when it gives up.
        match self.connect(gen, limit, &abort).await {
            Ok((conn, listing)) => {
                for d in &listing.diagnostics {
                    tracing::warn!(server = %name, "mcp: {d}");
                }
                let peer = conn.service.peer().clone();
                {
                    let mut s = self.shared();
                    s.conn = Some(conn);
                    s.listing = Arc::new(listing);
                    s.ready_at = Some(Instant::now());
                }
                tracing::info!(server = %name, tools = self.listing().tools.len(), "mcp: ready");
                self.state.send_replace(State::Ready);
                Ok(peer)
            }
            Err(why) => {
                tracing::warn!(server = %name, "mcp: could not start: {why}");
                self.state.send_replace(State::Failed(why.clone()));
                Err(format!("{name} could not start: {why}"))
            }
        }
    }

    /// How long the next start must wait: nothing the first time and after a stable run, then
    /// 1 s, 2 s, 4 s … up to [`MAX_BACKOFF`] since the last start.
    fn backoff(&self) -> Duration {
        let mut s = self.shared();
        if s.ready_at.is_some_and(|t| t.elapsed() >= STABLE) {
            s.attempts = 0;
        }
        if s.attempts == 0 {
            return Duration::ZERO;
        }
        let step = Duration::from_secs(1u64 << (s.attempts - 1).min(5)).min(MAX_BACKOFF);
        s.last_start
            .map(|t| (t + step).saturating_duration_since(Instant::now()))
            .unwrap_or_default()
    }

    /// A limit in words: the configured timeout when the limit is it (give or take the moments
    /// spent before), else the time that was left.
    fn ms(&self, limit: Duration) -> String {
        if limit + Duration::from_millis(100) >= self.def.timeout() {
            format!("{} ms", self.def.timeout_ms)
        } else {
            format!("{} ms", limit.as_millis())
        }
    }

    /// Start, `initialize` and `tools/list` within `limit`; `abort` gives up at once (the process
    /// stopped, the session closed).
    async fn connect(
        self: &Arc<Self>,
        gen: u64,
        limit: Duration,
        abort: &CancellationToken,
    ) -> Result<(Conn, Listing), String> {
        let handler = Handler {
            server: Arc::downgrade(self),
            gen,
        };
        let (service, group) = match &self.def.transport {
            Transport::Stdio { .. } => self.start_stdio(handler, gen, limit, abort).await?,
            Transport::Http { url, headers } => {
                let transport = StreamableHttpClientTransport::with_client(
                    super::http::Http::new(headers),
                    StreamableHttpClientTransportConfig::with_uri(url.as_str()),
                );
                let served = tokio::select! {
                    r = tokio::time::timeout(limit, handler.serve(transport)) => r,
                    () = abort.cancelled() => return Err(STOPPED.into()),
                };
                let s = served
                    .map_err(|_| format!("no answer to initialize within {}", self.ms(limit)))?
                    .map_err(|e| e.to_string())?;
                (s, None)
            }
        };
        let conn = Conn { service, group };
        let listed = tokio::select! {
            r = tokio::time::timeout(limit, conn.service.peer().list_all_tools()) => r,
            () = abort.cancelled() => {
                stop_conn(conn).await;
                return Err(STOPPED.into());
            }
        };
        match listed {
            Ok(Ok(tools)) => {
                let listing = listing::build(&self.def.name, &tools, &self.taken);
                Ok((conn, listing))
            }
            Ok(Err(e)) => {
                stop_conn(conn).await;
                Err(format!("tools/list failed: {e}"))
            }
            Err(_) => {
                stop_conn(conn).await;
                Err(format!("no answer to tools/list within {}", self.ms(limit)))
            }
        }
    }

    async fn start_stdio(
        self: &Arc<Self>,
        handler: Handler,
        gen: u64,
        limit: Duration,
        abort: &CancellationToken,
    ) -> Result<(RunningService<RoleClient, Handler>, Option<Group>), String> {
        let Transport::Stdio {
            program,
            args,
            env,
            cwd,
            ..
        } = &self.def.transport
        else {
            return Err("not a stdio server".into());
        };
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        let (mut child, group) = process::start(&mut cmd).await.map_err(|e| {
            // The user reads the plain words; the log keeps the OS's error and its code.
            let os = e.os_error();
            tracing::warn!(server = %self.def.name, error = %os, code = ?os.raw_os_error(), "mcp: {e}");
            e.to_string()
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            group.kill_now();
            return Err("no pipes to the server".into());
        };
        let last_line = Arc::new(Mutex::new(String::new()));
        tokio::spawn(log_stderr(self.def.name.clone(), stderr, last_line.clone()));
        let (exit_tx, mut exit_rx) = watch::channel(None::<String>);
        let me = Arc::downgrade(self);
        let last = last_line.clone();
        tokio::spawn(async move {
            let status = child.wait().await;
            // Let the stderr reader catch the last words.
            tokio::time::sleep(Duration::from_millis(20)).await;
            let why = exit_reason(status.ok(), &last.lock().unwrap_or_else(|p| p.into_inner()));
            let _ = exit_tx.send(Some(why.clone()));
            if let Some(me) = me.upgrade() {
                me.went_away(gen, why);
            }
        });
        let transport = AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(MAX_LINE);
        // (answer, whether an exit may explain it better)
        let served = tokio::select! {
            r = tokio::time::timeout(limit, handler.serve(transport)) => match r {
                Ok(Ok(s)) => Ok(s),
                Ok(Err(e)) => Err((e.to_string(), true)),
                Err(_) => Err((format!("no answer to initialize within {}", self.ms(limit)), false)),
            },
            w = exit_rx.wait_for(Option::is_some) => {
                Err((w.map(|v| v.clone().unwrap_or_default()).unwrap_or_default(), false))
            }
            () = abort.cancelled() => Err((STOPPED.to_string(), false)),
        };
        match served {
            Ok(s) => Ok((s, Some(group))),
            Err((e, ask_exit)) => {
                // A process that exited says more than "connection closed": give its exit a moment.
                let exited = if ask_exit {
                    tokio::time::timeout(
                        Duration::from_millis(300),
                        exit_rx.wait_for(Option::is_some),
                    )
                    .await
                    .ok()
                    .and_then(|r| r.ok().and_then(|v| v.clone()))
                } else {
                    None
                };
                group.terminate(GRACE).await;
                Err(exited.unwrap_or(e))
            }
        }
    }

    /// The connection of start `gen` is gone (the process exited, or HTTP calls fail for good).
    pub fn went_away(&self, gen: u64, why: String) {
        let conn = {
            let mut s = self.shared();
            if s.gen != gen || self.state() != State::Ready {
                return;
            }
            s.conn.take()
        };
        tracing::warn!(server = %self.def.name, "mcp: stopped: {why}");
        self.state.send_replace(State::Stopped(why));
        if let Some(c) = conn {
            tokio::spawn(stop_conn(c));
        }
    }

    /// The start a call's connection came from (to report that it went away).
    pub fn generation(&self) -> u64 {
        self.shared().gen
    }

    /// List the tools again (the server said its list changed).
    async fn refresh(self: Arc<Self>, gen: u64) {
        let peer = {
            let s = self.shared();
            match &s.conn {
                Some(c) if s.gen == gen => c.service.peer().clone(),
                _ => return,
            }
        };
        match tokio::time::timeout(self.def.timeout(), peer.list_all_tools()).await {
            Ok(Ok(tools)) => {
                let listing = listing::build(&self.def.name, &tools, &self.taken);
                tracing::info!(server = %self.def.name, tools = listing.tools.len(), "mcp: tool list changed");
                let mut s = self.shared();
                if s.gen == gen {
                    s.listing = Arc::new(listing);
                }
                drop(s);
                // Readers of the state learn of the new list too.
                self.state.send_modify(|_| {});
            }
            Ok(Err(e)) => tracing::warn!(server = %self.def.name, "mcp: tools/list failed: {e}"),
            Err(_) => tracing::warn!(server = %self.def.name, "mcp: tools/list timed out"),
        }
    }

    /// Stop it (reload, exit): a start in progress gives up at once, the connection closes and
    /// the process group is stopped.
    pub async fn stop(&self) {
        std::mem::take(&mut self.shared().abort).cancel();
        let _one = self.starting.lock().await;
        let conn = {
            let mut s = self.shared();
            s.gen += 1;
            s.conn.take()
        };
        if let Some(c) = conn {
            stop_conn(c).await;
        }
        if !self.def.disabled {
            self.state.send_replace(State::Idle);
        }
    }
}

/// Close the session, then stop the group: `SIGTERM`, `SIGKILL` after [`GRACE`].
async fn stop_conn(mut c: Conn) {
    let _ = c
        .service
        .close_with_timeout(Duration::from_millis(200))
        .await;
    if let Some(g) = c.group {
        g.terminate(GRACE).await;
    }
}

fn exit_reason(status: Option<std::process::ExitStatus>, last_stderr: &str) -> String {
    let how = match status {
        None => "its process could not be waited for".to_string(),
        Some(s) => {
            #[cfg(unix)]
            if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(&s) {
                return with_line(
                    format!("killed by {}", process::signal_name(sig)),
                    last_stderr,
                );
            }
            match s.code() {
                Some(0) => "exited".to_string(),
                Some(c) => format!("exited with status {c}"),
                None => "exited".to_string(),
            }
        }
    };
    with_line(how, last_stderr)
}

fn with_line(how: String, line: &str) -> String {
    if line.is_empty() {
        how
    } else {
        format!("{how}: {line}")
    }
}

/// Write a server's stderr to the log line by line, up to [`MAX_STDERR_LOGGED`] bytes per start,
/// and keep its last line (for the reason a start failed or a server stopped).
async fn log_stderr(server: String, stderr: tokio::process::ChildStderr, last: Arc<Mutex<String>>) {
    let mut r = BufReader::new(stderr);
    let mut logged = 0usize;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        // Bounded: a line without an end is read in pieces of at most 8 KiB.
        let n = match (&mut r).take(8 * 1024).read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let line = String::from_utf8_lossy(&buf).trim_end().to_string();
        if !line.is_empty() {
            let mut l = last.lock().unwrap_or_else(|p| p.into_inner());
            *l = line.chars().take(300).collect();
        }
        if logged < MAX_STDERR_LOGGED {
            logged += n;
            tracing::info!(server = %server, "mcp stderr: {line}");
            if logged >= MAX_STDERR_LOGGED {
                tracing::warn!(server = %server, "mcp: more stderr is not logged");
            }
        }
    }
}

use tokio::io::AsyncReadExt as _;

/// rmcp's side of the client: who we are, and `notifications/tools/list_changed`.
struct Handler {
    server: Weak<Server>,
    gen: u64,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(s) = self.server.upgrade() {
            tokio::spawn(s.refresh(self.gen));
        }
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("yui", env!("CARGO_PKG_VERSION")),
        )
    }
}
