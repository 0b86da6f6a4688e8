//! A VRM model in the data dir: a new character made from a model, or a model given to a
//! character, copied (textures scaled) to `<data dir>/looks/<id>/model.vrm` like the other
//! looks, so deleting the character deletes it (`looks::delete_character`). The previous look
//! is kept in the avatar as its `fallback`: a window that cannot draw the model shows that.

use super::{prepare, read_file, Model, MODEL_FILE};
use crate::error::{CoreError, Result};
use crate::look_dir as looks;
use crate::presets::{self, NewPreset, Preset, PresetUpdate};
use crate::store::Store;
use serde::Serialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// What importing a model made: the character, the model as kept, and its licence in lines.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VrmImport {
    #[serde(flatten)]
    pub preset: Preset,
    pub model: Model,
    /// The model's own licence terms, one line each, to show the user.
    pub licence: Vec<String>,
}

/// The model file in preset `id`'s look folder.
pub fn file_for(data_dir: &Path, id: &str) -> PathBuf {
    looks::dir_for(data_dir, id).join(MODEL_FILE)
}

/// The avatar of a VRM look over `previous` (a VRM's own fallback is kept, never nested; so is
/// its record of motion files, which a new model keeps: `motions::stamp`).
pub fn avatar(file: &Path, previous: &Value) -> Value {
    let fallback = if previous.get("kind").and_then(Value::as_str) == Some("vrm") {
        previous.get("fallback").cloned().unwrap_or(Value::Null)
    } else {
        previous.clone()
    };
    let mut a = json!({"kind": "vrm", "file": file});
    if fallback.is_object() {
        a["fallback"] = fallback;
    }
    if previous.get("kind").and_then(Value::as_str) == Some("vrm") {
        if let Some(m) = previous.get("motions").filter(|m| m.is_object()) {
            a["motions"] = m.clone();
        }
    }
    a
}

fn write_model(data_dir: &Path, id: &str, bytes: &[u8]) -> Result<PathBuf> {
    let dir = looks::dir_for(data_dir, id);
    let io = |what: &str, p: &Path, e: std::io::Error| {
        CoreError::internal(format!("cannot {what} {}: {e}", p.display())).with_source(e)
    };
    std::fs::create_dir_all(&dir).map_err(|e| io("create", &dir, e))?;
    let path = dir.join(MODEL_FILE);
    let tmp = dir.join("model.vrm.tmp");
    std::fs::write(&tmp, bytes).map_err(|e| io("write", &tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| io("write", &path, e))?;
    Ok(path)
}

fn label(file: &Path) -> String {
    file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into(),
    )
}

/// Make a new character from the model at `file`: named as the model's meta says (or `name`,
/// or the file's name), drawn with the model, a built-in palette as its fallback. A file that
/// is not a usable VRM creates nothing.
pub fn import_new(
    store: &Store,
    data_dir: &Path,
    file: &Path,
    name: Option<&str>,
    open: bool,
) -> Result<VrmImport> {
    let raw = read_file(file)?;
    let (bytes, model) = prepare(&raw, &label(file))?;
    drop(raw);
    let name = name
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(String::from)
        .or_else(|| Some(model.meta.name.clone()).filter(|n| !n.is_empty()))
        .or_else(|| file.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "VRM character".into());
    let preset = presets::create(
        store,
        &NewPreset {
            name,
            persona: None,
            avatar: None,
            voice: None,
            open,
        },
    )?;
    // A folder left by a deleted character of the same id is not this one's.
    looks::remove(data_dir, &preset.id);
    let saved = write_model(data_dir, &preset.id, &bytes).and_then(|path| {
        presets::update(
            store,
            &preset.id,
            &PresetUpdate {
                avatar: Some(avatar(&path, &preset.avatar)),
                ..PresetUpdate::default()
            },
        )
    });
    match saved {
        Ok(preset) => Ok(VrmImport {
            preset,
            licence: model.meta.licence.lines(),
            model,
        }),
        Err(e) => {
            // Nothing half made stays behind.
            let _ = presets::delete(store, &preset.id);
            looks::remove(data_dir, &preset.id);
            Err(e)
        }
    }
}

/// Give character `id` the model at `file` as its look (its current look becomes the
/// fallback). A file that is not a usable VRM changes nothing.
pub fn set_for(store: &Store, data_dir: &Path, id: &str, file: &Path) -> Result<VrmImport> {
    let current = presets::get(store, id)?;
    let raw = read_file(file)?;
    let (bytes, model) = prepare(&raw, &label(file))?;
    drop(raw);
    let path = write_model(data_dir, id, &bytes)?;
    let preset = presets::update(
        store,
        id,
        &PresetUpdate {
            avatar: Some(avatar(&path, &current.avatar)),
            ..PresetUpdate::default()
        },
    )?;
    Ok(VrmImport {
        preset,
        licence: model.meta.licence.lines(),
        model,
    })
}

/// The model file of a VRM avatar (`{"kind": "vrm", "file": …}`), or why it has none.
fn model_file(avatar: &Value) -> Result<PathBuf> {
    if avatar.get("kind").and_then(Value::as_str) != Some("vrm") {
        return Err(CoreError::invalid(
            "this character is not drawn with a VRM model",
        ));
    }
    let file = avatar.get("file").and_then(Value::as_str).unwrap_or("");
    let path = PathBuf::from(file);
    if !path.is_absolute() {
        return Err(CoreError::invalid(
            "a VRM look needs an absolute path to its model",
        ));
    }
    Ok(path)
}

/// What a window draws for a VRM avatar: the model's meta and every decision made for it
/// (`super::Look`), with the faces of the stored vocabulary's emotions.
pub fn look_for_avatar(store: &Store, avatar: &Value) -> Result<super::Look> {
    super::look_of(&model_file(avatar)?, &crate::vocab::load(store)?)
}

/// The model's bytes for the window that draws it (checked again: the file may have changed).
pub fn model_bytes(avatar: &Value) -> Result<Vec<u8>> {
    let path = model_file(avatar)?;
    let bytes = read_file(&path)?;
    super::read(&bytes, &path.display().to_string())?;
    Ok(bytes)
}

/// The logical size of `preset`'s character window at the user's `scale`
/// (`layout::SCALE_KEY`): the drawn character's (the main one's or a pet's), or for a VRM look
/// the same height and the width the model's framing asks ([`super::framing::window_size`]),
/// both scaled in proportion. A model that cannot be read keeps the drawn size.
pub fn window_size(preset: &Preset, scale: f64) -> (f64, f64) {
    let default = crate::layout::character_size(preset.is_main);
    let size = model_file(&preset.avatar)
        .and_then(|file| super::framing_of(&file))
        .ok()
        .flatten()
        .map_or(default, |f| super::framing::window_size(default, f.aspect));
    crate::layout::scaled(size, scale)
}

/// [`window_size`] at the user's scale as stored now.
pub fn window_size_in(store: &Store, preset: &Preset) -> (f64, f64) {
    window_size(preset, crate::layout::scale(store))
}

/// What a character window loads for a VRM avatar: the model's bytes, or (`motion`) the
/// `.vrma` file that motion plays.
pub fn window_bytes(avatar: &Value, motion: Option<&str>) -> Result<Vec<u8>> {
    match motion {
        None => model_bytes(avatar),
        Some(m) => super::motions::bytes_for(&model_file(avatar)?, m),
    }
}

/// A window could not draw `preset`'s model and shows its previous look: the log says why.
pub fn report_failure(preset: &Preset, reason: &str) -> Result<()> {
    let reason: String = reason.chars().take(500).collect();
    let file = preset
        .avatar
        .get("file")
        .and_then(Value::as_str)
        .unwrap_or("");
    tracing::warn!(
        preset = %preset.id,
        file,
        "the VRM model cannot be drawn, showing the previous look: {reason}"
    );
    Ok(())
}
