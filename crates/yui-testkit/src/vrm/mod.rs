//! A generator of small humanoid VRM models for tests: VRM 1.0 or 0.x, with any set of
//! expression presets (each a morph target of a simple face, so every expression and mouth
//! shape changes pixels), custom expressions, meta and licence, and optional embedded images.
//! No textures unless asked; a model with every preset is about 15 KB.
//!
//! The GLB is written here from the glTF 2.0 and VRM specifications, not with the code under
//! test. The figure: a head (a box with eyes and a mouth, all in one mesh with the morph
//! targets), a torso, arms; unlit vertex colours (KHR_materials_unlit), so pixels are the same
//! on every renderer.

mod ext;

pub use ext::glb;
use ext::{v0_extension, v1_extension};
use serde_json::{json, Value};

/// Which VRM to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V0,
}

/// Every VRM 1.0 expression preset (VRM 0.x gets its own names for them; `surprised`, which
/// 0.x lacks, becomes a custom group named "Surprised" as VRoid Studio writes it).
pub const ALL_PRESETS: &[&str] = &[
    "happy",
    "angry",
    "sad",
    "relaxed",
    "surprised",
    "aa",
    "ih",
    "ou",
    "ee",
    "oh",
    "blink",
    "blinkLeft",
    "blinkRight",
    "lookUp",
    "lookDown",
    "lookLeft",
    "lookRight",
    "neutral",
];

/// What to put in the model.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub version: Version,
    pub name: String,
    pub author: String,
    /// VRM 1.0 preset names to include.
    pub presets: Vec<&'static str>,
    /// Custom expressions, by name.
    pub custom: Vec<String>,
    /// Encoded images (PNG/JPEG) to embed as textures.
    pub images: Vec<Vec<u8>>,
    /// The `meta` to use instead of the default (a permissive licence).
    pub meta: Option<Value>,
}

impl Fixture {
    /// A model with every preset.
    pub fn full(version: Version) -> Self {
        Self {
            version,
            name: match version {
                Version::V1 => "Fixture One".into(),
                Version::V0 => "Fixture Zero".into(),
            },
            author: "YUI tests".into(),
            presets: ALL_PRESETS.to_vec(),
            custom: Vec::new(),
            images: Vec::new(),
            meta: None,
        }
    }

    /// A model with only these presets.
    pub fn with(version: Version, presets: &[&'static str]) -> Self {
        Self {
            presets: presets.to_vec(),
            ..Self::full(version)
        }
    }

    /// The `.vrm` file's bytes.
    pub fn build(&self) -> Vec<u8> {
        build(self)
    }
}

fn v0_name(preset: &str) -> Option<&'static str> {
    Some(match preset {
        "happy" => "joy",
        "angry" => "angry",
        "sad" => "sorrow",
        "relaxed" => "fun",
        "aa" => "a",
        "ih" => "i",
        "ou" => "u",
        "ee" => "e",
        "oh" => "o",
        "blink" => "blink",
        "blinkLeft" => "blink_l",
        "blinkRight" => "blink_r",
        "lookUp" => "lookup",
        "lookDown" => "lookdown",
        "lookLeft" => "lookleft",
        "lookRight" => "lookright",
        "neutral" => "neutral",
        _ => return None,
    })
}

// Face vertices (head space, VRM 1.0 facing +Z, the model's left at +X): 0..8 the head box,
// 8..12 the left eye, 12..16 the right eye, 16..20 the mouth (quads: bottom-left,
// bottom-right, top-right, top-left as seen from the front).
const SKIN: [f32; 3] = [1.0, 0.86, 0.76];
const EYE: [f32; 3] = [0.12, 0.1, 0.18];
const MOUTH: [f32; 3] = [0.78, 0.2, 0.3];
const CLOTH: [f32; 4] = [0.32, 0.46, 0.82, 1.0];

fn face_vertices() -> Vec<([f32; 3], [f32; 3])> {
    let mut v = Vec::new();
    for z in [-0.1f32, 0.1] {
        for y in [0.0f32, 0.22] {
            for x in [-0.1f32, 0.1] {
                v.push(([x, y, z], SKIN));
            }
        }
    }
    let quad = |x0: f32, x1: f32, y0: f32, y1: f32, c| {
        // Seen from the front (+Z) the viewer's left is the model's right (-X).
        vec![
            ([x1, y0, 0.101], c),
            ([x0, y0, 0.101], c),
            ([x0, y1, 0.101], c),
            ([x1, y1, 0.101], c),
        ]
    };
    v.extend(quad(0.025, 0.065, 0.12, 0.16, EYE));
    v.extend(quad(-0.065, -0.025, 0.12, 0.16, EYE));
    v.extend(quad(-0.03, 0.03, 0.05, 0.065, MOUTH));
    v
}

/// The morph target of an expression: a displacement per face vertex.
fn deltas(expression: &str) -> Vec<[f32; 3]> {
    let mut d = vec![[0f32; 3]; 20];
    let (le, re, m) = (8, 12, 16);
    let tops = |d: &mut Vec<[f32; 3]>, eye: usize, dy: f32| {
        d[eye + 2][1] += dy;
        d[eye + 3][1] += dy;
    };
    let bottoms = |d: &mut Vec<[f32; 3]>, eye: usize, dy: f32| {
        d[eye][1] += dy;
        d[eye + 1][1] += dy;
    };
    // The mouth: open = its bottom edge down, wide = its corners apart (+: wider).
    let mouth = |d: &mut Vec<[f32; 3]>, open: f32, wide: f32| {
        d[m][1] -= open;
        d[m + 1][1] -= open;
        for (i, s) in [(m, 1.0), (m + 1, -1.0), (m + 2, -1.0), (m + 3, 1.0)] {
            d[i][0] += s * wide;
        }
    };
    match expression {
        "neutral" => mouth(&mut d, 0.0, -0.005),
        "happy" => {
            bottoms(&mut d, le, 0.02);
            bottoms(&mut d, re, 0.02);
            mouth(&mut d, 0.012, 0.012);
        }
        "angry" => {
            d[le + 3][1] -= 0.028; // the left eye's inner top corner
            d[re + 2][1] -= 0.028;
            mouth(&mut d, 0.0, -0.012);
        }
        "sad" => {
            d[le + 2][1] -= 0.028; // outer corners
            d[re + 3][1] -= 0.028;
            mouth(&mut d, 0.004, -0.008);
        }
        "relaxed" => {
            tops(&mut d, le, -0.025);
            tops(&mut d, re, -0.025);
            mouth(&mut d, 0.006, 0.008);
        }
        "surprised" => {
            tops(&mut d, le, 0.015);
            tops(&mut d, re, 0.015);
            bottoms(&mut d, le, -0.01);
            bottoms(&mut d, re, -0.01);
            mouth(&mut d, 0.03, -0.015);
        }
        "aa" => mouth(&mut d, 0.045, 0.0),
        "ih" => mouth(&mut d, 0.012, 0.015),
        "ou" => mouth(&mut d, 0.025, -0.02),
        "ee" => mouth(&mut d, 0.016, 0.02),
        "oh" => mouth(&mut d, 0.035, -0.01),
        "blink" => {
            tops(&mut d, le, -0.04);
            tops(&mut d, re, -0.04);
        }
        "blinkLeft" => tops(&mut d, le, -0.04),
        "blinkRight" => tops(&mut d, re, -0.04),
        "lookUp" | "lookDown" | "lookLeft" | "lookRight" => {
            let (dx, dy) = match expression {
                "lookUp" => (0.0, 0.012),
                "lookDown" => (0.0, -0.012),
                "lookLeft" => (0.012, 0.0),
                _ => (-0.012, 0.0),
            };
            for v in &mut d[le..m] {
                v[0] += dx;
                v[1] += dy;
            }
        }
        // A custom expression: half-closed eyes and a small round mouth.
        _ => {
            tops(&mut d, le, -0.015);
            tops(&mut d, re, -0.015);
            mouth(&mut d, 0.02, -0.015);
        }
    }
    d
}

/// Printed as the short decimals they are, not as f32 widened to f64.
fn short(v: [f32; 3]) -> [f64; 3] {
    v.map(|x| (f64::from(x) * 1e4).round() / 1e4)
}

struct Bin {
    bytes: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Bin {
    fn view(&mut self, data: &[u8], target: Option<u32>) -> usize {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        let mut v = json!({"buffer": 0, "byteOffset": self.bytes.len(), "byteLength": data.len()});
        if let Some(t) = target {
            v["target"] = t.into();
        }
        self.bytes.extend_from_slice(data);
        self.views.push(v);
        self.views.len() - 1
    }

    fn vec3(&mut self, items: &[[f32; 3]], bounds: bool) -> usize {
        let data: Vec<u8> = items
            .iter()
            .flat_map(|p| p.iter().flat_map(|f| f.to_le_bytes()))
            .collect();
        let view = self.view(&data, Some(34962));
        let mut a = json!({"bufferView": view, "componentType": 5126, "count": items.len(), "type": "VEC3"});
        if bounds {
            let mut min = [f32::MAX; 3];
            let mut max = [f32::MIN; 3];
            for p in items {
                for k in 0..3 {
                    min[k] = min[k].min(p[k]);
                    max[k] = max[k].max(p[k]);
                }
            }
            a["min"] = json!(short(min));
            a["max"] = json!(short(max));
        }
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    fn indices(&mut self, items: &[u16]) -> usize {
        let data: Vec<u8> = items.iter().flat_map(|i| i.to_le_bytes()).collect();
        let view = self.view(&data, Some(34963));
        self.accessors.push(
            json!({"bufferView": view, "componentType": 5123, "count": items.len(), "type": "SCALAR"}),
        );
        self.accessors.len() - 1
    }
}

/// The 12 triangles of a box whose 8 corners are ordered z, y, x (as [`face_vertices`]).
const BOX: [u16; 36] = [
    4, 5, 7, 4, 7, 6, // front (+Z)
    1, 0, 2, 1, 2, 3, // back
    0, 4, 6, 0, 6, 2, // -X
    5, 1, 3, 5, 3, 7, // +X
    2, 6, 7, 2, 7, 3, // top
    0, 1, 5, 0, 5, 4, // bottom
];

fn build(f: &Fixture) -> Vec<u8> {
    // VRM 0.x faces -Z: mirror x and z.
    let flip = |p: [f32; 3]| match f.version {
        Version::V1 => p,
        Version::V0 => [-p[0], p[1], -p[2]],
    };
    let mut bin = Bin {
        bytes: Vec::new(),
        views: Vec::new(),
        accessors: Vec::new(),
    };
    let verts = face_vertices();
    let pos: Vec<[f32; 3]> = verts.iter().map(|(p, _)| flip(*p)).collect();
    let col: Vec<[f32; 3]> = verts.iter().map(|(_, c)| *c).collect();
    let face_pos = bin.vec3(&pos, true);
    let face_col = bin.vec3(&col, false);
    let mut tris: Vec<u16> = BOX.to_vec();
    for q in [8u16, 12, 16] {
        tris.extend_from_slice(&[q, q + 1, q + 2, q, q + 2, q + 3]);
    }
    let face_idx = bin.indices(&tris);
    let mut expressions: Vec<String> = f.presets.iter().map(|s| s.to_string()).collect();
    expressions.extend(f.custom.iter().cloned());
    let targets: Vec<Value> = expressions
        .iter()
        .map(|e| {
            let d: Vec<[f32; 3]> = deltas(e).into_iter().map(flip).collect();
            json!({"POSITION": bin.vec3(&d, true)})
        })
        .collect();
    let unit: Vec<[f32; 3]> = (0..8)
        .map(|i| {
            let c = |b: usize| if i & b == 0 { -0.5 } else { 0.5 };
            [c(1), c(2), c(4)]
        })
        .collect();
    let box_pos = bin.vec3(&unit, true);
    let box_idx = bin.indices(&BOX);
    let mut images = Vec::new();
    for img in &f.images {
        let view = bin.view(img, None);
        let mime = if img.starts_with(&[0xFF, 0xD8]) {
            "image/jpeg"
        } else {
            "image/png"
        };
        images.push(json!({"bufferView": view, "mimeType": mime}));
    }

    // Nodes: the bones, then the meshes' nodes under them.
    let s = |x: f32| match f.version {
        Version::V1 => x,
        Version::V0 => -x,
    };
    let bones: &[(&str, Option<&str>, [f32; 3])] = &[
        ("hips", None, [0.0, 0.9, 0.0]),
        ("spine", Some("hips"), [0.0, 0.1, 0.0]),
        ("chest", Some("spine"), [0.0, 0.1, 0.0]),
        ("upperChest", Some("chest"), [0.0, 0.1, 0.0]),
        ("neck", Some("upperChest"), [0.0, 0.15, 0.0]),
        ("head", Some("neck"), [0.0, 0.08, 0.0]),
        ("leftShoulder", Some("upperChest"), [s(0.05), 0.1, 0.0]),
        ("leftUpperArm", Some("leftShoulder"), [s(0.1), 0.0, 0.0]),
        ("leftLowerArm", Some("leftUpperArm"), [s(0.25), 0.0, 0.0]),
        ("leftHand", Some("leftLowerArm"), [s(0.22), 0.0, 0.0]),
        ("rightShoulder", Some("upperChest"), [s(-0.05), 0.1, 0.0]),
        ("rightUpperArm", Some("rightShoulder"), [s(-0.1), 0.0, 0.0]),
        ("rightLowerArm", Some("rightUpperArm"), [s(-0.25), 0.0, 0.0]),
        ("rightHand", Some("rightLowerArm"), [s(-0.22), 0.0, 0.0]),
        ("leftUpperLeg", Some("hips"), [s(0.09), -0.05, 0.0]),
        ("leftLowerLeg", Some("leftUpperLeg"), [0.0, -0.4, 0.0]),
        ("leftFoot", Some("leftLowerLeg"), [0.0, -0.4, 0.0]),
        ("rightUpperLeg", Some("hips"), [s(-0.09), -0.05, 0.0]),
        ("rightLowerLeg", Some("rightUpperLeg"), [0.0, -0.4, 0.0]),
        ("rightFoot", Some("rightLowerLeg"), [0.0, -0.4, 0.0]),
    ];
    let index = |name: &str| bones.iter().position(|b| b.0 == name).unwrap();
    let mut nodes: Vec<Value> = bones
        .iter()
        .map(|(name, _, t)| json!({"name": name, "translation": short(*t)}))
        .collect();
    let attach = |nodes: &mut Vec<Value>, parent: &str, node: Value| {
        nodes.push(node);
        let child = nodes.len() - 1;
        let p = &mut nodes[index(parent)];
        if p.get("children").is_none() {
            p["children"] = json!([]);
        }
        p["children"].as_array_mut().unwrap().push(child.into());
        child
    };
    for (name, parent, _) in bones {
        if let Some(p) = parent {
            let child = index(name);
            let node = &mut nodes[index(p)];
            if node.get("children").is_none() {
                node["children"] = json!([]);
            }
            node["children"].as_array_mut().unwrap().push(child.into());
        }
    }
    let face_node = attach(&mut nodes, "head", json!({"name": "Face", "mesh": 0}));
    let cloth =
        |t: [f32; 3], sc: [f32; 3]| json!({"mesh": 1, "translation": short(t), "scale": short(sc)});
    attach(
        &mut nodes,
        "chest",
        cloth([0.0, 0.05, 0.0], [0.3, 0.42, 0.18]),
    );
    for (bone, x) in [
        ("leftUpperArm", 0.125),
        ("leftLowerArm", 0.11),
        ("rightUpperArm", -0.125),
        ("rightLowerArm", -0.11),
    ] {
        attach(
            &mut nodes,
            bone,
            cloth([s(x), 0.0, 0.0], [0.24, 0.07, 0.07]),
        );
    }
    for (bone, y) in [("leftUpperLeg", -0.2), ("rightUpperLeg", -0.2)] {
        attach(&mut nodes, bone, cloth([0.0, y, 0.0], [0.09, 0.4, 0.09]));
    }

    let unlit = json!({"KHR_materials_unlit": {}});
    let mut json = json!({
        "asset": {"version": "2.0", "generator": "yui-testkit vrm fixture"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": nodes,
        "meshes": [
            {"name": "Face", "primitives": [{
                "attributes": {"POSITION": face_pos, "COLOR_0": face_col},
                "indices": face_idx, "material": 0, "targets": targets}],
             "weights": vec![0.0; expressions.len()],
             "extras": {"targetNames": expressions}},
            {"name": "Cloth", "primitives": [{
                "attributes": {"POSITION": box_pos}, "indices": box_idx, "material": 1}]}
        ],
        "materials": [
            {"name": "Skin", "doubleSided": true, "extensions": unlit.clone(),
             "pbrMetallicRoughness": {"baseColorFactor": [1.0, 1.0, 1.0, 1.0]}},
            {"name": "Cloth", "doubleSided": true, "extensions": unlit,
             "pbrMetallicRoughness": {"baseColorFactor": CLOTH}}
        ],
        "accessors": bin.accessors,
        "bufferViews": bin.views,
        "buffers": [{"byteLength": bin.bytes.len()}],
        "extensionsUsed": ["KHR_materials_unlit"],
    });
    if !images.is_empty() {
        let n = images.len();
        json["images"] = json!(images);
        json["samplers"] = json!([{}]);
        json["textures"] = json!((0..n)
            .map(|i| json!({"source": i, "sampler": 0}))
            .collect::<Vec<_>>());
    }
    let ext = match f.version {
        Version::V1 => v1_extension(f, &expressions, face_node, &index),
        Version::V0 => v0_extension(f, &expressions, &index),
    };
    let key = if f.version == Version::V1 {
        "VRMC_vrm"
    } else {
        "VRM"
    };
    json["extensions"] = json!({ key: ext });
    json["extensionsUsed"]
        .as_array_mut()
        .unwrap()
        .push(key.into());
    glb(&json, &bin.bytes)
}
