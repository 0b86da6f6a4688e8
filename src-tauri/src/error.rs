//! Errors crossing IPC: always the core's `CoreError`, serialized as `{code, message}`. Shell
//! failures (window creation, events) are mapped into it here.

pub use yui_core::CoreError;

/// What every command returns.
pub type CmdResult<T> = Result<T, CoreError>;
