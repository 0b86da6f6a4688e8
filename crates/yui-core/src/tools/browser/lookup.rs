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
    crate::paths::find_program(CLI_NAME, path_var)
}
