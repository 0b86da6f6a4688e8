//! Framing a VRM model (docs/vrm.md, "Framing"): the part of the model a character window
//! shows, the head and upper body, and the window's proportions that follow from it. Read from
//! the glTF document alone (no vertex is decoded): the humanoid bones' rest positions and the
//! meshes' bounds (a POSITION accessor's `min`/`max`, which glTF requires).
//!
//! - top: the highest point of the meshes (hair, ears, a hat), else a head's height above the
//!   head bone;
//! - bottom: below the chest, as far under it as the head bone is above it (0.9 of that);
//! - width: the wider of the shoulders with the arms hanging (1.6 × the upper arms' span) and
//!   the head (its height, hair included).
//!
//! The window keeps its height (the main character's or a pet's) and takes the width the
//! framing's proportions ask, within bounds that keep the speech bubble readable.

use super::meta::VrmVersion;
use serde::Serialize;
use serde_json::Value;

/// The drawn character's box (width / height) that the default window sizes are made for.
pub const DEFAULT_ASPECT: f64 = 200.0 / 240.0;
/// The narrowest and widest framing used (width / height).
pub const ASPECT_RANGE: (f64, f64) = (0.6, 1.1);

/// The head and upper body of a model at rest, in the model's metres (y up).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Framing {
    /// The highest point shown.
    pub top: f64,
    /// The lowest point shown.
    pub bottom: f64,
    /// The width shown.
    pub width: f64,
    /// `width / (top - bottom)`, within [`ASPECT_RANGE`]: the canvas's proportions.
    pub aspect: f64,
}

type Mat = [f64; 16]; // column-major, as glTF writes it

const IDENTITY: Mat = [
    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
];

fn mul(a: &Mat, b: &Mat) -> Mat {
    let mut m = [0.0; 16];
    for c in 0..4 {
        for r in 0..4 {
            m[c * 4 + r] = (0..4).map(|k| a[k * 4 + r] * b[c * 4 + k]).sum();
        }
    }
    m
}

fn nums<const N: usize>(v: Option<&Value>, default: [f64; N]) -> [f64; N] {
    let mut out = default;
    if let Some(a) = v.and_then(Value::as_array).filter(|a| a.len() == N) {
        for (o, x) in out.iter_mut().zip(a) {
            *o = x.as_f64().unwrap_or(*o);
        }
    }
    out
}

/// A node's local matrix: `matrix`, else translation × rotation × scale.
fn local(node: &Value) -> Mat {
    if node.get("matrix").is_some() {
        return nums(node.get("matrix"), IDENTITY);
    }
    let [tx, ty, tz] = nums(node.get("translation"), [0.0; 3]);
    let [x, y, z, w] = nums(node.get("rotation"), [0.0, 0.0, 0.0, 1.0]);
    let [sx, sy, sz] = nums(node.get("scale"), [1.0; 3]);
    [
        (1.0 - 2.0 * (y * y + z * z)) * sx,
        (2.0 * (x * y + z * w)) * sx,
        (2.0 * (x * z - y * w)) * sx,
        0.0,
        (2.0 * (x * y - z * w)) * sy,
        (1.0 - 2.0 * (x * x + z * z)) * sy,
        (2.0 * (y * z + x * w)) * sy,
        0.0,
        (2.0 * (x * z + y * w)) * sz,
        (2.0 * (y * z - x * w)) * sz,
        (1.0 - 2.0 * (x * x + y * y)) * sz,
        0.0,
        tx,
        ty,
        tz,
        1.0,
    ]
}

fn apply(m: &Mat, p: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|r| m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] + m[12 + r])
}

/// Every node's world matrix at rest (a node in a loop of a broken file keeps its local one).
fn world(json: &Value) -> Vec<Mat> {
    let nodes = json
        .get("nodes")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let children = |i: usize| -> Vec<usize> {
        nodes[i]
            .get("children")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c.as_u64().map(|c| c as usize))
            .filter(|&c| c < nodes.len())
            .collect()
    };
    let mut is_child = vec![false; nodes.len()];
    for i in 0..nodes.len() {
        for c in children(i) {
            is_child[c] = true;
        }
    }
    let mut out: Vec<Mat> = nodes.iter().map(local).collect();
    let mut seen = vec![false; nodes.len()];
    let mut stack: Vec<(usize, Mat)> = (0..nodes.len())
        .filter(|&i| !is_child[i])
        .map(|i| (i, IDENTITY))
        .collect();
    while let Some((i, above)) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        out[i] = mul(&above, &out[i]);
        stack.extend(children(i).into_iter().map(|c| (c, out[i])));
    }
    out
}

/// The highest point of the meshes at rest (a skinned mesh's vertices are in the model's space).
fn mesh_top(json: &Value, worlds: &[Mat]) -> Option<f64> {
    let accessors = json.get("accessors").and_then(Value::as_array)?;
    let meshes = json.get("meshes").and_then(Value::as_array)?;
    let mut top: Option<f64> = None;
    for (i, node) in json.get("nodes")?.as_array()?.iter().enumerate() {
        let Some(mesh) = node.get("mesh").and_then(Value::as_u64) else {
            continue;
        };
        let m = if node.get("skin").is_some() {
            IDENTITY
        } else {
            worlds.get(i).copied().unwrap_or(IDENTITY)
        };
        let prims = meshes
            .get(mesh as usize)
            .and_then(|m| m.get("primitives"))
            .and_then(Value::as_array);
        for p in prims.into_iter().flatten() {
            let Some(acc) = p
                .pointer("/attributes/POSITION")
                .and_then(Value::as_u64)
                .and_then(|a| accessors.get(a as usize))
            else {
                continue;
            };
            let (lo, hi) = (
                nums(acc.get("min"), [0.0; 3]),
                nums(acc.get("max"), [0.0; 3]),
            );
            if acc.get("min").is_none() || acc.get("max").is_none() {
                continue;
            }
            for k in 0..8 {
                let corner = [0, 1, 2].map(|a| if k >> a & 1 == 1 { hi[a] } else { lo[a] });
                let y = apply(&m, corner)[1];
                top = Some(top.map_or(y, |t: f64| t.max(y)));
            }
        }
    }
    top
}

/// The framing of a model from its glTF document and VRM extension; `None` when its humanoid
/// lacks the bones to frame by (hips and head).
pub fn framing(json: &Value, version: VrmVersion, ext: &Value) -> Option<Framing> {
    let worlds = world(json);
    let node_of = |bone: &str| -> Option<usize> {
        let n = match version {
            VrmVersion::V1 => ext.pointer(&format!("/humanoid/humanBones/{bone}/node"))?,
            VrmVersion::V0 => ext
                .pointer("/humanoid/humanBones")?
                .as_array()?
                .iter()
                .find(|b| b.get("bone").and_then(Value::as_str) == Some(bone))?
                .get("node")?,
        };
        n.as_u64().map(|n| n as usize).filter(|&n| n < worlds.len())
    };
    let at = |bone: &str| node_of(bone).map(|n| apply(&worlds[n], [0.0; 3]));
    let head = at("head")?;
    let hips = at("hips")?;
    // Sizes in proportion to the figure: 1.0 for hips 0.9 m high (VRoid Studio's proportions).
    let scale = if hips[1] > 0.2 { hips[1] / 0.9 } else { 1.0 };
    let chest = at("upperChest")
        .or_else(|| at("chest"))
        .or_else(|| at("spine"))
        .unwrap_or([head[0], head[1] - 0.35 * scale, head[2]]);
    let top = mesh_top(json, &worlds)
        .filter(|&t| t > head[1] && t < head[1] + 1.5 * scale)
        .unwrap_or(head[1] + 0.27 * scale);
    let reach = (head[1] - chest[1]).max(0.05 * scale);
    let bottom = chest[1] - reach * 0.9;
    let span = match (at("leftUpperArm"), at("rightUpperArm")) {
        (Some(l), Some(r)) => (l[0] - r[0]).abs(),
        _ => 0.3 * scale,
    };
    let width = (span * 1.6).max(top - head[1]);
    let tall = (top - bottom).max(1e-3);
    let aspect = (width / tall).clamp(ASPECT_RANGE.0, ASPECT_RANGE.1);
    Some(Framing {
        top,
        bottom,
        width,
        aspect,
    })
}

/// The window size (logical pixels) of a character drawn with a model framed `aspect`: the
/// height of `default` (the main character's or a pet's window), the width in proportion to
/// the framing (at most a fifth narrower or a third wider, so the bubble stays readable).
pub fn window_size(default: (f64, f64), aspect: f64) -> (f64, f64) {
    let ratio = (aspect / DEFAULT_ASPECT).clamp(0.8, 1.3);
    ((default.0 * ratio).round(), default.1)
}
