//! Running one command tool call: start the executable in its own process group, speak the
//! version 4 frames (prepare → ready → execute → result, with `exec` requests in between), enforce
//! the limits, and answer one string. Any failure stops the whole group (`SIGTERM`, then `SIGKILL`
//! after the grace) and answers `error: <what went wrong>`.

use super::config::Definition;
use super::protocol::{self as p, Incoming};
use crate::process;
use crate::tools::CallScope;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;

/// The ids the prepare frame carries.
#[derive(Debug, Clone)]
pub struct CallIds {
    /// The turn id.
    pub session_id: String,
    /// The preset id.
    pub agent_id: String,
    pub call_id: String,
}

/// Knobs of a run. `Default` is what a turn uses.
#[derive(Debug, Clone, Copy)]
pub struct RunConfig {
    /// Between `SIGTERM` and `SIGKILL` when the group is stopped.
    pub grace: Duration,
    /// How long pipes may still be read after the command exited.
    pub drain: Duration,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            grace: Duration::from_millis(500),
            drain: Duration::from_millis(200),
        }
    }
}

/// Arguments that do not match a tool's schema: the first few violations, in plain words
/// (`/in_minutes: -3 is less than the minimum of 1`), joined by "; " when shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("; "))]
pub struct InvalidArgs(pub Vec<String>);

/// Validate `args` against the definition's schema.
pub fn check_args(validator: &jsonschema::Validator, args: &Value) -> Result<(), InvalidArgs> {
    let errors: Vec<String> = validator
        .iter_errors(args)
        .take(3)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(InvalidArgs(errors))
    }
}

/// Run one call to its single answer string.
pub async fn run_call(
    def: &Definition,
    args: &Value,
    ids: &CallIds,
    scope: &CallScope,
    cfg: RunConfig,
    cancel: &CancellationToken,
) -> String {
    let name = &def.name;
    let mut cmd = Command::new(&def.program);
    cmd.args(&def.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (mut child, group) = match process::spawn(&mut cmd).await {
        Ok(c) => c,
        Err(e) => {
            return format!(
                "error: {name} could not start ({}): {e}",
                def.program.display()
            )
        }
    };
    let deadline = Instant::now() + def.timeout();
    // Stops every exec request of this call when the call ends, however it ends.
    let call_token = CancellationToken::new();
    let mut conv = Conversation {
        def,
        scope,
        cfg,
        call_token: call_token.clone(),
        deadline,
    };
    let outcome = tokio::select! {
        biased;
        () = cancel.cancelled() => Err("turn stopped".to_string()),
        () = sleep_until(deadline) => Err(format!("{name} timed out after {} ms", def.execution_timeout_ms)),
        r = conv.talk(&mut child, args, ids) => r,
    };
    call_token.cancel();
    match outcome {
        Ok(text) => text,
        Err(why) => {
            group.terminate(cfg.grace).await;
            let _ = child.start_kill();
            let _ = child.try_wait();
            format!("error: {why}")
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    AwaitReady,
    Executing,
    Done,
}

struct Conversation<'a> {
    def: &'a Definition,
    scope: &'a CallScope,
    cfg: RunConfig,
    call_token: CancellationToken,
    deadline: Instant,
}

struct Exchange {
    phase: Phase,
    result: Option<(bool, String)>,
    frames: usize,
    stdout_bytes: usize,
    line: Vec<u8>,
    stderr: Vec<u8>,
    seen_ids: HashSet<String>,
    pending: HashMap<String, CancellationToken>,
}

impl Conversation<'_> {
    async fn talk(
        &mut self,
        child: &mut Child,
        args: &Value,
        ids: &CallIds,
    ) -> Result<String, String> {
        let name = self.def.name.clone();
        let (Some(stdin), Some(mut stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(format!("{name}: no pipes to the command"));
        };
        // Frames to the command go through their own task: a command that does not read its
        // stdin must not stall reading its stdout.
        let (to_cmd, mut frames_out) = mpsc::unbounded_channel::<Value>();
        let writer = tokio::spawn(async move {
            let mut stdin = stdin;
            while let Some(frame) = frames_out.recv().await {
                let mut line = frame.to_string().into_bytes();
                line.push(b'\n');
                if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
        let _writer = AbortOnDrop(writer);
        let _ = to_cmd.send(p::prepare(
            &ids.session_id,
            &ids.agent_id,
            &ids.call_id,
            &name,
            args,
        ));
        let (exec_tx, mut exec_rx) = mpsc::unbounded_channel::<(String, Value)>();
        let mut ex = Exchange {
            phase: Phase::AwaitReady,
            result: None,
            frames: 0,
            stdout_bytes: 0,
            line: Vec::new(),
            stderr: Vec::new(),
            seen_ids: HashSet::new(),
            pending: HashMap::new(),
        };
        let mut out_buf = vec![0u8; 64 * 1024];
        let mut err_buf = vec![0u8; 16 * 1024];
        let (mut out_open, mut err_open) = (true, true);
        let mut status = None;
        let mut drain_until: Option<Instant> = None;
        loop {
            if status.is_some() && !out_open && !err_open {
                break;
            }
            tokio::select! {
                r = stdout.read(&mut out_buf), if out_open => match r {
                    Ok(n) if n > 0 => self.on_stdout(&mut ex, &out_buf[..n], &to_cmd, &exec_tx)?,
                    _ => out_open = false,
                },
                r = stderr.read(&mut err_buf), if err_open => match r {
                    Ok(n) if n > 0 => {
                        if process::push_bounded(&mut ex.stderr, &err_buf[..n], p::MAX_STDERR) {
                            return Err(format!("{name} wrote more than 1 MiB to stderr"));
                        }
                    }
                    _ => err_open = false,
                },
                Some((id, answer)) = exec_rx.recv() => {
                    ex.pending.remove(&id);
                    let _ = to_cmd.send(answer);
                },
                s = child.wait(), if status.is_none() => {
                    status = Some(s.map_err(|e| format!("{name}: waiting for it failed: {e}"))?);
                    drain_until = Some(Instant::now() + self.cfg.drain);
                },
                () = sleep_until(drain_until.unwrap_or(self.deadline)), if drain_until.is_some() => break,
            }
        }
        if !ex.line.is_empty() {
            return Err(format!(
                "{name} sent a malformed frame: its last line has no newline"
            ));
        }
        let status = status.ok_or_else(|| format!("{name}: no exit status"))?;
        match (ex.phase, ex.result) {
            (Phase::AwaitReady, _) => Err(with_stderr(
                format!(
                    "{name} exited without a ready frame ({})",
                    exit_words(&status)
                ),
                &ex.stderr,
            )),
            (Phase::Executing, _) | (Phase::Done, None) => Err(with_stderr(
                format!("{name} exited without a result ({})", exit_words(&status)),
                &ex.stderr,
            )),
            (Phase::Done, Some(_)) if !status.success() => Err(with_stderr(
                format!("{name} {} after its result", exit_words(&status)),
                &ex.stderr,
            )),
            (Phase::Done, Some((_, text))) => Ok(text),
        }
    }

    fn on_stdout(
        &self,
        ex: &mut Exchange,
        mut bytes: &[u8],
        to_cmd: &mpsc::UnboundedSender<Value>,
        exec_tx: &mpsc::UnboundedSender<(String, Value)>,
    ) -> Result<(), String> {
        let name = &self.def.name;
        ex.stdout_bytes += bytes.len();
        if ex.stdout_bytes > p::MAX_STDOUT {
            return Err(format!("{name} wrote more than 192 MiB to stdout"));
        }
        while !bytes.is_empty() {
            let (chunk, rest, complete) = match bytes.iter().position(|&b| b == b'\n') {
                Some(i) => (&bytes[..i], &bytes[i + 1..], true),
                None => (bytes, &[][..], false),
            };
            bytes = rest;
            if ex.line.len() + chunk.len() > p::MAX_FRAME {
                return Err(format!("{name} sent a frame over 24 MiB"));
            }
            ex.line.extend_from_slice(chunk);
            if !complete {
                break;
            }
            let line = std::mem::take(&mut ex.line);
            ex.frames += 1;
            if ex.frames > p::MAX_FRAMES {
                return Err(format!("{name} sent more than {} frames", p::MAX_FRAMES));
            }
            let frame =
                p::parse(&line).map_err(|e| format!("{name} sent a malformed frame: {e}"))?;
            self.on_frame(ex, frame, to_cmd, exec_tx)?;
        }
        Ok(())
    }

    fn on_frame(
        &self,
        ex: &mut Exchange,
        frame: Incoming,
        to_cmd: &mpsc::UnboundedSender<Value>,
        exec_tx: &mpsc::UnboundedSender<(String, Value)>,
    ) -> Result<(), String> {
        let name = &self.def.name;
        if ex.phase == Phase::Done {
            return Err(match frame {
                Incoming::Result { .. } => format!("{name} sent a second result"),
                _ => format!("{name} sent data after its result"),
            });
        }
        match frame {
            Incoming::Ready { presentation } => {
                if ex.phase != Phase::AwaitReady {
                    return Err(format!("{name} sent a second ready frame"));
                }
                let subject = presentation
                    .as_ref()
                    .and_then(|p| p.get("subject"))
                    .and_then(Value::as_str)
                    .map(|s| {
                        s.lines()
                            .next()
                            .unwrap_or_default()
                            .chars()
                            .take(80)
                            .collect::<String>()
                    })
                    .filter(|s| !s.trim().is_empty());
                self.scope.report(match subject {
                    Some(s) => format!("running {name}… {s}"),
                    None => format!("running {name}…"),
                });
                ex.phase = Phase::Executing;
                let _ = to_cmd.send(p::execute());
            }
            Incoming::Result { ok, text } => {
                if ex.phase == Phase::AwaitReady {
                    return Err(format!("{name} sent a result before execute"));
                }
                if text.len() > p::MAX_RESULT {
                    return Err(format!("{name} sent a result over 1 MiB"));
                }
                ex.phase = Phase::Done;
                ex.result = Some((ok, text));
            }
            Incoming::Exec {
                request_id,
                command,
                options,
            } => {
                if ex.phase == Phase::AwaitReady {
                    return Err(format!("{name} sent an exec request before execute"));
                }
                if !ex.seen_ids.insert(request_id.clone()) {
                    return Err(format!("{name} reused the exec request id {request_id:?}"));
                }
                if ex.pending.len() >= p::MAX_EXEC_PENDING {
                    return Err(format!(
                        "{name} had more than {} exec requests unresolved",
                        p::MAX_EXEC_PENDING
                    ));
                }
                let token = self.call_token.child_token();
                ex.pending.insert(request_id.clone(), token.clone());
                let tx = exec_tx.clone();
                let (deadline, grace) = (self.deadline, self.cfg.grace);
                tokio::spawn(async move {
                    let r = exec(&command, options, deadline, grace, &token).await;
                    let _ = tx.send((request_id.clone(), p::exec_result(&request_id, r)));
                });
            }
            Incoming::ExecCancel { request_id } => {
                if !ex.seen_ids.contains(&request_id) {
                    return Err(format!(
                        "{name} cancelled the exec request {request_id:?}, which it never made"
                    ));
                }
                // A request that already resolved has nothing left to cancel.
                if let Some(t) = ex.pending.get(&request_id) {
                    t.cancel();
                }
            }
        }
        Ok(())
    }
}

/// One `exec` request: `bash -lc <command> bash <args…>` on this machine (the client machine is
/// the execution environment), bounded by its own timeout and the call's deadline.
async fn exec(
    command: &str,
    o: p::ExecOptions,
    call_deadline: Instant,
    grace: Duration,
    cancel: &CancellationToken,
) -> Result<Value, String> {
    let mut cmd = Command::new("bash");
    cmd.arg("-lc").arg(command).arg("bash").args(&o.args);
    cmd.envs(o.env.iter().map(|(k, v)| (k, v)));
    if let Some(cwd) = &o.cwd {
        cmd.current_dir(cwd);
    }
    let mut spec = process::RunSpec::new(
        Duration::ZERO,
        o.max_capture.unwrap_or(p::DEFAULT_EXEC_CAPTURE),
    );
    spec.deadline = match o.timeout_ms {
        Some(ms) => (Instant::now() + Duration::from_millis(ms)).min(call_deadline),
        None => call_deadline,
    };
    spec.grace = grace;
    spec.stdin = o.stdin;
    let ran = process::run(cmd, spec, cancel)
        .await
        .map_err(|e| format!("could not start bash: {e}"))?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Ok(json!({
        "output": text(&ran.combined),
        "stdout": text(&ran.stdout),
        "stderr": text(&ran.stderr),
        "exitCode": ran.exit_code(),
        "closeSignal": ran.signal().map(process::signal_name),
        "truncated": ran.truncated,
        "timedOut": ran.timed_out,
        "aborted": ran.aborted,
    }))
}

fn exit_words(s: &std::process::ExitStatus) -> String {
    match s.code() {
        Some(c) => format!("exited with status {c}"),
        None => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                if let Some(sig) = s.signal() {
                    return format!("was killed by {}", process::signal_name(sig));
                }
            }
            "was killed".into()
        }
    }
}

/// Add the last line the command wrote to stderr, where it says why.
fn with_stderr(mut msg: String, stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    if let Some(l) = text.lines().map(str::trim).rfind(|l| !l.is_empty()) {
        msg.push_str(": ");
        msg.extend(l.chars().take(300));
    }
    msg
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);
impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
