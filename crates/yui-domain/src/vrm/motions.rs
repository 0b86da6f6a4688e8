//! A VRM character's motions from `.vrma` files: a motion of the vocabulary (nod, wave, …)
//! mapped to a VRM animation, the file copied to `<look folder>/motions/<motion>.vrma` beside
//! the model, so a new model keeps them and deleting the character deletes them. A motion
//! without a file plays its procedural animation (ui/character/vrm-motion.js).
//!
//! Every file is checked ([`check`]) before anything is written: one bad file changes nothing.

use super::animation::{self, Animation};
use crate::error::{CoreError, Result};
use crate::look_dir as looks;
use crate::presets;
use crate::store::Store;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The folder of a look's motion files, beside its model.
pub const MOTION_DIR: &str = "motions";

/// One change asked for: `motion` plays `file`, or (`None`) its own procedural motion again.
#[derive(Debug, Clone, PartialEq)]
pub struct MotionChange {
    pub motion: String,
    pub file: Option<PathBuf>,
}

/// Text that is not `MOTION=FILE.vrma`, in plain words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not MOTION=FILE.vrma (or MOTION= to remove one)")]
pub struct NotAMotionChange(pub String);

impl MotionChange {
    /// `MOTION=FILE.vrma`, or `MOTION=` to go back to the procedural motion.
    pub fn parse(s: &str) -> std::result::Result<Self, NotAMotionChange> {
        let (motion, file) = s
            .split_once('=')
            .ok_or_else(|| NotAMotionChange(s.to_string()))?;
        Ok(Self {
            motion: motion.trim().to_string(),
            file: Some(file.trim())
                .filter(|f| !f.is_empty())
                .map(PathBuf::from),
        })
    }
}

/// A change checked: the file's bytes and what it holds (none: remove).
#[derive(Debug, Clone)]
pub struct Checked {
    motion: String,
    file: Option<(Vec<u8>, Animation)>,
}

/// What a motion plays now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MotionFile {
    pub motion: String,
    /// The kept copy; `None`: the procedural motion again.
    pub file: Option<PathBuf>,
    pub animation: Option<Animation>,
}

/// The motion files of the model at `model_file` (its look folder's `motions/`).
pub fn dir_of(model_file: &Path) -> PathBuf {
    model_file
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(MOTION_DIR)
}

/// A motion id as a file name: letters, digits, `_` and `-` (the built-in vocabulary's ids).
fn file_name(motion: &str) -> Result<String> {
    let ok = !motion.is_empty()
        && motion.len() <= 64
        && motion
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(format!("{motion}.vrma"))
    } else {
        Err(CoreError::invalid(format!(
            "the motion {motion:?} cannot have a VRM animation: its id may hold only letters, digits, _ and -"
        )))
    }
}

/// The motions of the model at `model_file` that play a `.vrma`, sorted.
pub fn list(model_file: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir_of(model_file)) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let id = name.strip_suffix(".vrma")?.to_string();
            (file_name(&id).is_ok() && e.path().is_file()).then_some(id)
        })
        .collect();
    out.sort();
    out
}

/// Check every change before anything is written: each motion is one of the vocabulary's and
/// each file a usable VRM animation. The first problem is one sentence.
pub fn check(store: &Store, changes: &[MotionChange]) -> Result<Vec<Checked>> {
    let vocab = crate::vocab::load(store)?;
    changes
        .iter()
        .map(|c| {
            if !vocab.motions.iter().any(|m| m.id == c.motion) {
                let known: Vec<&str> = vocab.motions.iter().map(|m| m.id.as_str()).collect();
                return Err(CoreError::invalid(format!(
                    "there is no motion {:?} in the vocabulary (it has {})",
                    c.motion,
                    known.join(", ")
                )));
            }
            file_name(&c.motion)?;
            let file = match &c.file {
                None => None,
                Some(path) => {
                    let bytes = animation::read_file(path)?;
                    let label = path.file_name().map_or_else(
                        || path.display().to_string(),
                        |n| n.to_string_lossy().into(),
                    );
                    let anim = animation::read(&bytes, &label)?;
                    Some((bytes, anim))
                }
            };
            Ok(Checked {
                motion: c.motion.clone(),
                file,
            })
        })
        .collect()
}

/// Keep checked changes for character `id`, whose look must be a VRM model.
pub fn apply(
    store: &Store,
    data_dir: &Path,
    id: &str,
    checked: Vec<Checked>,
) -> Result<Vec<MotionFile>> {
    let preset = presets::get(store, id)?;
    if preset
        .avatar
        .get("kind")
        .and_then(serde_json::Value::as_str)
        != Some("vrm")
    {
        return Err(CoreError::invalid(format!(
            "{:?} is not drawn with a VRM model; give it one first (`yui look set --preset {id} --vrm MODEL.vrm`)",
            preset.name
        )));
    }
    let dir = looks::dir_for(data_dir, id).join(MOTION_DIR);
    let io = |what: &str, p: &Path, e: std::io::Error| {
        CoreError::internal(format!("cannot {what} {}: {e}", p.display())).with_source(e)
    };
    checked
        .into_iter()
        .map(|c| {
            let path = dir.join(file_name(&c.motion)?);
            match c.file {
                None => {
                    match std::fs::remove_file(&path) {
                        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                            return Err(io("remove", &path, e))
                        }
                        _ => {}
                    }
                    Ok(MotionFile {
                        motion: c.motion,
                        file: None,
                        animation: None,
                    })
                }
                Some((bytes, anim)) => {
                    std::fs::create_dir_all(&dir).map_err(|e| io("create", &dir, e))?;
                    let tmp = path.with_extension("vrma.tmp");
                    std::fs::write(&tmp, &bytes).map_err(|e| io("write", &tmp, e))?;
                    std::fs::rename(&tmp, &path).map_err(|e| io("write", &path, e))?;
                    Ok(MotionFile {
                        motion: c.motion,
                        file: Some(path),
                        animation: Some(anim),
                    })
                }
            }
        })
        .collect()
}

/// [`check`] then [`apply`]: map motions of character `id` to `.vrma` files.
pub fn set(
    store: &Store,
    data_dir: &Path,
    id: &str,
    changes: &[MotionChange],
) -> Result<Vec<MotionFile>> {
    let checked = check(store, changes)?;
    apply(store, data_dir, id, checked)
}

/// The bytes of `motion`'s file for the model at `model_file` (checked again: the file may
/// have changed since it was kept).
pub fn bytes_for(model_file: &Path, motion: &str) -> Result<Vec<u8>> {
    let path = dir_of(model_file).join(file_name(motion)?);
    if !path.is_file() {
        return Err(CoreError::not_found(format!(
            "this character has no VRM animation for {motion:?}"
        )));
    }
    let bytes = animation::read_file(&path)?;
    animation::read(&bytes, &path.display().to_string())?;
    Ok(bytes)
}
