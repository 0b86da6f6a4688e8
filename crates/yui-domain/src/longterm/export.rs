//! Saving a character's memories as a JSON file (Settings → Memory's Export, `yui memory
//! export --out FILE`): the document [`super::export`] makes, written whole or not at all, to the
//! path given or to `yui-memories-<preset>-<date>.json` in the user's Downloads folder (home
//! when there is none), never over an existing file it was not pointed at.

use crate::error::{CoreError, Result};
use crate::store::Store;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where an export went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Saved {
    pub path: PathBuf,
    /// How many memories the file holds.
    pub memories: usize,
}

/// The folder a default export goes to: Downloads, else home.
pub fn default_dir() -> Option<PathBuf> {
    let user = directories::UserDirs::new()?;
    Some(
        user.download_dir()
            .filter(|d| d.is_dir())
            .unwrap_or(user.home_dir())
            .to_path_buf(),
    )
}

/// `<dir>/yui-memories-<preset>-<YYYY-MM-DD>.json`, or `…-2.json`, `…-3.json` when taken.
pub fn default_path(dir: &Path, preset_id: &str, now: DateTime<Utc>) -> PathBuf {
    let safe: String = preset_id
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let stem = format!("yui-memories-{safe}-{}", now.format("%Y-%m-%d"));
    let mut path = dir.join(format!("{stem}.json"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{stem}-{n}.json"));
        n += 1;
    }
    path
}

/// [`save`] to what the user typed (Settings → Memory's Export): a blank path is the default.
pub fn save_typed(
    store: &Store,
    now: DateTime<Utc>,
    preset_id: &str,
    typed: Option<&str>,
) -> Result<Saved> {
    let to = typed.filter(|p| !p.trim().is_empty()).map(Path::new);
    save(store, now, preset_id, to)
}

/// Write `preset_id`'s memories to `to` (a file; its folder must exist), or to
/// [`default_path`] in [`default_dir`] when `to` is `None`. The file appears whole: it is
/// written beside its final name and renamed.
pub fn save(
    store: &Store,
    now: DateTime<Utc>,
    preset_id: &str,
    to: Option<&Path>,
) -> Result<Saved> {
    let doc = super::export(store, now, preset_id)?;
    let memories = doc["memories"].as_array().map_or(0, Vec::len);
    let path = match to {
        Some(p) if p.as_os_str().is_empty() => {
            return Err(CoreError::invalid("say where to save the memories"))
        }
        Some(p) if p.is_dir() => default_path(p, preset_id, now),
        Some(p) => p.to_path_buf(),
        None => {
            let dir = default_dir().ok_or_else(|| {
                CoreError::invalid("no home folder to save into: choose where to save the file")
            })?;
            default_path(&dir, preset_id, now)
        }
    };
    let fail = |e: std::io::Error| {
        CoreError::invalid(format!(
            "the memories could not be saved to {}: {e}",
            path.display()
        ))
    };
    let name = path
        .file_name()
        .ok_or_else(|| CoreError::invalid(format!("{} is not a file name", path.display())))?;
    let mut part_name = std::ffi::OsString::from(".");
    part_name.push(name);
    part_name.push(".part");
    let part = path.with_file_name(part_name);
    let text = serde_json::to_string_pretty(&doc)? + "\n";
    let written = std::fs::File::create(&part).and_then(|mut f| {
        f.write_all(text.as_bytes())?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&part, &path)) {
        let _ = std::fs::remove_file(&part);
        return Err(fail(e));
    }
    Ok(Saved { path, memories })
}
