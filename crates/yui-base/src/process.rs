//! The one process runner: every child process YUI starts (the browser tool's `ego-browser`, the
//! voice's `spd-say`, command client tools and their `exec` requests) goes through here.
//!
//! A child is spawned as the leader of its own process group ([`spawn`]), so everything it starts
//! can be stopped with it; its pipes are read into bounded sinks ([`drive`], [`run`]); a deadline
//! or a cancellation stops the whole group ([`Group::terminate`]: `SIGTERM`, then `SIGKILL` after a
//! grace period, even when the leader has already exited).

use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;

/// errno "Text file busy" (Linux, the BSDs and macOS agree on 26).
const ETXTBSY: i32 = 26;

/// The grace between `SIGTERM` and `SIGKILL` when a caller has no reason to pick another.
pub const DEFAULT_GRACE: Duration = Duration::from_millis(500);

/// A spawned child's process group, recorded at spawn (the leader's pid is the group id), so the
/// group can be signalled after the leader has exited and been reaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    pgid: Option<i32>,
}

impl Group {
    /// The group a child spawned by [`spawn`] leads.
    pub fn of(child: &Child) -> Self {
        Self {
            pgid: child
                .id()
                .and_then(|p| i32::try_from(p).ok())
                .filter(|&p| p > 1),
        }
    }

    pub fn id(&self) -> Option<i32> {
        self.pgid
    }

    /// Send `sig` to every process of the group. `false` when none is left (or no group).
    pub fn signal(&self, sig: i32) -> bool {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            // SAFETY: kill(2) has no memory effects; a negative pid addresses the process group
            // the child leads (it was spawned with process_group(0)).
            return unsafe { libc::kill(-pgid, sig) } == 0;
        }
        let _ = sig;
        false
    }

    /// Whether any process of the group is still there (zombies count until reaped).
    pub fn alive(&self) -> bool {
        self.signal(0)
    }

    /// `SIGKILL` to the whole group, now.
    pub fn kill_now(&self) {
        #[cfg(unix)]
        self.signal(libc::SIGKILL);
    }

    /// `SIGTERM` to the group, then `SIGKILL` to it once `grace` has passed unless the group is
    /// gone by then. A zero grace kills at once.
    pub async fn terminate(&self, grace: Duration) {
        #[cfg(unix)]
        {
            if grace.is_zero() {
                self.kill_now();
                return;
            }
            if !self.signal(libc::SIGTERM) {
                return;
            }
            let until = Instant::now() + grace;
            while Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(10)).await;
                if !self.alive() {
                    return;
                }
            }
            self.kill_now();
        }
        #[cfg(not(unix))]
        let _ = grace;
    }
}

/// Make `cmd` start as the leader of a new process group, with no file descriptor but its stdio.
///
/// The app's other threads open descriptors a child must not keep: WebKit makes the pipes it
/// hands its own web and network processes inheritable while it launches them, and a child of
/// ours spawned at that moment (an MCP server starting as the first window opens) kept one open
/// for its whole life, so WebKit's launch waited forever for it to close and the app never drew
/// a window (an e2e start-up stall, seen under load). Everything above stderr is closed when the
/// child runs the program.
pub fn own_group(cmd: &mut Command) {
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: the closure runs in the child between fork and exec and makes one
    // async-signal-safe system call; it allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(|| {
            // close_range(2) with CLOSE_RANGE_CLOEXEC (Linux 5.11+): marked, not closed, so the
            // pipe std reports a failed exec through still works; on an older kernel it fails and
            // the child keeps what it inherited, as before.
            const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC);
            Ok(())
        });
    }
    #[cfg(not(unix))]
    let _ = cmd;
}

/// Spawn `cmd` in a new process group (killed on drop). "Text file busy" (the program is being
/// replaced, e.g. a package upgrade, or was just written) is retried briefly.
pub async fn spawn(cmd: &mut Command) -> std::io::Result<(Child, Group)> {
    own_group(cmd);
    for var in own_env() {
        // Unless the caller set it for this child on purpose.
        if !cmd.as_std().get_envs().any(|(k, _)| k == var.as_str()) {
            cmd.env_remove(var);
        }
    }
    cmd.kill_on_drop(true);
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && tries < 5 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => return Err(e),
            Ok(child) => {
                let group = Group::of(&child);
                return Ok((child, group));
            }
        }
    }
}

/// Why a child could not be started, in plain words (its `Display`, for reports a user reads);
/// the OS's error, with its code, is kept as the source, for the log.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("the command {program} was not found")]
    NotFound {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// The program is there, but its `#!` line names an interpreter that is not.
    #[error("the command {program} names an interpreter on its first line that was not found")]
    NoInterpreter {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the command {program} is not executable")]
    NotExecutable {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the command {program} is not a program this system can run")]
    NotAProgram {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the working directory {dir} does not exist")]
    NoDir {
        dir: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the working directory {dir} is not a directory")]
    NotADir {
        dir: String,
        #[source]
        source: std::io::Error,
    },
    /// Anything else: the kind of failure in words (`out of memory`), never the code.
    #[error("the command {program} could not start ({kind})")]
    Other {
        program: String,
        kind: std::io::ErrorKind,
        #[source]
        source: std::io::Error,
    },
}

impl StartError {
    /// What `cmd` failing to spawn with `e` means. The paths are looked at to tell the cases the
    /// OS reports alike (a missing program and a missing working directory are both `ENOENT`).
    pub fn of(cmd: &Command, e: std::io::Error) -> Self {
        let std = cmd.as_std();
        let program = std.get_program().to_string_lossy().into_owned();
        let dir = std.get_current_dir().map(|d| d.to_path_buf());
        let dir_problem = dir.as_ref().filter(|d| !d.is_dir()).map(|d| {
            let shown = d.display().to_string();
            (shown, d.exists())
        });
        #[cfg(unix)]
        let (enoexec, enotdir) = (libc::ENOEXEC, libc::ENOTDIR);
        #[cfg(not(unix))]
        let (enoexec, enotdir) = (-1, -1);
        match (e.kind(), e.raw_os_error(), dir_problem) {
            (std::io::ErrorKind::NotFound, _, Some((dir, false))) => Self::NoDir { dir, source: e },
            (_, Some(c), Some((dir, true))) if c == enotdir => Self::NotADir { dir, source: e },
            (std::io::ErrorKind::NotFound, _, _) => {
                // A path to a file that is there: what is missing is its interpreter.
                let there = program.contains('/') && std::path::Path::new(&program).is_file();
                match there {
                    true => Self::NoInterpreter { program, source: e },
                    false => Self::NotFound { program, source: e },
                }
            }
            (std::io::ErrorKind::PermissionDenied, _, _) => {
                Self::NotExecutable { program, source: e }
            }
            (_, Some(c), _) if c == enoexec => Self::NotAProgram { program, source: e },
            (kind, _, _) => Self::Other {
                program,
                kind,
                source: e,
            },
        }
    }

    /// The OS's error (what the log keeps, code included).
    pub fn os_error(&self) -> &std::io::Error {
        match self {
            Self::NotFound { source, .. }
            | Self::NoInterpreter { source, .. }
            | Self::NotExecutable { source, .. }
            | Self::NotAProgram { source, .. }
            | Self::NoDir { source, .. }
            | Self::NotADir { source, .. }
            | Self::Other { source, .. } => source,
        }
    }
}

/// [`spawn`], with a failure in plain words ([`StartError`]).
pub async fn start(cmd: &mut Command) -> Result<(Child, Group), StartError> {
    match spawn(cmd).await {
        Ok(c) => Ok(c),
        Err(e) => Err(StartError::of(cmd, e)),
    }
}

static OWN_ENV: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// Environment variables this process set for itself (the app's WebKit settings): no child gets
/// them, so a user's browser or tool runs as the user configured it. Set once, at start.
pub fn keep_env_to_self(vars: Vec<String>) {
    let _ = OWN_ENV.set(vars);
}

fn own_env() -> &'static [String] {
    OWN_ENV.get().map_or(&[], Vec::as_slice)
}

/// How a driven child ended.
#[derive(Debug, Clone, Copy)]
pub struct Ended {
    pub status: Option<ExitStatus>,
    /// The deadline passed and the group was stopped.
    pub killed: bool,
}

/// Reads two of the child's pipes into the sinks until it has exited and the pipes are closed (or
/// `drain` after the exit: a process it launched may hold a pipe open), stopping its group at
/// `deadline` (with `grace`, see [`Group::terminate`]).
#[allow(clippy::too_many_arguments)]
pub async fn drive<A, B>(
    child: &mut Child,
    group: Group,
    mut a: Option<A>,
    sink_a: &mut (dyn FnMut(&[u8]) + Send),
    mut b: Option<B>,
    sink_b: &mut (dyn FnMut(&[u8]) + Send),
    deadline: Instant,
    grace: Duration,
    drain: Duration,
) -> Ended
where
    A: AsyncRead + Unpin,
    B: AsyncRead + Unpin,
{
    let mut buf_a = vec![0u8; 16 * 1024];
    let mut buf_b = vec![0u8; 16 * 1024];
    let mut status = None;
    let mut exited = false;
    let mut killed = false;
    let mut drain_until: Option<Instant> = None;
    loop {
        if exited && a.is_none() && b.is_none() {
            break;
        }
        tokio::select! {
            r = read_some(&mut a, &mut buf_a), if a.is_some() => match r {
                Ok(n) if n > 0 => sink_a(&buf_a[..n]),
                _ => a = None,
            },
            r = read_some(&mut b, &mut buf_b), if b.is_some() => match r {
                Ok(n) if n > 0 => sink_b(&buf_b[..n]),
                _ => b = None,
            },
            s = child.wait(), if !exited => {
                exited = true;
                status = s.ok();
                drain_until = Some(Instant::now() + drain);
            },
            () = sleep_until(deadline), if !exited && !killed => {
                killed = true;
                group.terminate(grace).await;
                let _ = child.start_kill();
            },
            () = sleep_until(drain_until.unwrap_or(deadline)), if drain_until.is_some() => break,
        }
    }
    Ended { status, killed }
}

/// Read from an optional pipe; a missing one never answers.
pub async fn read_some<R: AsyncRead + Unpin>(
    r: &mut Option<R>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    match r {
        Some(r) => r.read(buf).await,
        None => std::future::pending().await,
    }
}

/// Append what fits under `max`; `true` when something was cut.
pub fn push_bounded(v: &mut Vec<u8>, bytes: &[u8], max: usize) -> bool {
    let room = max.saturating_sub(v.len());
    v.extend_from_slice(&bytes[..bytes.len().min(room)]);
    bytes.len() > room
}

/// What [`run`] does with a child.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Written to stdin, which is then closed; `None`: stdin is `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    /// Most bytes kept of stdout, of stderr, and of both interleaved (`combined`) each.
    pub max_capture: usize,
    /// Stop the group at this instant.
    pub deadline: Instant,
    /// Between `SIGTERM` and `SIGKILL`.
    pub grace: Duration,
    /// How long pipes may still be read after the child exited.
    pub drain: Duration,
}

impl RunSpec {
    pub fn new(timeout: Duration, max_capture: usize) -> Self {
        Self {
            stdin: None,
            max_capture,
            deadline: Instant::now() + timeout,
            grace: DEFAULT_GRACE,
            drain: Duration::from_millis(200),
        }
    }
}

/// What [`run`] saw.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// stdout and stderr in the order they arrived.
    pub combined: Vec<u8>,
    /// Some output was cut at `max_capture`.
    pub truncated: bool,
    /// The deadline stopped it.
    pub timed_out: bool,
    /// The cancellation stopped it.
    pub aborted: bool,
}

impl Captured {
    pub fn exit_code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }

    /// The signal that ended the child, if one did.
    pub fn signal(&self) -> Option<i32> {
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            self.status.and_then(|s| s.signal())
        }
        #[cfg(not(unix))]
        None
    }

    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

/// Run `cmd` to the end in its own group with bounded capture, a deadline and cancellation (both
/// stop the whole group: `SIGTERM`, then `SIGKILL` after `spec.grace`). `Err` only when it could
/// not start.
pub async fn run(
    mut cmd: Command,
    spec: RunSpec,
    cancel: &CancellationToken,
) -> std::io::Result<Captured> {
    cmd.stdin(if spec.stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let (mut child, group) = spawn(&mut cmd).await?;
    // Written from its own task: a child that does not read stdin must not stall the deadline.
    let writer = match (child.stdin.take(), spec.stdin) {
        (Some(mut w), Some(bytes)) => Some(tokio::spawn(async move {
            let _ = w.write_all(&bytes).await;
            let _ = w.shutdown().await;
        })),
        _ => None,
    };
    let (out, err) = (child.stdout.take(), child.stderr.take());
    let cap = std::sync::Mutex::new(Captured::default());
    let max = spec.max_capture;
    let sink = |which: u8, b: &[u8]| {
        let mut c = cap.lock().unwrap_or_else(|p| p.into_inner());
        let cut = if which == 0 {
            push_bounded(&mut c.stdout, b, max)
        } else {
            push_bounded(&mut c.stderr, b, max)
        };
        let cut_all = push_bounded(&mut c.combined, b, max);
        c.truncated |= cut || cut_all;
    };
    let mut sink_out = |b: &[u8]| sink(0, b);
    let mut sink_err = |b: &[u8]| sink(1, b);
    let ended = tokio::select! {
        biased;
        () = cancel.cancelled() => None,
        e = drive(&mut child, group, out, &mut sink_out, err, &mut sink_err, spec.deadline, spec.grace, spec.drain) => Some(e),
    };
    if let Some(w) = writer {
        w.abort();
    }
    let mut c = cap.into_inner().unwrap_or_else(|p| p.into_inner());
    match ended {
        None => {
            c.aborted = true;
            group.terminate(spec.grace).await;
            let _ = child.start_kill();
            c.status = child.try_wait().ok().flatten();
        }
        Some(e) => {
            c.status = e.status;
            c.timed_out = e.killed;
        }
    }
    Ok(c)
}

/// A signal number's name (`SIGTERM`), for results that report how a child ended.
pub fn signal_name(sig: i32) -> String {
    #[cfg(unix)]
    {
        let name = match sig {
            libc::SIGHUP => "SIGHUP",
            libc::SIGINT => "SIGINT",
            libc::SIGQUIT => "SIGQUIT",
            libc::SIGABRT => "SIGABRT",
            libc::SIGKILL => "SIGKILL",
            libc::SIGSEGV => "SIGSEGV",
            libc::SIGPIPE => "SIGPIPE",
            libc::SIGALRM => "SIGALRM",
            libc::SIGTERM => "SIGTERM",
            libc::SIGUSR1 => "SIGUSR1",
            libc::SIGUSR2 => "SIGUSR2",
            _ => return format!("SIG{sig}"),
        };
        name.to_string()
    }
    #[cfg(not(unix))]
    format!("SIG{sig}")
}

#[cfg(test)]
mod tests;
