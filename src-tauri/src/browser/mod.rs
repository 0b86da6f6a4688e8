//! The browser tool in the shell: only the start-up cleanup of leftover screenshot folders.
//!
//! The tool itself runs inside turns (yui-core `tools::browser`, behind the `yui.browser`
//! switch). No window may invoke it directly: a webview that shows model text must never be able
//! to run JavaScript in the user's signed-in browser, so there is no `browser_run` or
//! `browser_guide` command (`yui tool browser` runs it from a terminal).

use yui_core::tools::browser;

/// At app start: delete every leftover `yui-browser-*` screenshot folder in the temp directory
/// (a script killed at the backstop can recreate one late). A failure is logged, never fatal.
pub fn cleanup_at_start() {
    match browser::cleanup_at_start() {
        Ok(0) => {}
        Ok(n) => tracing::info!(folders = n, "removed leftover browser screenshot folders"),
        Err(e) => tracing::warn!(error = %e, "removing leftover browser screenshot folders failed"),
    }
}
