//! Logging: `tracing` to stderr and to a daily rolling file `yui.log.YYYY-MM-DD` in the log dir.
//! The level comes from `YUI_LOG` (an `EnvFilter` string such as `debug` or
//! `yui_core=debug,info`), default `info`. Secrets are never logged (see `yui_core::backend`):
//! and as a second line of defence, every secret the process has read ([`redact_secret`]: the
//! API key, once read or stored) is replaced by `<redacted>` in every line either writer gets, so
//! a key a server quotes back in an error body, or a dependency's trace line, never reaches a log.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter, Layer};

pub const LOG_ENV: &str = "YUI_LOG";
/// File name prefix; the appender adds `.YYYY-MM-DD`.
pub const LOG_FILE_PREFIX: &str = "yui.log";
/// Daily files kept.
const MAX_LOG_FILES: usize = 14;

/// Keep it alive for the life of the program: dropping it flushes the file writer.
#[must_use = "logs to the file stop when the guard is dropped"]
pub struct LogGuard {
    _file: Option<WorkerGuard>,
    /// The log dir in use, or `None` when it could not be created (stderr only).
    pub log_dir: Option<PathBuf>,
}

fn filter() -> EnvFilter {
    EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("info"))
}

/// Install the global subscriber. A log dir that cannot be created degrades to stderr only (and
/// says so) rather than stopping the program. Calling it twice is harmless: the second call
/// installs nothing.
pub fn init(log_dir: &Path, also_stderr: bool) -> LogGuard {
    let appender = std::fs::create_dir_all(log_dir)
        .map_err(|e| e.to_string())
        .and_then(|_| {
            tracing_appender::rolling::Builder::new()
                .rotation(tracing_appender::rolling::Rotation::DAILY)
                .filename_prefix(LOG_FILE_PREFIX)
                .max_log_files(MAX_LOG_FILES)
                .build(log_dir)
                .map_err(|e| e.to_string())
        });
    let (file_layer, guard, dir, problem) = match appender {
        Ok(appender) => {
            let (writer, guard) = tracing_appender::non_blocking(appender);
            let layer = fmt::layer()
                .with_ansi(false)
                .with_writer(Redacting(writer))
                .with_filter(filter());
            (Some(layer), Some(guard), Some(log_dir.to_path_buf()), None)
        }
        Err(e) => (None, None, None, Some(e)),
    };
    let stderr_layer = also_stderr.then(|| {
        fmt::layer()
            // Colours only on a terminal: piped stderr (CI logs, tests) stays plain text.
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(Redacting(std::io::stderr))
            .with_filter(filter())
    });
    let installed = tracing_subscriber::registry()
        .with(file_layer)
        .with(stderr_layer)
        .try_init()
        .is_ok();
    if let Some(e) = problem {
        tracing::warn!(dir = %log_dir.display(), error = %e, "cannot write logs there; logging to stderr only");
    } else if installed {
        tracing::debug!(dir = %log_dir.display(), "logging to file");
    }
    LogGuard {
        _file: guard,
        log_dir: dir,
    }
}

/// Secrets to keep out of every log line. A handful at most (the API key of this data dir, a
/// `YUI_API_KEY` override).
static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());
/// Shorter strings are not redacted (they would blank ordinary words); no real key is this short.
const SECRET_MIN_LEN: usize = 8;
pub const REDACTED: &str = "<redacted>";

/// From now on, write `secret` as `<redacted>` in every log line of this process.
pub fn redact_secret(secret: &str) {
    let secret = secret.trim();
    if secret.len() < SECRET_MIN_LEN {
        return;
    }
    let mut all = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    if !all.iter().any(|s| s == secret) {
        all.push(secret.to_string());
    }
}

/// `text` with every registered secret replaced by `<redacted>`.
pub fn redacted(text: &str) -> std::borrow::Cow<'_, str> {
    let all = SECRETS.read().unwrap_or_else(|e| e.into_inner());
    if !all.iter().any(|s| text.contains(s.as_str())) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for s in all.iter() {
        out = out.replace(s.as_str(), REDACTED);
    }
    std::borrow::Cow::Owned(out)
}

/// A writer factory whose writers redact the registered secrets. The fmt layer writes each event
/// with one `write_all` of the whole formatted line, so a secret never straddles two writes.
struct Redacting<M>(M);

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for Redacting<M> {
    type Writer = RedactingWriter<M::Writer>;
    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter(self.0.make_writer())
    }
}

struct RedactingWriter<W>(W);

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => match redacted(text) {
                std::borrow::Cow::Borrowed(_) => self.0.write(buf),
                std::borrow::Cow::Owned(clean) => {
                    self.0.write_all(clean.as_bytes())?;
                    Ok(buf.len())
                }
            },
            Err(_) => self.0.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}
