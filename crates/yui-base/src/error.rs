//! The error type that crosses the core's boundary: a stable machine `code` plus a plain-words
//! `message`. The shell serializes it as `{code, message}` over IPC; the CLI prints it on stderr.
//! Errors that reach the *model* are not this type: they are the contract's result strings.
//!
//! A `CoreError` may keep the error it came from ([`CoreError::with_source`]; the conversions
//! below do): `std::error::Error::source` gives it to the log, while the UI and the CLI still
//! see only `{code, message}`.

use serde::Serialize;
use std::error::Error as StdError;
use std::sync::Arc;

/// Stable error codes. Serialized in snake_case; the UI may branch on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The database file is not a YUI database or is damaged.
    StoreCorrupt,
    /// The database was written by a newer YUI.
    StoreTooNew,
    /// Any other SQLite / file-system failure.
    Store,
    /// A key, id or argument the caller gave is not valid.
    InvalidInput,
    /// The thing asked for does not exist.
    NotFound,
    /// The model backend could not be reached or answered with an error.
    Backend,
    /// The OS keyring failed.
    Keyring,
    /// Anything else.
    Internal,
}

/// `{code, message}`: what the UI and the CLI see; the cause stays behind for the log.
#[derive(Debug, Clone, Serialize, thiserror::Error)]
#[error("{message}")]
pub struct CoreError {
    pub code: ErrorCode,
    pub message: String,
    /// What went wrong underneath (an I/O or SQLite error, …), for the log: never serialized.
    #[serde(skip)]
    #[source]
    source: Option<Arc<dyn StdError + Send + Sync + 'static>>,
}

impl CoreError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            source: None,
        }
    }
    /// The same error, keeping `cause` as its source.
    pub fn with_source(mut self, cause: impl StdError + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(cause));
        self
    }
    /// The message and every cause under it, one after another: what the log writes.
    pub fn chain(&self) -> String {
        let mut out = self.message.clone();
        let mut next = self.source();
        while let Some(e) = next {
            out.push_str(": ");
            out.push_str(&e.to_string());
            next = e.source();
        }
        out
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }
}

impl From<rusqlite::Error> for CoreError {
    fn from(e: rusqlite::Error) -> Self {
        if let rusqlite::Error::SqliteFailure(f, _) = &e {
            if matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase
            ) {
                return CoreError::new(
                    ErrorCode::StoreCorrupt,
                    format!("the database file is damaged or not a YUI database: {e}"),
                )
                .with_source(e);
            }
        }
        CoreError::new(ErrorCode::Store, format!("database error: {e}")).with_source(e)
    }
}

impl From<serde_json::Error> for CoreError {
    fn from(e: serde_json::Error) -> Self {
        CoreError::invalid(format!("invalid JSON: {e}")).with_source(e)
    }
}

pub type Result<T, E = CoreError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_is_kept_for_the_log_and_never_crosses_ipc() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let e = CoreError::new(ErrorCode::Store, "cannot write the settings").with_source(io);
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"code": "store", "message": "cannot write the settings"})
        );
        assert_eq!(e.source().unwrap().to_string(), "denied");
        assert_eq!(e.chain(), "cannot write the settings: denied");
        let plain = CoreError::invalid("bad");
        assert!(plain.source().is_none());
        assert_eq!(plain.chain(), "bad");
    }

    #[test]
    fn conversions_keep_their_cause() {
        let json = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        let e = CoreError::from(json);
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(e.source().is_some());
    }
}
