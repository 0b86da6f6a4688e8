//! VRM animation files (`.vrma`, the `VRMC_vrm_animation` glTF extension) that play a motion
//! of the vocabulary on a VRM character instead of its procedural one (docs/vrm.md, "Motions").
//! Read and checked here, before a file is kept: a glTF binary with the extension, tracks
//! that move the humanoid, an expression or the gaze, and a length a motion can have. The
//! renderer (three-vrm-animation) does the playing; the core only decides what may be played.

use super::glb;
use crate::error::{CoreError, Result};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// The largest `.vrma` file accepted (a minute of every humanoid bone at 60 keys a second is
/// about 6 MB).
pub const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;
/// A motion plays once and returns to rest: longer than this is not a motion.
pub const MAX_SECONDS: f64 = 60.0;

/// What a `.vrma` file holds, as read from it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Animation {
    /// How long it plays, in seconds (the last keyframe's time).
    pub seconds: f64,
    /// Humanoid bones it moves.
    pub bones: Vec<String>,
    /// Expressions it sets (presets and custom).
    pub expressions: Vec<String>,
    /// Whether it moves the gaze.
    pub look_at: bool,
    /// The file's size in bytes.
    pub bytes: u64,
}

fn mb(n: u64) -> String {
    format!("{:.1} MB", n as f64 / (1024.0 * 1024.0))
}

/// Read a `.vrma` file, refusing one over [`MAX_FILE_BYTES`] before reading it.
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    let name = path.display();
    let cannot =
        |e: std::io::Error| CoreError::not_found(format!("cannot read {name}: {e}")).with_source(e);
    let size = std::fs::metadata(path).map_err(cannot)?.len();
    if size > MAX_FILE_BYTES {
        return Err(CoreError::invalid(format!(
            "{name} is {}; a VRM animation may be at most 20 MB",
            mb(size)
        )));
    }
    std::fs::read(path).map_err(cannot)
}

/// Node indices named by an object of `{name: {"node": i}}` (the extension's bone, expression
/// maps), with their names.
fn named_nodes(map: Option<&Value>) -> Vec<(String, u64)> {
    map.and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.get("node")?.as_u64()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// Read and check an animation. `label` names the file in the error sentence.
pub fn read(bytes: &[u8], label: &str) -> Result<Animation> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(CoreError::invalid(format!(
            "{label} is {}; a VRM animation may be at most 20 MB",
            mb(bytes.len() as u64)
        )));
    }
    let glb = glb::parse(bytes).map_err(|e| {
        CoreError::invalid(format!("{label} is not a VRM animation: {e}")).with_source(e)
    })?;
    let json = &glb.json;
    let ext = json.get("extensions");
    if ext
        .and_then(|e| e.get("VRMC_vrm").or_else(|| e.get("VRM")))
        .is_some()
    {
        return Err(CoreError::invalid(format!(
            "{label} is a VRM model, not a VRM animation (.vrma)"
        )));
    }
    let Some(anim) = ext.and_then(|e| e.get("VRMC_vrm_animation")) else {
        return Err(CoreError::invalid(format!(
            "{label} is a glTF file but not a VRM animation (it has no VRMC_vrm_animation extension)"
        )));
    };
    let bones = named_nodes(anim.pointer("/humanoid/humanBones"));
    let mut expressions = named_nodes(anim.pointer("/expressions/preset"));
    expressions.extend(named_nodes(anim.pointer("/expressions/custom")));
    let look_at = anim.pointer("/lookAt/node").and_then(Value::as_u64);
    let accessors = json
        .get("accessors")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    // Which nodes the tracks move, and the last keyframe's time (an animation input accessor
    // must carry its `max`: glTF 2.0, "Animations").
    let mut moved = std::collections::BTreeSet::new();
    let mut seconds = 0.0f64;
    let broken = || {
        CoreError::invalid(format!(
            "{label} is not a usable VRM animation: its tracks point at data it does not have"
        ))
    };
    for a in json
        .get("animations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let samplers = a.get("samplers").and_then(Value::as_array);
        for c in a
            .get("channels")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(node) = c.pointer("/target/node").and_then(Value::as_u64) else {
                continue;
            };
            let sampler = c
                .get("sampler")
                .and_then(Value::as_u64)
                .and_then(|i| samplers?.get(i as usize))
                .ok_or_else(broken)?;
            let end = sampler
                .get("input")
                .and_then(Value::as_u64)
                .and_then(|i| accessors.get(i as usize))
                .and_then(|acc| acc.pointer("/max/0"))
                .and_then(Value::as_f64)
                .ok_or_else(broken)?;
            if !end.is_finite() || end < 0.0 {
                return Err(broken());
            }
            moved.insert(node);
            seconds = seconds.max(end);
        }
    }
    let keep = |list: Vec<(String, u64)>| -> Vec<String> {
        let mut v: Vec<String> = list
            .into_iter()
            .filter(|(_, n)| moved.contains(n))
            .map(|(k, _)| k)
            .collect();
        v.sort();
        v
    };
    let bones = keep(bones);
    let expressions = keep(expressions);
    let look_at = look_at.is_some_and(|n| moved.contains(&n));
    if (bones.is_empty() && expressions.is_empty() && !look_at) || seconds <= 0.0 {
        return Err(CoreError::invalid(format!(
            "{label} is a VRM animation with nothing to play (no track moves a bone, an expression or the eyes)"
        )));
    }
    if seconds > MAX_SECONDS {
        return Err(CoreError::invalid(format!(
            "{label} lasts {seconds:.1} s; a motion plays once and may last at most 60 s"
        )));
    }
    Ok(Animation {
        seconds,
        bones,
        expressions,
        look_at,
        bytes: bytes.len() as u64,
    })
}
