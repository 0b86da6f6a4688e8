//! Errors crossing IPC: always the core's `CoreError`, serialized as `{code, message}`. Shell
//! failures (window creation) are mapped into it where they happen ([`crate::windows::tauri_err`]).

pub use yui_core::CoreError;

/// What every command returns.
pub type CmdResult<T> = Result<T, CoreError>;
