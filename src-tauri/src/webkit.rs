//! How WebKitGTK runs YUI's windows. YUI turns off WebKit's memory pressure monitor
//! (`WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR=1`): it reads `/proc/meminfo` and the cgroup files
//! byte by byte every 5 s in the app, and makes the web process read its whole
//! `/proc/self/smaps` every 30 s, which was nearly all an asleep or hidden app did (0.12 % of a
//! core against 0.03 % without, docs/PERFORMANCE.md "Idle CPU"). Its job, telling pages to drop
//! caches under system memory pressure, matters little for a few small pages whose memory YUI's
//! own soak watches (`scripts/footprint.sh`).
//!
//! Compositing stays on. Painting without it (`WEBKIT_DISABLE_COMPOSITING_MODE=1`) costs a
//! third of the CPU here, but a transparent window then keeps what was painted before: a
//! character that moves leaves ghost outlines behind (seen on screen after a spin and a wave).
//!
//! `YUI_WEBKIT_MEMORY_MONITOR=1` keeps WebKit's monitor; a `WEBKIT_*` variable the user set is
//! left as it is. What YUI sets here is for its own web views: the process runner keeps it from
//! the programs YUI starts (`yui_core::process`).

/// What [`choose_rendering`] changed.
#[derive(Debug, Clone, Copy)]
pub struct Choice {
    pub memory_monitor_off: bool,
}

/// Choose before any thread starts (the environment is read by WebKit and its child processes).
/// What YUI sets is kept from the processes YUI starts (the browser, voice, command tools).
pub fn choose_rendering() -> Choice {
    const MEMORY: &str = "WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR";
    let choice = Choice {
        memory_monitor_off: set_unless(MEMORY, "YUI_WEBKIT_MEMORY_MONITOR"),
    };
    let mine = if choice.memory_monitor_off {
        vec![MEMORY.to_string()]
    } else {
        Vec::new()
    };
    yui_core::process::keep_env_to_self(mine);
    choice
}

/// Set `var=1` unless the user set it, or set `keep=1` to keep WebKit's default.
fn set_unless(var: &str, keep: &str) -> bool {
    if std::env::var_os(keep).is_some_and(|v| v == "1") || std::env::var_os(var).is_some() {
        return false;
    }
    std::env::set_var(var, "1");
    true
}
