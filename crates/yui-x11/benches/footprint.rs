//! The memory soak of the whole app (issue 14, "Memory flat"; docs/PERFORMANCE.md, "Memory
//! soak"): the release app with main + 2 pets, PSS / RSS of every process and idle CPU at start,
//! after an hour idle and after 500 scripted turns, the growth per phase against 5 MiB, and the
//! third character's cost against 40 MiB. A script that prints figures, run by
//! `scripts/footprint.sh` (which starts the display, the window manager, the compositor and
//! tauri-driver and builds the app). It lives beside `app_drag.rs` for the same reason: it
//! builds in release without the app's test-only dependencies. The soak itself is
//! `tests/e2e/soak.rs`, shared with the short e2e test CI runs (`tests/e2e/memory.rs`).
//!
//! Env: `YUI_APP_BIN` (the app), `TAURI_DRIVER_URL`, `DISPLAY`; `YUI_SOAK_IDLE_SECS` (3600),
//! `YUI_SOAK_TURNS` (500), `YUI_SOAK_WINDOW_SECS` (CPU window per checkpoint, 60),
//! `YUI_SOAK_SETTLE_SECS` (after launch, 30), `YUI_SOAK_EXTRA` (`0`: no second launch for the
//! third character's cost), `YUI_SOAK_CONTEXT` (`name=pid ...`: other processes to show CPU of).
//! Exits 1 when a check fails.

#[allow(dead_code)]
#[path = "../../../tests/e2e/fake_backend.rs"]
mod fake_backend;
#[allow(dead_code)]
#[path = "../../../tests/e2e/procstat.rs"]
mod procstat;
#[allow(dead_code)]
#[path = "../../../tests/e2e/soak.rs"]
mod soak;
#[allow(dead_code)]
#[path = "../../../tests/e2e/webdriver.rs"]
mod webdriver;
#[allow(dead_code)]
#[path = "../../../tests/e2e/xinput.rs"]
mod xinput;

use procstat::secs;
use std::path::{Path, PathBuf};
use std::time::Duration;
use yui_core::Store;

/// Used by `fake_backend` and `soak`: seed the store before the app starts.
fn seed(dir: &Path, f: impl FnOnce(&Store)) {
    let store = Store::open(dir.join(yui_core::paths::DB_FILE)).expect("open store");
    f(&store);
}

#[tokio::main]
async fn main() {
    let app = std::env::var_os("YUI_APP_BIN")
        .map(PathBuf::from)
        .expect("YUI_APP_BIN: the app to measure (scripts/footprint.sh sets it)");
    let turns = std::env::var("YUI_SOAK_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let plan = soak::Plan {
        app: app.clone(),
        settle: secs("YUI_SOAK_SETTLE_SECS", 30),
        window: secs("YUI_SOAK_WINDOW_SECS", 60),
        idle: secs("YUI_SOAK_IDLE_SECS", 3600),
        turns,
        after_turns: Duration::from_secs(15),
        sample_every: 10,
        extra_character: std::env::var("YUI_SOAK_EXTRA").map_or(true, |v| v != "0"),
        context: std::env::var("YUI_SOAK_CONTEXT")
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                Some((k.to_string(), v.parse().ok()?))
            })
            .collect(),
        leak_kib: soak::Plan::leak_from_env(),
    };
    println!(
        "footprint: {} — idle {} s, {} turns, CPU windows of {} s",
        app.display(),
        plan.idle.as_secs(),
        plan.turns,
        plan.window.as_secs()
    );
    let report = soak::run(&plan).await;
    if !soak::print_summary(&report, 5.0, 5.0, 40.0) {
        std::process::exit(1);
    }
}
