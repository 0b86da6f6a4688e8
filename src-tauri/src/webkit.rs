//! How WebKitGTK draws YUI's windows. By default YUI asks it to paint without accelerated
//! compositing (`WEBKIT_DISABLE_COMPOSITING_MODE=1`): a character is a few hundred pixels that
//! change a few times a minute, and compositing them through GL costs more than it saves. With
//! compositing, every frame goes through Skia's GPU painting and the threaded compositor, which
//! on a machine without a GPU driver (llvmpipe) is most of the app's idle CPU: 4.8 % of a core
//! against 1.4 % without, main + 2 pets idle, and ~75 MiB less memory (docs/PERFORMANCE.md,
//! "Idle CPU"). Transparency is the same either way (the window's RGBA visual).
//!
//! It also turns off WebKit's memory pressure monitor (`WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR=1`):
//! it reads `/proc/meminfo` and the cgroup files every 5 s in the app, and makes the web process
//! read its whole `/proc/self/smaps` every 30 s, which is nearly all an asleep or hidden app
//! does (0.12 % of a core against 0.03 % without). Its job, telling pages to drop caches under
//! system memory pressure, matters little for a few small pages whose memory is watched by
//! YUI's own soak (`scripts/footprint.sh`).
//!
//! `YUI_WEBKIT_COMPOSITING=1` and `YUI_WEBKIT_MEMORY_MONITOR=1` keep WebKit's own choice; a
//! `WEBKIT_*` variable the user set is left as it is. What YUI sets here is for its own web
//! views: the process runner keeps it from the programs YUI starts (`yui_core::process`).

/// What [`choose_rendering`] changed.
#[derive(Debug, Clone, Copy)]
pub struct Choice {
    pub compositing_off: bool,
    pub memory_monitor_off: bool,
}

/// Choose before any thread starts (the environment is read by WebKit and its child processes).
/// What YUI sets is kept from the processes YUI starts (the browser, voice, command tools).
pub fn choose_rendering() -> Choice {
    const COMPOSITING: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
    const MEMORY: &str = "WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR";
    let choice = Choice {
        compositing_off: set_unless(COMPOSITING, "YUI_WEBKIT_COMPOSITING"),
        memory_monitor_off: set_unless(MEMORY, "YUI_WEBKIT_MEMORY_MONITOR"),
    };
    let mine = [
        (choice.compositing_off, COMPOSITING),
        (choice.memory_monitor_off, MEMORY),
    ];
    yui_core::process::keep_env_to_self(
        mine.iter()
            .filter(|(set, _)| *set)
            .map(|(_, v)| v.to_string())
            .collect(),
    );
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
