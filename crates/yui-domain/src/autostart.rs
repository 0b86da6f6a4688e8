//! Start with the desktop: the `yui.autostart` switch and the XDG autostart entry it stands for
//! (`$XDG_CONFIG_HOME/autostart/yui.desktop`, the freedesktop.org Desktop Application Autostart
//! Specification). Switching it on writes the entry, switching it off removes it; the app calls
//! [`Autostart::reconcile`] at start, so an entry whose program moved (a package upgrade, a build
//! in another folder) points at the running one again.
//!
//! Written here rather than with Tauri's autostart plugin: the plugin keeps no setting (the file
//! is its only state) and lives in the shell, where neither the CLI nor a plain test can reach
//! it; on Linux it writes the same small file (auto-launch). Here the switch is a typed settings
//! key like every other, `yui settings set yui.autostart` works headless, and the tests run on
//! real files.
//!
//! Reads and writes its key through `store::kv`, never through `settings` (no import cycle).

use crate::error::{CoreError, Result};
use crate::store::{kv, Store};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

pub const KEY: &str = "yui.autostart";
/// The entry's file name inside the autostart folder.
pub const ENTRY_FILE: &str = "yui.desktop";

pub fn default_value() -> Value {
    json!({"enabled": false})
}

/// `{"enabled": bool}`, else a plain error.
pub fn from_value(v: &Value) -> Result<bool> {
    v.get("enabled")
        .and_then(Value::as_bool)
        .ok_or_else(|| CoreError::invalid(format!("{KEY} must be {{\"enabled\": true|false}}")))
}

/// The switch and where its entry is, as Settings shows them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Status {
    pub enabled: bool,
    /// The entry file (written when enabled, absent when not).
    pub entry: PathBuf,
    /// Whether the entry file is there now.
    pub present: bool,
}

/// The user's autostart folder: `$XDG_CONFIG_HOME/autostart` (else `~/.config/autostart`).
pub fn user_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|b| b.config_dir().join("autostart"))
}

/// The program the entry starts: the AppImage when running from one (its mount point changes at
/// every start), else `exe`.
pub fn program(exe: &Path) -> PathBuf {
    std::env::var_os("APPIMAGE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| exe.to_path_buf())
}

/// Where the entry for the app lives, and the program it starts.
#[derive(Debug, Clone)]
pub struct Autostart {
    pub dir: PathBuf,
    pub program: PathBuf,
}

impl Autostart {
    pub fn new(dir: impl Into<PathBuf>, program: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            program: program.into(),
        }
    }

    /// The user's folder and the app `exe` ([`user_dir`], [`program`]).
    pub fn for_user(exe: &Path) -> Result<Self> {
        let dir = user_dir().ok_or_else(|| {
            CoreError::internal("no home folder: cannot find the autostart folder")
        })?;
        Ok(Self::new(dir, program(exe)))
    }

    pub fn entry_path(&self) -> PathBuf {
        self.dir.join(ENTRY_FILE)
    }

    /// The switch now, and whether its entry is there.
    pub fn status(&self, store: &Store) -> Result<Status> {
        Ok(Status {
            enabled: enabled(store)?,
            entry: self.entry_path(),
            present: self.entry_path().is_file(),
        })
    }

    /// Switch on or off: store the switch, then write or remove the entry. When the file cannot
    /// be written the switch is put back, so the setting never claims an entry that is not there.
    pub fn set(&self, store: &Store, on: bool) -> Result<Status> {
        let before = enabled(store)?;
        kv::put(store, KEY, &json!({ "enabled": on }))?;
        if let Err(e) = self.apply(on) {
            kv::put(store, KEY, &json!({ "enabled": before }))?;
            return Err(e);
        }
        self.status(store)
    }

    /// At start: when the switch is on, (re)write the entry if it is missing or starts another
    /// program. When it is off nothing is touched: a run on another data dir (`--data-dir`, the
    /// tests) must not remove the entry the user's own data dir switched on.
    pub fn reconcile(&self, store: &Store) -> Result<Status> {
        if enabled(store)? {
            let want = entry_text(&self.program);
            let have = std::fs::read_to_string(self.entry_path()).ok();
            if have.as_deref() != Some(want.as_str()) {
                self.apply(true)?;
            }
        }
        self.status(store)
    }

    fn apply(&self, on: bool) -> Result<()> {
        let path = self.entry_path();
        if on {
            std::fs::create_dir_all(&self.dir).map_err(|e| io_err("create", &self.dir, e))?;
            // Written aside and renamed: a session starting meanwhile never reads half a file.
            let tmp = self.dir.join(format!(".{ENTRY_FILE}.tmp"));
            std::fs::write(&tmp, entry_text(&self.program))
                .map_err(|e| io_err("write", &tmp, e))?;
            std::fs::rename(&tmp, &path).map_err(|e| io_err("write", &path, e))
        } else {
            match std::fs::remove_file(&path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io_err("remove", &path, e)),
            }
        }
    }
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> CoreError {
    CoreError::internal(format!(
        "cannot {what} the autostart entry {}: {e}",
        path.display()
    ))
    .with_source(e)
}

/// The switch's stored state (off when never set or unreadable as a switch).
pub fn enabled(store: &Store) -> Result<bool> {
    Ok(kv::get(store, KEY)?
        .as_ref()
        .and_then(|v| from_value(v).ok())
        .unwrap_or(false))
}

/// The desktop entry that starts `program` at login.
pub fn entry_text(program: &Path) -> String {
    format!(
        "[Desktop Entry]\n\
         Type=Application\n\
         Name=YUI\n\
         Comment=Desktop companion characters\n\
         Exec={}\n\
         Icon=yui-app\n\
         Terminal=false\n\
         X-GNOME-Autostart-enabled=true\n",
        exec_arg(&program.to_string_lossy())
    )
}

/// One argument of an `Exec=` line (Desktop Entry Specification, "The Exec key"): quoted when it
/// holds a reserved character, with `"`, `` ` ``, `$` and `\` escaped inside the quotes; `%`
/// doubled (a field code otherwise); and the backslashes doubled again for the string type.
pub fn exec_arg(arg: &str) -> String {
    let arg = arg.replace('%', "%%");
    let reserved = |c: char| " \t\n\"'\\><~|&;$*?#()`".contains(c);
    if !arg.chars().any(reserved) {
        return arg;
    }
    let mut quoted = String::from("\"");
    for c in arg.chars() {
        if matches!(c, '"' | '`' | '$' | '\\') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted.replace('\\', "\\\\")
}
