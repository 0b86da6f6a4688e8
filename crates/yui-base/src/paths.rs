//! Where YUI keeps its files: the OS data and log dirs from `directories`, overridable with
//! `--data-dir` / `YUI_DATA_DIR` (the override holds the database and the logs). Also where it
//! finds the programs it runs ([`find_program`]).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

pub const DATA_DIR_ENV: &str = "YUI_DATA_DIR";
pub const DB_FILE: &str = "yui.sqlite3";

#[derive(Debug, Clone)]
pub struct Paths {
    pub data_dir: PathBuf,
    pub log_dir: PathBuf,
}

impl Paths {
    /// Resolve: explicit dir, then `YUI_DATA_DIR`, then the OS data dir.
    pub fn resolve(explicit: Option<PathBuf>) -> Self {
        let chosen = explicit.or_else(|| {
            std::env::var_os(DATA_DIR_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        });
        if let Some(dir) = chosen {
            return Self::under(dir);
        }
        match directories::ProjectDirs::from("app", "yui", "YUI") {
            Some(d) => Self {
                data_dir: d.data_dir().to_path_buf(),
                log_dir: d
                    .state_dir()
                    .map(|s| s.join("logs"))
                    .unwrap_or_else(|| d.data_dir().join("logs")),
            },
            None => Self::under(std::env::temp_dir().join("yui")),
        }
    }

    /// Everything in one dir: the database in it, the logs in `logs/`.
    fn under(dir: PathBuf) -> Self {
        Self {
            log_dir: dir.join("logs"),
            data_dir: dir,
        }
    }

    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join(DB_FILE)
    }
}

/// `--data-dir DIR` or `--data-dir=DIR` among the app's command-line arguments (the E2E tests pass
/// it through tauri-driver, which starts the app; the CLI parses its own with clap).
pub fn data_dir_arg(mut args: impl Iterator<Item = String>) -> Option<PathBuf> {
    while let Some(a) = args.next() {
        if a == "--data-dir" {
            return args.next().map(PathBuf::from);
        }
        if let Some(v) = a.strip_prefix("--data-dir=") {
            return Some(PathBuf::from(v));
        }
    }
    None
}

/// The executable file `name` in the first dir of `path_var` (a `PATH` value) that has one, as a
/// shell would look it up; empty entries are skipped, so the current dir is never searched.
pub fn find_program(name: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|p| is_executable_file(p))
}

/// A regular file with an execute bit (any file on other systems).
#[cfg(unix)]
pub fn is_executable_file(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A regular file with an execute bit (any file on other systems).
#[cfg(not(unix))]
pub fn is_executable_file(p: &Path) -> bool {
    p.is_file()
}

#[cfg(test)]
mod tests {
    use super::data_dir_arg;
    use std::path::PathBuf;

    fn args(v: &[&str]) -> impl Iterator<Item = String> {
        v.iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn data_dir_from_the_command_line() {
        assert_eq!(
            data_dir_arg(args(&["--data-dir", "/d"])),
            Some(PathBuf::from("/d"))
        );
        assert_eq!(
            data_dir_arg(args(&["-x", "--data-dir=/e"])),
            Some(PathBuf::from("/e"))
        );
        assert_eq!(data_dir_arg(args(&["--data-dir"])), None);
        assert_eq!(data_dir_arg(args(&[])), None);
    }
}
