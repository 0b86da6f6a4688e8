//! Finding the ego-browser CLI: `~/.local/bin/ego-browser` first, then `PATH`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The CLI's file name.
pub const CLI_NAME: &str = "ego-browser";

/// The CLI to run, or `None` when it is in neither place.
///
/// A file at `~/.local/bin/ego-browser` is taken as it is (if it cannot run, the call says the CLI
/// failed to start); on `PATH` only an executable file counts, as a shell would look it up.
pub fn find_cli(home: Option<&Path>, path_var: Option<&OsStr>) -> Option<PathBuf> {
    if let Some(home) = home {
        let local = home.join(".local").join("bin").join(CLI_NAME);
        if local.is_file() {
            return Some(local);
        }
    }
    let path_var = path_var?;
    std::env::split_paths(path_var)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(CLI_NAME))
        .find(|p| is_executable_file(p))
}

#[cfg(unix)]
fn is_executable_file(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable_file(p: &Path) -> bool {
    p.is_file()
}
