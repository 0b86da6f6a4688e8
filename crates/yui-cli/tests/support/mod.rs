//! Running the real `yui` binary in the CLI tests: an isolated command line and the check of a
//! successful JSON answer.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// `yui --data-dir <dir>`, isolated from the machine it runs on: never a real keyring, never an
/// inherited data dir or log filter, never the user's command client tools (an empty config dir
/// inside `dir` unless a test sets `YUI_CONFIG_DIR` itself).
pub fn yui_command(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_yui"));
    cmd.arg("--data-dir")
        .arg(dir)
        .env("YUI_KEYRING", "off")
        .env_remove("YUI_DATA_DIR")
        .env_remove("YUI_LOG")
        .env("YUI_CONFIG_DIR", dir.join("config"));
    cmd
}

/// Expect `out` (of `yui <args>`) to have succeeded and parse its stdout as JSON.
#[allow(dead_code)] // `turn_cli` reads JSON lines instead.
pub fn json_ok(args: &[&str], out: &Output) -> Value {
    assert!(
        out.status.success(),
        "yui {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "yui {args:?}: stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}
