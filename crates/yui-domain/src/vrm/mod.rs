//! VRM models as a character's look (docs/vrm.md): a `.vrm` file (glTF binary, VRM 1.0 or 0.x)
//! read and checked, its meta and licence terms put in plain words, its textures scaled once at
//! import, and the decisions the renderer only applies: which expression shows each emotion,
//! which mouth shapes lip sync uses, how the model blinks.
//!
//! - `glb` — the container; `meta` — name, authors, licence; `expressions` — the model's
//!   expressions and [`expressions::face_for`]; `textures` — measuring and scaling;
//!   `look` — the model in the data dir: a new character from a model, a model for a character;
//!   `framing` — the head and upper body a window shows, and the window's proportions;
//!   `animation` — `.vrma` files read and checked; `motions` — the vocabulary's motions that play
//!   one, kept beside the model.
//!
//! The avatar of a character with a VRM look is
//! `{"kind": "vrm", "file": "<data dir>/looks/<id>/model.vrm", "fallback": <the previous look>}`.

pub mod animation;
pub mod expressions;
pub mod framing;
pub mod glb;
pub mod look;
pub mod meta;
pub mod motions;
pub mod textures;

use crate::error::{CoreError, Result};
use crate::vocab::Vocab;
use expressions::{Expression, Face};
use meta::{Meta, VrmVersion};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;
use textures::Texture;

/// The largest `.vrm` file accepted.
pub const MAX_FILE_BYTES: u64 = 100 * 1024 * 1024;
/// The model in a look folder.
pub const MODEL_FILE: &str = "model.vrm";

/// What a model is, as read from its file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Model {
    pub meta: Meta,
    pub expressions: Vec<Expression>,
    /// Humanoid bones the model names.
    pub bones: usize,
    pub textures: Vec<Texture>,
    /// The file's size in bytes.
    pub bytes: u64,
    /// The head and upper body a window shows (none: the humanoid has too few bones to say).
    pub framing: Option<framing::Framing>,
}

/// What a window needs to draw a model: the file, and every decision made for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Look {
    pub file: String,
    pub meta: Meta,
    pub expressions: Vec<Expression>,
    /// One face per emotion of the vocabulary, in its order.
    pub faces: Vec<Face>,
    /// The mouth shapes lip sync uses (aa, ih, ou, ee, oh that the model has).
    pub visemes: Vec<String>,
    /// The expressions that close the eyes (`blink`, or the two eyes apart; empty: none).
    pub blink: Vec<String>,
    /// The vocabulary's motions that play a `.vrma` file (`motions`) instead of their
    /// procedural animation.
    pub motions: Vec<String>,
    /// The head and upper body the window shows, in the model's metres (docs/vrm.md).
    pub framing: Option<framing::Framing>,
}

fn mb(n: u64) -> String {
    format!("{:.1} MB", n as f64 / (1024.0 * 1024.0))
}

/// Read a `.vrm` file, refusing one over [`MAX_FILE_BYTES`] before reading it.
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    let name = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| CoreError::not_found(format!("cannot read {name}: {e}")).with_source(e))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(CoreError::invalid(format!(
            "{name} is {}; a VRM model may be at most 100 MB",
            mb(size)
        )));
    }
    std::fs::read(path)
        .map_err(|e| CoreError::not_found(format!("cannot read {name}: {e}")).with_source(e))
}

/// The glTF document of the file at `path`, reading only its JSON part.
fn json_of(path: &Path) -> Result<Value> {
    use std::io::Read;
    let name = path.display();
    let cannot =
        |e: std::io::Error| CoreError::not_found(format!("cannot read {name}: {e}")).with_source(e);
    let mut f = std::fs::File::open(path).map_err(cannot)?;
    let mut head = [0u8; 20];
    f.read_exact(&mut head).map_err(cannot)?;
    let len = u32::from_le_bytes([head[12], head[13], head[14], head[15]]) as u64;
    if &head[..4] != b"glTF" || len > MAX_FILE_BYTES {
        return Err(CoreError::invalid(format!("{name} is not a VRM model")));
    }
    let mut json = vec![0u8; len as usize];
    f.read_exact(&mut json).map_err(cannot)?;
    serde_json::from_slice(&json)
        .map_err(|e| CoreError::invalid(format!("{name} is not a VRM model: {e}")))
}

/// The meta of the model at `path`, reading only the file's JSON part (the look picker's label).
pub fn meta_of(path: &Path) -> Result<Meta> {
    let name = path.display();
    let json = json_of(path)?;
    let (version, ext) =
        extension(&json).ok_or_else(|| CoreError::invalid(format!("{name} is not a VRM model")))?;
    let m = ext.get("meta").cloned().unwrap_or(Value::Null);
    Ok(match version {
        VrmVersion::V1 => meta::v1(&m),
        VrmVersion::V0 => meta::v0(&m),
    })
}

/// The framing of the model at `path`, reading only the file's JSON part (the window's size).
pub fn framing_of(path: &Path) -> Result<Option<framing::Framing>> {
    let json = json_of(path)?;
    let (version, ext) = extension(&json)
        .ok_or_else(|| CoreError::invalid(format!("{} is not a VRM model", path.display())))?;
    Ok(framing::framing(&json, version, ext))
}

/// The VRM extension of a glTF document, and which VRM it is.
fn extension(json: &Value) -> Option<(VrmVersion, &Value)> {
    let ext = json.get("extensions")?;
    if let Some(v) = ext.get("VRMC_vrm").filter(|v| v.is_object()) {
        return Some((VrmVersion::V1, v));
    }
    ext.get("VRM")
        .filter(|v| v.is_object())
        .map(|v| (VrmVersion::V0, v))
}

/// The humanoid bones a model names (VRM 1.0: an object; 0.x: a list of `{bone, node}`).
fn bones(version: VrmVersion, ext: &Value) -> Vec<String> {
    match version {
        VrmVersion::V1 => ext
            .pointer("/humanoid/humanBones")
            .and_then(Value::as_object)
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default(),
        VrmVersion::V0 => ext
            .pointer("/humanoid/humanBones")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|b| b.get("bone").and_then(Value::as_str).map(String::from))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// Read and check a model: a GLB, with a VRM extension and a humanoid that has at least hips
/// and a head, textures that fit in memory. `label` names the file in the error sentence.
pub fn read(bytes: &[u8], label: &str) -> Result<(glb::Glb, Model)> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(CoreError::invalid(format!(
            "{label} is {}; a VRM model may be at most 100 MB",
            mb(bytes.len() as u64)
        )));
    }
    let glb = glb::parse(bytes).map_err(|e| {
        CoreError::invalid(format!("{label} is not a VRM model: {e}")).with_source(e)
    })?;
    let (version, ext) = extension(&glb.json).ok_or_else(|| {
        CoreError::invalid(format!(
            "{label} is a glTF model but not a VRM model (it has no VRM extension)"
        ))
    })?;
    let bones = bones(version, ext);
    if !["hips", "head"]
        .iter()
        .all(|b| bones.iter().any(|x| x == b))
    {
        return Err(CoreError::invalid(format!(
            "{label} is not a usable VRM model: its humanoid has no hips or no head bone"
        )));
    }
    let meta_json = ext.get("meta").cloned().unwrap_or(Value::Null);
    let meta = match version {
        VrmVersion::V1 => meta::v1(&meta_json),
        VrmVersion::V0 => meta::v0(&meta_json),
    };
    let expressions = expressions::list(version, ext);
    let textures = textures::measure(&glb)
        .map_err(|e| CoreError::invalid(format!("{label} {e}")).with_source(e))?;
    let model = Model {
        meta,
        expressions,
        bones: bones.len(),
        textures,
        bytes: bytes.len() as u64,
        framing: framing::framing(&glb.json, version, ext),
    };
    Ok((glb, model))
}

/// [`read`], then scale its textures down ([`textures::scale_down`]): the bytes to keep and
/// the model as kept (its `bytes` the new size).
pub fn prepare(bytes: &[u8], label: &str) -> Result<(Vec<u8>, Model)> {
    let (mut glb, mut model) = read(bytes, label)?;
    if model
        .textures
        .iter()
        .any(|t| t.width.max(t.height) > textures::MAX_TEXTURE_SIDE)
    {
        textures::scale_down(&mut glb, &mut model.textures)
            .map_err(|e| CoreError::invalid(format!("{label} {e}")).with_source(e))?;
        let out = glb::write(&glb);
        model.bytes = out.len() as u64;
        return Ok((out, model));
    }
    Ok((bytes.to_vec(), model))
}

/// What a window draws for the model at `path`, with the faces of `vocab`'s emotions.
pub fn look_of(path: &Path, vocab: &Vocab) -> Result<Look> {
    let bytes = read_file(path)?;
    let (_, model) = read(&bytes, &path.display().to_string())?;
    Ok(look_for(path, model, vocab))
}

/// The [`Look`] of an already read model.
pub fn look_for(path: &Path, model: Model, vocab: &Vocab) -> Look {
    let faces = vocab
        .emotions
        .iter()
        .map(|e| expressions::face_for(&e.id, &model.expressions))
        .collect();
    Look {
        file: path.display().to_string(),
        visemes: expressions::visemes(&model.expressions),
        blink: expressions::blink(&model.expressions),
        motions: motions::list(path),
        framing: model.framing,
        faces,
        meta: model.meta,
        expressions: model.expressions,
    }
}
