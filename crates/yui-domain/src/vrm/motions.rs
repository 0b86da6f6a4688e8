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
use base64::Engine as _;
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
            let file = match &c.file {
                None => None,
                Some(path) => {
                    in_vocab(&vocab, &c.motion)?;
                    let label = path.file_name().map_or_else(
                        || path.display().to_string(),
                        |n| n.to_string_lossy().into(),
                    );
                    Some((animation::read_file(path)?, label))
                }
            };
            check_one(&vocab, &c.motion, file)
        })
        .collect()
}

/// Refuse a motion the vocabulary lacks, naming the ones it has.
fn in_vocab(vocab: &crate::vocab::Vocab, motion: &str) -> Result<()> {
    if vocab.motions.iter().any(|m| m.id == motion) {
        return Ok(());
    }
    let known: Vec<&str> = vocab.motions.iter().map(|m| m.id.as_str()).collect();
    Err(CoreError::invalid(format!(
        "there is no motion {motion:?} in the vocabulary (it has {})",
        known.join(", ")
    )))
}

/// One change checked: `motion` is the vocabulary's, and `file` (its bytes and the name to
/// say) a usable VRM animation; no file: back to the procedural motion.
fn check_one(
    vocab: &crate::vocab::Vocab,
    motion: &str,
    file: Option<(Vec<u8>, String)>,
) -> Result<Checked> {
    in_vocab(vocab, motion)?;
    file_name(motion)?;
    let file = match file {
        None => None,
        Some((bytes, label)) => {
            let anim = animation::read(&bytes, &label)?;
            Some((bytes, anim))
        }
    };
    Ok(Checked {
        motion: motion.to_string(),
        file,
    })
}

/// Character `id`, whose look must be a VRM model (else one sentence saying how to give it one).
fn vrm_preset(store: &Store, id: &str) -> Result<presets::Preset> {
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
    Ok(preset)
}

/// Keep checked changes for character `id`, whose look must be a VRM model.
pub fn apply(
    store: &Store,
    data_dir: &Path,
    id: &str,
    checked: Vec<Checked>,
) -> Result<Vec<MotionFile>> {
    vrm_preset(store, id)?;
    let dir = looks::dir_for(data_dir, id).join(MOTION_DIR);
    let io = |what: &str, p: &Path, e: std::io::Error| {
        CoreError::internal(format!("cannot {what} {}: {e}", p.display())).with_source(e)
    };
    let kept = checked
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
        .collect::<Result<Vec<_>>>();
    // Even after a failed write: the avatar says what the folder holds now.
    stamp(store, id, &dir.with_file_name(super::MODEL_FILE))?;
    kept
}

/// Record in character `id`'s avatar which motion files it plays (`motions`: each file's
/// digest), so a change to them is a change of the character: its open window hears it
/// (`presets-changed`) and draws itself again with them. The files stay the truth.
fn stamp(store: &Store, id: &str, model_file: &Path) -> Result<()> {
    use sha2::Digest as _;
    let preset = presets::get(store, id)?;
    let mut avatar = preset.avatar.clone();
    let mut map = serde_json::Map::new();
    for motion in list(model_file) {
        let file = dir_of(model_file).join(format!("{motion}.vrma"));
        let bytes = std::fs::read(file).unwrap_or_default();
        let digest = sha2::Sha256::digest(&bytes);
        let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
        map.insert(motion, serde_json::Value::String(hex));
    }
    match avatar.as_object_mut() {
        Some(o) if map.is_empty() => {
            o.remove("motions");
        }
        Some(o) => {
            o.insert("motions".into(), serde_json::Value::Object(map));
        }
        None => return Ok(()),
    }
    if avatar != preset.avatar {
        let change = presets::PresetUpdate {
            avatar: Some(avatar),
            ..presets::PresetUpdate::default()
        };
        presets::update(store, id, &change)?;
    }
    Ok(())
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

/// A `.vrma` file the settings window read (its name and its bytes as base64, as a card's):
/// checked like [`check`]'s files, then kept by [`apply`] — the same refusals, in the same
/// words, as `yui look set --vrm-motion`. Returns every motion's state afterwards.
pub fn set_from_upload(
    store: &Store,
    data_dir: &Path,
    id: &str,
    motion: &str,
    name: &str,
    data: &str,
) -> Result<Vec<MotionSlot>> {
    vrm_preset(store, id)?;
    let vocab = crate::vocab::load(store)?;
    in_vocab(&vocab, motion)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| CoreError::invalid(format!("{name} did not arrive intact: {e}")))?;
    if bytes.len() as u64 > animation::MAX_FILE_BYTES {
        return Err(CoreError::invalid(format!(
            "{name} is {:.1} MB; a VRM animation may be at most 20 MB",
            bytes.len() as f64 / (1024.0 * 1024.0)
        )));
    }
    let checked = check_one(&vocab, motion, Some((bytes, name.to_string())))?;
    apply(store, data_dir, id, vec![checked])?;
    slots(store, id)
}

/// Character `id`'s `motion` plays its procedural animation again (`MOTION=` of the CLI);
/// returns every motion's state afterwards.
pub fn remove(store: &Store, data_dir: &Path, id: &str, motion: &str) -> Result<Vec<MotionSlot>> {
    // A file kept for a motion the vocabulary no longer has may be removed too.
    let checked = if list_of(store, id)?.iter().any(|k| k == motion) {
        vec![Checked {
            motion: motion.to_string(),
            file: None,
        }]
    } else {
        let change = MotionChange {
            motion: motion.to_string(),
            file: None,
        };
        check(store, &[change])?
    };
    apply(store, data_dir, id, checked)?;
    slots(store, id)
}

fn list_of(store: &Store, id: &str) -> Result<Vec<String>> {
    let preset = vrm_preset(store, id)?;
    let model = preset
        .avatar
        .get("file")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    Ok(list(Path::new(model)))
}

/// One motion as Settings → Characters shows it for a VRM character.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MotionSlot {
    pub motion: String,
    /// The vocabulary's label (the id for a file kept for a motion it no longer has).
    pub label: String,
    /// Whether the vocabulary has the motion (a file may outlive a motion removed from it).
    pub in_vocab: bool,
    /// The `.vrma` it plays; `None`: its procedural animation.
    pub file: Option<PathBuf>,
    /// What the kept file holds.
    pub animation: Option<Animation>,
    /// Why the kept file cannot be played now (the window plays the procedural motion).
    pub problem: Option<String>,
}

/// Every motion of the vocabulary for character `id` (a VRM character), with the `.vrma` each
/// plays if it has one, then files kept for motions the vocabulary no longer has.
pub fn slots(store: &Store, id: &str) -> Result<Vec<MotionSlot>> {
    let kept = list_of(store, id)?;
    let preset = vrm_preset(store, id)?;
    let model = PathBuf::from(
        preset
            .avatar
            .get("file")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default(),
    );
    let vocab = crate::vocab::load(store)?;
    let slot = |motion: &str, label: &str, in_vocab: bool| {
        let mut s = MotionSlot {
            motion: motion.to_string(),
            label: label.to_string(),
            in_vocab,
            file: None,
            animation: None,
            problem: None,
        };
        if kept.iter().any(|k| k == motion) {
            let path = dir_of(&model).join(format!("{motion}.vrma"));
            let read = animation::read_file(&path)
                .and_then(|b| animation::read(&b, &format!("{motion}.vrma")));
            match read {
                Ok(a) => s.animation = Some(a),
                Err(e) => s.problem = Some(e.message),
            }
            s.file = Some(path);
        }
        s
    };
    let mut out: Vec<MotionSlot> = vocab
        .motions
        .iter()
        .map(|m| {
            slot(
                &m.id,
                if m.label.is_empty() { &m.id } else { &m.label },
                true,
            )
        })
        .collect();
    for k in &kept {
        if !vocab.motions.iter().any(|m| &m.id == k) {
            out.push(slot(k, k, false));
        }
    }
    Ok(out)
}
