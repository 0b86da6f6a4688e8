//! How WebKitGTK runs YUI's windows: three switches set in the environment before WebKit starts.
//!
//! - **Skia paints on the CPU** (`WEBKIT_SKIA_ENABLE_CPU_RENDERING=1`). Compositing stays on, but
//!   the tiles of the small character pages are painted by Skia's raster backend instead of its
//!   GL backend. Where GL is software (llvmpipe: no GPU, a VM, a remote desktop) a repaint of the
//!   character cost ~13–16 ms of CPU on GL against ~8.5 ms on the CPU, about what any frame
//!   costs; and the web process holds ~50 MiB less (Skia's GL resource caches) and grows about
//!   half as much over turns (docs/PERFORMANCE.md, "Idle CPU" and "Memory soak"). A few hundred
//!   by three hundred pixels of vector art is cheap to raster on any CPU.
//! - **No memory pressure monitor** (`WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR=1`): it reads
//!   `/proc/meminfo` and the cgroup files byte by byte every 5 s in the app, and makes the web
//!   process read its whole `/proc/self/smaps` every 30 s, which was nearly all an asleep or
//!   hidden app did (0.12 % of a core against 0.03 % without). Its job, telling pages to drop
//!   caches under system memory pressure, matters little for a few small pages whose memory
//!   YUI's own soak watches (`scripts/footprint.sh`). (With it off WebKit installs no
//!   low-memory handler in the web process at all, so it never drops those caches.)
//! - **JavaScript without the JIT** (`JSC_useJIT=false`, `JSC_useCodeCache=false`). The pages
//!   run little script: a cue is a few function calls, and the interpreter adds under 1 ms to
//!   one (cue → painted p50 27.4 ms either way, `tests/e2e/cue_latency.rs`). The JIT's compiled
//!   code and the cache of evaluated scripts (every event Tauri delivers is a script of its own,
//!   never run twice) made the web process grow ~11 MiB more over 300 turns (26.5 against
//!   14.6 MiB, docs/PERFORMANCE.md, "Memory soak").
//!
//! Compositing itself stays on. Painting without it (`WEBKIT_DISABLE_COMPOSITING_MODE=1`) costs
//! a third of the CPU, but WebKit 2.50 then paints a transparent page over the old pixels
//! without clearing them: a character that moves leaves ghost outlines behind.
//!
//! `YUI_WEBKIT_GPU_PAINTING=1` keeps Skia's GL painting, `YUI_WEBKIT_MEMORY_MONITOR=1` the
//! monitor and `YUI_WEBKIT_JIT=1` the JIT; a variable of a switch the user set (`WEBKIT_*`,
//! `JSC_*`) leaves that switch as it is. What YUI sets here is for its own
//! web views: the process runner keeps it from the programs YUI starts (`yui_core::process`).

/// What [`choose_rendering`] changed.
#[derive(Debug, Clone, Copy)]
pub struct Choice {
    pub cpu_painting: bool,
    pub memory_monitor_off: bool,
    pub jit_off: bool,
}

/// A switch: the variables it sets (name, value) and the `YUI_*` variable that keeps WebKit's
/// default when it is `1`.
struct Switch {
    vars: &'static [(&'static str, &'static str)],
    keep: &'static str,
}

const CPU_PAINTING: Switch = Switch {
    vars: &[("WEBKIT_SKIA_ENABLE_CPU_RENDERING", "1")],
    keep: "YUI_WEBKIT_GPU_PAINTING",
};
const MEMORY: Switch = Switch {
    vars: &[("WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR", "1")],
    keep: "YUI_WEBKIT_MEMORY_MONITOR",
};
const JIT: Switch = Switch {
    vars: &[("JSC_useJIT", "false"), ("JSC_useCodeCache", "false")],
    keep: "YUI_WEBKIT_JIT",
};

/// Choose before any thread starts (the environment is read by WebKit and its child processes).
/// What YUI sets is kept from the processes YUI starts (the browser, voice, command tools), and
/// so are `also` (variables set before, for this process only: `crate::display`'s).
pub fn choose_rendering(also: Vec<String>) -> Choice {
    let env = |k: &str| std::env::var_os(k);
    let plan = plan(&env);
    for (var, value) in plan.vars() {
        std::env::set_var(var, value);
    }
    let own = plan.vars().into_iter().map(|(v, _)| v.to_string());
    yui_core::process::keep_env_to_self(own.chain(also).collect());
    plan
}

impl Choice {
    /// The variables this choice sets, with their values.
    pub fn vars(&self) -> Vec<(&'static str, &'static str)> {
        [
            (self.cpu_painting, &CPU_PAINTING),
            (self.memory_monitor_off, &MEMORY),
            (self.jit_off, &JIT),
        ]
        .into_iter()
        .filter(|(on, _)| *on)
        .flat_map(|(_, switch)| switch.vars.iter().copied())
        .collect()
    }
}

/// What to set, given the environment: each switch unless the user set one of its variables or
/// its `keep`.
fn plan(env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Choice {
    let one = std::ffi::OsStr::new("1");
    let wanted = |switch: &Switch| {
        switch.vars.iter().all(|(var, _)| env(var).is_none())
            && env(switch.keep).as_deref() != Some(one)
    };
    Choice {
        cpu_painting: wanted(&CPU_PAINTING),
        memory_monitor_off: wanted(&MEMORY),
        jit_off: wanted(&JIT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn plan_for(vars: &[(&str, &str)]) -> Choice {
        let vars: Vec<(String, OsString)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        plan(&move |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    #[test]
    fn sets_every_switch_on_a_bare_environment() {
        let c = plan_for(&[]);
        assert_eq!(
            c.vars(),
            vec![
                ("WEBKIT_SKIA_ENABLE_CPU_RENDERING", "1"),
                ("WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR", "1"),
                ("JSC_useJIT", "false"),
                ("JSC_useCodeCache", "false"),
            ]
        );
    }

    #[test]
    fn keeps_what_the_user_set_or_asked_to_keep() {
        // The user's own WEBKIT_* value wins, even "0".
        let c = plan_for(&[("WEBKIT_SKIA_ENABLE_CPU_RENDERING", "0")]);
        assert!(!c.cpu_painting && c.memory_monitor_off && c.jit_off);
        let c = plan_for(&[
            ("YUI_WEBKIT_GPU_PAINTING", "1"),
            ("YUI_WEBKIT_MEMORY_MONITOR", "1"),
            ("YUI_WEBKIT_JIT", "1"),
        ]);
        assert_eq!(c.vars(), Vec::<(&str, &str)>::new());
        // One of a switch's variables set by the user leaves the switch alone.
        let c = plan_for(&[("JSC_useCodeCache", "true")]);
        assert!(!c.jit_off && c.cpu_painting && c.memory_monitor_off);
        // Only "1" keeps WebKit's default.
        let c = plan_for(&[("YUI_WEBKIT_GPU_PAINTING", "0")]);
        assert!(c.cpu_painting);
    }
}
