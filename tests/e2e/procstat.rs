//! The running app as processes, for the measuring programs (`crates/yui-x11/benches/app_drag.rs`,
//! `benches/footprint.rs`) and the memory soak (`soak.rs`): no time-of-day rules at any launch,
//! launching the app through WebDriver and finding its process, the process tree under it
//! (yui-app, its WebKit web and network processes), CPU ticks from `/proc/<pid>/stat`, and PSS /
//! RSS from `/proc/<pid>/smaps_rollup`. Linux only; a process that exits between two reads is
//! simply not in the next one.

use super::webdriver::{Driver, Session};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use yui_core::{settings, Store};

/// The running app (`exe`) started on `data_dir` (its command line names the dir).
pub fn app_pid(exe: &Path, data_dir: &Path) -> Option<u32> {
    let exe = exe.canonicalize().ok()?;
    let want = data_dir.display().to_string();
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let running = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let cmd = String::from_utf8_lossy(&cmd);
        (running == exe && cmd.split('\0').any(|a| a == want)).then_some(pid)
    })
}

/// No time-of-day rules unless the caller set them, for every launch of the app by a test, a
/// bench or the soak: the main character would speak first in the morning or at night (the
/// user is "there": the display's input idle time starts at 0) and take the fake backend's
/// first answer, or quiet hours would hold every proactive turn. main.rs's `calm_defaults`,
/// browser.rs and [`launch`] here call it. (A store that does not open is a test's damaged
/// file: left as it is.)
pub fn no_time_of_day(data_dir: &Path) {
    let Ok(store) = Store::open(data_dir.join(yui_core::paths::DB_FILE)) else {
        return;
    };
    for key in [
        yui_core::manners::MORNING_KEY,
        yui_core::manners::NIGHT_KEY,
        yui_core::manners::QUIET_HOURS_KEY,
    ] {
        if unset(&store, key) {
            settings::set(&store, key, &json!(null)).unwrap();
        }
    }
}

/// Whether `key` was never stored (a test that set it keeps its value).
pub fn unset(store: &Store, key: &str) -> bool {
    yui_core::store::kv::get(store, key)
        .ok()
        .flatten()
        .is_none()
}

/// Start `app` on `data_dir` through tauri-driver, wait for the main window with its character
/// drawn, and find the app's process. Returns the session (on the main window) and the pid.
pub async fn launch(app: &Path, data_dir: &Path) -> (Session, u32) {
    no_time_of_day(data_dir);
    let s = Driver::from_env()
        .new_session(app, &["--data-dir".into(), data_dir.display().to_string()])
        .await
        .expect("a WebDriver session (is tauri-driver running?)");
    s.wait_for_labels(&["main"], Duration::from_secs(60))
        .await
        .expect("the main window");
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return !!document.querySelector('#character [data-emotion]')",
        Duration::from_secs(30),
    )
    .await
    .expect("the character drawn");
    let pid = app_pid(app, data_dir).expect("the app process");
    (s, pid)
}

/// `pid` and all its descendants (through every thread's `children`), parents first.
pub fn tree(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    descendants(pid, &mut out);
    out
}

fn descendants(pid: u32, out: &mut Vec<u32>) {
    out.push(pid);
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return;
    };
    for t in tasks.flatten() {
        let children = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
        for c in children.split_whitespace().filter_map(|c| c.parse().ok()) {
            descendants(c, out);
        }
    }
}

/// A process's name: its executable's file name (comm is cut to 15 bytes), else comm.
pub fn name(pid: u32) -> Option<String> {
    if let Some(n) = std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
    {
        return Some(n);
    }
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(comm.trim().to_string())
}

/// utime + stime of a process, in clock ticks.
pub fn ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // comm is in parentheses and may hold spaces: the fields after the last ')' are fixed.
    let (_, rest) = stat.rsplit_once(')')?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After ')': state is field 3, so utime (14) and stime (15) are at 11 and 12.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// Memory of one process, KiB (`/proc/<pid>/smaps_rollup`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mem {
    pub pss: u64,
    pub rss: u64,
    /// The parts of PSS: anonymous, file-backed, shared memory.
    pub pss_anon: u64,
    pub pss_file: u64,
    pub pss_shmem: u64,
}

impl Mem {
    /// PSS that only the app's own processes can hold: anonymous and shared memory (the web
    /// process and the app share buffers). File-backed pages (libraries, fonts) are also mapped
    /// by other programs — another WebKit app starting elsewhere on the machine lowers this
    /// app's file PSS — so a leak is read here.
    pub fn own(&self) -> u64 {
        self.pss_anon + self.pss_shmem
    }
}

/// PSS and RSS of a process from `/proc/<pid>/smaps_rollup`.
pub fn mem(pid: u32) -> Option<Mem> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
    };
    Some(Mem {
        pss: field("Pss:")?,
        rss: field("Rss:")?,
        pss_anon: field("Pss_Anon:").unwrap_or(0),
        pss_file: field("Pss_File:").unwrap_or(0),
        pss_shmem: field("Pss_Shmem:").unwrap_or(0),
    })
}

/// Ticks per process: `pid → (name, ticks)`.
pub type Ticks = BTreeMap<u32, (String, u64)>;

/// Ticks of every process in the app's tree (the app itself named `yui-app`, whatever its binary
/// is called: a copy of an older build), and of the context processes, named `(<name>)`.
pub fn sample(app: u32, context: &[(String, u32)]) -> Ticks {
    let mut out: Ticks = tree(app)
        .into_iter()
        .filter_map(|p| Some((p, (name(p)?, ticks(p)?))))
        .collect();
    if let Some(e) = out.get_mut(&app) {
        e.0 = "yui-app".into();
    }
    for (name, pid) in context {
        if let Some(t) = ticks(*pid) {
            out.insert(*pid, (format!("({name})"), t));
        }
    }
    out
}

/// Per process name: % of one core between two samples over `span`.
pub fn usage(before: &Ticks, after: &Ticks, span: Duration, hz: f64) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for (pid, (comm, t1)) in after {
        let t0 = before.get(pid).map_or(0, |(_, t)| *t);
        *out.entry(comm.clone()).or_insert(0.0) +=
            t1.saturating_sub(t0) as f64 / hz / span.as_secs_f64() * 100.0;
    }
    out
}

/// Per process of the app's tree: `pid → (name, memory)`, the app named `yui-app`.
pub fn memory(app: u32) -> BTreeMap<u32, (String, Mem)> {
    let mut out: BTreeMap<u32, (String, Mem)> = tree(app)
        .into_iter()
        .filter_map(|p| Some((p, (name(p)?, mem(p)?))))
        .collect();
    if let Some(e) = out.get_mut(&app) {
        e.0 = "yui-app".into();
    }
    out
}

/// The kernel's clock ticks per second (`getconf CLK_TCK`, else 100).
pub fn clock_ticks() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// `VAR` as whole seconds, else `default`.
pub fn secs(var: &str, default: u64) -> Duration {
    Duration::from_secs(
        std::env::var(var)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default),
    )
}
