//! The process's audio host: the one installed (tests, other platforms), else the cpal host,
//! created on first use (creating it opens nothing). Apart from `audio.rs` so the trait does not
//! import its implementation.

use super::audio::AudioHost;
use std::sync::{Arc, OnceLock};

static INSTALLED: OnceLock<Arc<dyn AudioHost>> = OnceLock::new();

/// Use `host` for the rest of the process (tests and other platforms); the first call wins.
pub fn install(host: Arc<dyn AudioHost>) -> bool {
    INSTALLED.set(host).is_ok()
}

/// The process's audio host: the installed one, else the cpal host (created now, on first use:
/// creating it opens nothing).
pub fn host() -> Arc<dyn AudioHost> {
    INSTALLED
        .get_or_init(|| Arc::new(super::cpal_host::CpalHost::new()))
        .clone()
}
