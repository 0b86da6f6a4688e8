//! Logging: `tracing` to stderr and to a daily rolling file `yui.log.YYYY-MM-DD` in the log dir.
//! The level comes from `YUI_LOG` (an `EnvFilter` string such as `debug` or
//! `yui_core=debug,info`), default `info`. Secrets are never logged (see [`crate::backend`]).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use tracing_appender::non_blocking::WorkerGuard;
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
                .with_writer(writer)
                .with_filter(filter());
            (Some(layer), Some(guard), Some(log_dir.to_path_buf()), None)
        }
        Err(e) => (None, None, None, Some(e)),
    };
    let stderr_layer = also_stderr.then(|| {
        fmt::layer()
            // Colours only on a terminal: piped stderr (CI logs, tests) stays plain text.
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(std::io::stderr)
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
