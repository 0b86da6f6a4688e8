//! The error type that crosses the core's boundary: a stable machine `code` plus a plain-words
//! `message`. The shell serializes it as `{code, message}` over IPC; the CLI prints it on stderr.
//! Errors that reach the *model* are not this type: they are the contract's result strings.

use serde::Serialize;

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

/// `{code, message}`: what the UI and the CLI see.
#[derive(Debug, Clone, Serialize, thiserror::Error)]
#[error("{message}")]
pub struct CoreError {
    pub code: ErrorCode,
    pub message: String,
}

impl CoreError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
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
                );
            }
        }
        CoreError::new(ErrorCode::Store, format!("database error: {e}"))
    }
}

impl From<serde_json::Error> for CoreError {
    fn from(e: serde_json::Error) -> Self {
        CoreError::invalid(format!("invalid JSON: {e}"))
    }
}

pub type Result<T, E = CoreError> = std::result::Result<T, E>;
