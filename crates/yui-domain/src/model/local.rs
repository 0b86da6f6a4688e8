//! The models on this machine: the catalog's files under the data dir's `models/`, the user's
//! own GGUF files added there (`added.json` records them: copied, or hard-linked when the file
//! is on the same file system), and GGUF files found where LM Studio and llama.cpp keep theirs,
//! offered to add. [`list`] gives each its state: available, downloading, installed, in use
//! (the backend's built-in model), or found.

use super::catalog::{self, Entry};
use super::download;
use crate::error::{CoreError, Result};
use crate::paths::Paths;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The folder under the data dir.
pub const DIR: &str = "models";
/// The user's own files, in `models/`.
pub const ADDED_FILE: &str = "added.json";
/// Written by a running engine (`{pid, file, port}`: `file` is the model's path) so no process
/// deletes its model.
pub const RUN_FILE: &str = "engine.json";

pub fn dir(paths: &Paths) -> PathBuf {
    paths.data_dir.join(DIR)
}

/// The user's own files, apart from the catalog's (a file of the same name never collides).
pub fn own_dir(paths: &Paths) -> PathBuf {
    dir(paths).join(OWN)
}

/// The folder of the user's own files under `models/`.
pub const OWN: &str = "own";

/// Where a model is and what it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Available,
    Downloading,
    Installed,
    InUse,
    /// A GGUF of LM Studio or llama.cpp, not added yet (`yui model add PATH`).
    Found,
}

/// One line of `yui model list`.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    pub name: String,
    pub file: String,
    pub path: String,
    pub size: u64,
    pub sha256: Option<String>,
    pub state: State,
    /// `catalog`, `added` or the program whose folder it was found in.
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ram: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub licence: Option<String>,
    /// Bytes of an unfinished download kept for resuming.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<u64>,
}

/// A file the user added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Added {
    pub name: String,
    pub file: String,
    pub size: u64,
    pub sha256: String,
    /// `copied` or `linked`.
    pub how: String,
    /// Where it came from.
    pub from: String,
}

/// What a running engine wrote of itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Running {
    pub pid: u32,
    pub file: String,
    pub port: u16,
}

pub fn added(paths: &Paths) -> Vec<Added> {
    std::fs::read_to_string(dir(paths).join(ADDED_FILE))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

fn save_added(paths: &Paths, list: &[Added]) -> Result<()> {
    let d = dir(paths);
    std::fs::create_dir_all(&d).map_err(|e| io(&d, e))?;
    let path = d.join(ADDED_FILE);
    let tmp = d.join(format!("{ADDED_FILE}.tmp"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(list)?).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| io(&path, e))
}

fn io(p: &Path, e: std::io::Error) -> CoreError {
    CoreError::new(
        crate::error::ErrorCode::Store,
        format!("{}: {e}", p.display()),
    )
}

/// The engine that is running now (its run file, its pid alive), if any.
pub fn running(paths: &Paths) -> Option<Running> {
    std::fs::read_to_string(dir(paths).join(RUN_FILE))
        .ok()
        .and_then(|t| serde_json::from_str::<Running>(&t).ok())
        .filter(|r| super::sys::pid_alive(r.pid))
}

/// The installed file of `name` (a catalog model downloaded whole, or an added one).
pub fn installed(paths: &Paths, catalog: &[Entry], name: &str) -> Option<PathBuf> {
    if let Some(e) = catalog.iter().find(|e| e.name == name) {
        let p = dir(paths).join(&e.file);
        if std::fs::metadata(&p).is_ok_and(|m| m.len() == e.size) {
            return Some(p);
        }
    }
    added(paths)
        .into_iter()
        .find(|a| a.name == name)
        .map(|a| own_dir(paths).join(a.file))
        .filter(|p| p.is_file())
}

/// Where to look and what to compare with, for [`list`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Looking<'a> {
    /// The name the backend's built-in engine uses.
    pub in_use: Option<&'a str>,
    /// `yui.model.mirror`: a partial download is counted for the URL a pull would ask.
    pub mirror: Option<&'a str>,
    /// Where LM Studio's and llama.cpp's folders are (`None`: found nothing).
    pub home: Option<&'a Path>,
}

/// The catalog, the added files and the found ones, each with its state.
pub fn list(paths: &Paths, catalog: &[Entry], look: Looking<'_>) -> Vec<Listed> {
    let Looking {
        in_use,
        mirror,
        home,
    } = look;
    let d = dir(paths);
    let used = |name: &str, s: State| {
        if s == State::Installed && in_use == Some(name) {
            State::InUse
        } else {
            s
        }
    };
    let mut out = Vec::new();
    for e in catalog {
        let path = d.join(&e.file);
        let whole = std::fs::metadata(&path).is_ok_and(|m| m.len() == e.size);
        let state = if whole {
            State::Installed
        } else if download::pulling(&path).is_some() {
            State::Downloading
        } else {
            State::Available
        };
        let url = catalog::with_mirror(&e.url, mirror);
        let partial = Some(download::partial(&path, &url)).filter(|&n| n > 0 && !whole);
        out.push(Listed {
            name: e.name.clone(),
            file: e.file.clone(),
            path: path.display().to_string(),
            size: e.size,
            sha256: Some(e.sha256.clone()),
            state: used(&e.name, state),
            source: "catalog".into(),
            ram: Some(e.ram),
            licence: Some(e.licence.clone()),
            partial,
        });
    }
    let added = added(paths);
    for a in &added {
        out.push(Listed {
            name: a.name.clone(),
            file: a.file.clone(),
            path: own_dir(paths).join(&a.file).display().to_string(),
            size: a.size,
            sha256: Some(a.sha256.clone()),
            state: used(&a.name, State::Installed),
            source: "added".into(),
            ram: None,
            licence: None,
            partial: None,
        });
    }
    for (program, path) in found(home) {
        let from = path.display().to_string();
        if added.iter().any(|a| a.from == from) {
            continue;
        }
        let file = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push(Listed {
            name: name_of(&file),
            size: std::fs::metadata(&path).map_or(0, |m| m.len()),
            file,
            path: from,
            sha256: None,
            state: State::Found,
            source: program.into(),
            ram: None,
            licence: None,
            partial: None,
        });
    }
    out
}

/// Where LM Studio and llama.cpp keep their GGUF files, under the home dir.
pub const FOUND_IN: &[(&str, &str)] = &[
    ("LM Studio", ".lmstudio/models"),
    ("LM Studio", ".cache/lm-studio/models"),
    ("llama.cpp", ".cache/llama.cpp"),
];

/// GGUF model files under [`FOUND_IN`] (four folders deep at most; projector files skipped).
pub fn found(home: Option<&Path>) -> Vec<(&'static str, PathBuf)> {
    fn walk(d: &Path, depth: u32, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(d) else {
            return;
        };
        let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() && depth < 4 {
                walk(&p, depth + 1, out);
            } else if p.is_file() {
                let f = p
                    .file_name()
                    .map(|f| f.to_string_lossy().to_ascii_lowercase())
                    .unwrap_or_default();
                if f.ends_with(".gguf") && !f.starts_with("mmproj") {
                    out.push(p);
                }
            }
        }
    }
    let Some(home) = home else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (program, rel) in FOUND_IN {
        let mut files = Vec::new();
        walk(&home.join(rel), 0, &mut files);
        out.extend(files.into_iter().map(|p| (*program, p)));
    }
    out
}

/// A name from a file name: its stem, lower case.
pub fn name_of(file: &str) -> String {
    let stem = file.strip_suffix(".gguf").unwrap_or(file);
    stem.to_ascii_lowercase().replace(char::is_whitespace, "-")
}

/// What `add` did.
#[derive(Debug, Clone, Serialize)]
pub struct AddedReport {
    #[serde(flatten)]
    pub added: Added,
    pub path: String,
}

/// Add the user's own GGUF file as `name` (default: from its file name): hard-linked into
/// `models/` when it is on the same file system, else copied. The file must start with `GGUF`.
pub fn add(
    paths: &Paths,
    catalog: &[Entry],
    src: &Path,
    name: Option<&str>,
) -> Result<AddedReport> {
    let meta = std::fs::metadata(src)
        .map_err(|e| CoreError::not_found(format!("cannot read {}: {e}", src.display())))?;
    // Recorded where it really is, whatever the working dir of the command that added it.
    let src = &std::fs::canonicalize(src).unwrap_or_else(|_| src.to_path_buf());
    if !meta.is_file() {
        return Err(CoreError::invalid(format!(
            "{} is not a file",
            src.display()
        )));
    }
    let mut magic = [0u8; 4];
    let ok = std::fs::File::open(src)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok();
    if !ok || &magic != b"GGUF" {
        return Err(CoreError::invalid(format!(
            "{} is not a GGUF model file",
            src.display()
        )));
    }
    let file = src
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !catalog::is_plain_file_name(&file) {
        return Err(CoreError::invalid(format!(
            "{} must be a file whose name ends in .gguf",
            src.display()
        )));
    }
    let name = name.map(str::to_string).unwrap_or_else(|| name_of(&file));
    if name.trim().is_empty() || name.contains(char::is_whitespace) {
        return Err(CoreError::invalid(format!(
            "the name {name:?} must be one word"
        )));
    }
    let mut list = added(paths);
    if catalog.iter().any(|e| e.name == name) || list.iter().any(|a| a.name == name) {
        return Err(CoreError::invalid(format!(
            "a model named {name} already exists; choose another with --name"
        )));
    }
    let d = own_dir(paths);
    std::fs::create_dir_all(&d).map_err(|e| io(&d, e))?;
    let dest = d.join(&file);
    if dest.exists() {
        return Err(CoreError::invalid(format!(
            "{} already holds a file named {file}",
            d.display()
        )));
    }
    let how = match std::fs::hard_link(src, &dest) {
        Ok(()) => "linked",
        Err(_) => {
            let tmp = download::beside(&dest, ".part");
            std::fs::copy(src, &tmp).map_err(|e| io(&tmp, e))?;
            std::fs::rename(&tmp, &dest).map_err(|e| io(&dest, e))?;
            "copied"
        }
    };
    let sha256 = download::sha256_of(&dest).map_err(|e| io(&dest, e))?;
    let entry = Added {
        name,
        file,
        size: meta.len(),
        sha256,
        how: how.into(),
        from: src.display().to_string(),
    };
    list.push(entry.clone());
    save_added(paths, &list)?;
    Ok(AddedReport {
        added: entry,
        path: dest.display().to_string(),
    })
}

/// What `remove` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Removed {
    /// Bytes the disk got back.
    pub freed: u64,
    /// The added file's origin when it was a link that still has it: no space came back.
    pub still_at: Option<String>,
}

/// Delete the model `name` (its file, any partial download, its record). Refused while a
/// running engine serves it.
pub fn remove(paths: &Paths, catalog: &[Entry], name: &str) -> Result<Removed> {
    let mut list = added(paths);
    let (path, url) = if let Some(e) = catalog.iter().find(|e| e.name == name) {
        (dir(paths).join(&e.file), Some(e.url.clone()))
    } else if let Some(a) = list.iter().find(|a| a.name == name) {
        (own_dir(paths).join(&a.file), None)
    } else {
        return Err(CoreError::not_found(format!(
            "no model named {name}; `yui model list` shows them"
        )));
    };
    if let Some(r) = running(paths).filter(|r| Path::new(&r.file) == path) {
        return Err(CoreError::invalid(format!(
            "{name} is in use by the running engine (process {}); it was not deleted",
            r.pid
        )));
    }
    if url.is_some() && download::pulling(&path).is_some() {
        return Err(CoreError::invalid(format!(
            "{name} is being downloaded; cancel the download first"
        )));
    }
    let (mut freed, mut gone, mut shared) = (0, 0, false);
    for p in [
        path.clone(),
        download::beside(&path, ".part"),
        download::beside(&path, ".part.url"),
    ] {
        if let Ok(m) = std::fs::symlink_metadata(&p) {
            std::fs::remove_file(&p).map_err(|e| io(&p, e))?;
            gone += 1;
            if links(&m) > 1 {
                shared = true;
            } else {
                freed += m.len();
            }
        }
    }
    let still_at = list
        .iter()
        .find(|a| a.name == name && shared)
        .map(|a| a.from.clone());
    let before = list.len();
    list.retain(|a| a.name != name);
    if list.len() != before {
        save_added(paths, &list)?;
    } else if gone == 0 {
        return Err(CoreError::not_found(format!("{name} is not installed")));
    }
    Ok(Removed { freed, still_at })
}

/// Hard links to a file (1 where it cannot be told).
fn links(m: &std::fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        std::os::unix::fs::MetadataExt::nlink(m)
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        1
    }
}
