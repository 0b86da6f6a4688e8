//! How WebKitGTK draws YUI's windows. By default YUI asks it to paint without accelerated
//! compositing (`WEBKIT_DISABLE_COMPOSITING_MODE=1`): a character is a few hundred pixels that
//! change a few times a minute, and compositing them through GL costs more than it saves. With
//! compositing, every frame goes through Skia's GPU painting and the threaded compositor, which
//! on a machine without a GPU driver (llvmpipe) is most of the app's idle CPU: 4.8 % of a core
//! against 1.4 % without, main + 2 pets idle, and ~75 MiB less memory (docs/PERFORMANCE.md,
//! "Idle CPU"). Transparency is the same either way (the window's RGBA visual).
//!
//! `YUI_WEBKIT_COMPOSITING=1` keeps WebKit's own choice; a `WEBKIT_DISABLE_COMPOSITING_MODE` the
//! user set is left as it is.

/// Choose before any thread starts (the environment is read by WebKit and its child processes).
/// Returns whether compositing was turned off here.
pub fn choose_rendering() -> bool {
    let keep = std::env::var_os("YUI_WEBKIT_COMPOSITING").is_some_and(|v| v == "1");
    if keep || std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_some() {
        return false;
    }
    std::env::set_var("WEBKIT_DISABLE_COMPOSITING_MODE", "1");
    true
}
