//! Errors crossing IPC: always the core's `CoreError`, serialized as `{code, message}`. Shell
//! failures (window creation) are mapped into it where they happen ([`tauri_err`]).

pub use yui_core::CoreError;

/// What every command returns.
pub type CmdResult<T> = Result<T, CoreError>;

/// A window error as the core's error.
pub fn tauri_err(e: tauri::Error) -> CoreError {
    CoreError::internal(format!("window error: {e}"))
}
