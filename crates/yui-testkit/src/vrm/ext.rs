//! The VRM extension of a generated model (VRM 1.0 `VRMC_vrm`, VRM 0.x `VRM`) and the GLB
//! container around it.

use super::{v0_name, Fixture};
use serde_json::{json, Value};

const BONES: [&str; 20] = [
    "hips",
    "spine",
    "chest",
    "upperChest",
    "neck",
    "head",
    "leftShoulder",
    "leftUpperArm",
    "leftLowerArm",
    "leftHand",
    "rightShoulder",
    "rightUpperArm",
    "rightLowerArm",
    "rightHand",
    "leftUpperLeg",
    "leftLowerLeg",
    "leftFoot",
    "rightUpperLeg",
    "rightLowerLeg",
    "rightFoot",
];

pub(super) fn v1_extension(
    f: &Fixture,
    expressions: &[String],
    face_node: usize,
    index: &dyn Fn(&str) -> usize,
) -> Value {
    let human: serde_json::Map<String, Value> = BONES
        .iter()
        .map(|b| (b.to_string(), json!({"node": index(b)})))
        .collect();
    let mut preset = serde_json::Map::new();
    let mut custom = serde_json::Map::new();
    for (i, e) in expressions.iter().enumerate() {
        let body = json!({"morphTargetBinds": [{"node": face_node, "index": i, "weight": 1.0}],
                          "isBinary": false});
        if f.presets.contains(&e.as_str()) {
            preset.insert(e.clone(), body);
        } else {
            custom.insert(e.clone(), body);
        }
    }
    let meta = f.meta.clone().unwrap_or_else(|| {
        json!({"name": f.name, "version": "1", "authors": [f.author],
               "licenseUrl": "https://vrm.dev/licenses/1.0/", "avatarPermission": "everyone",
               "commercialUsage": "corporation", "creditNotation": "unnecessary",
               "allowRedistribution": true, "modification": "allowModificationRedistribution"})
    });
    let range = json!({"inputMaxValue": 90.0, "outputScale": 1.0});
    json!({
        "specVersion": "1.0",
        "meta": meta,
        "humanoid": {"humanBones": human},
        "lookAt": {"type": "expression", "offsetFromHeadBone": [0.0, 0.14, 0.0],
                   "rangeMapHorizontalInner": range, "rangeMapHorizontalOuter": range,
                   "rangeMapVerticalDown": range, "rangeMapVerticalUp": range},
        "expressions": {"preset": preset, "custom": custom},
    })
}

pub(super) fn v0_extension(
    f: &Fixture,
    expressions: &[String],
    index: &dyn Fn(&str) -> usize,
) -> Value {
    let human: Vec<Value> = BONES
        .iter()
        .map(|b| json!({"bone": b, "node": index(b), "useDefaultValues": true}))
        .collect();
    let groups: Vec<Value> = expressions
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (name, preset) = match v0_name(e) {
                Some(p) if f.presets.contains(&e.as_str()) => {
                    let mut n = p.to_string();
                    n[..1].make_ascii_uppercase();
                    (n, p)
                }
                // `surprised` and custom names: VRoid Studio's "unknown" groups.
                _ => {
                    let mut n = e.clone();
                    n[..1].make_ascii_uppercase();
                    (n, "unknown")
                }
            };
            json!({"name": name, "presetName": preset, "isBinary": false,
                   "binds": [{"mesh": 0, "index": i, "weight": 100}], "materialValues": []})
        })
        .collect();
    let meta = f.meta.clone().unwrap_or_else(|| {
        json!({"title": f.name, "version": "1", "author": f.author,
               "allowedUserName": "Everyone", "violentUssageName": "Disallow",
               "sexualUssageName": "Disallow", "commercialUssageName": "Allow",
               "licenseName": "CC0"})
    });
    let curve = json!({"curve": [0, 0, 0, 1, 1, 1, 1, 0], "xRange": 90, "yRange": 1});
    json!({
        "exporterVersion": "yui-testkit",
        "specVersion": "0.0",
        "meta": meta,
        "humanoid": {"humanBones": human},
        "firstPerson": {"firstPersonBone": index("head"), "firstPersonBoneOffset": {"x": 0, "y": 0.14, "z": 0},
                        "meshAnnotations": [], "lookAtTypeName": "BlendShape",
                        "lookAtHorizontalInner": curve, "lookAtHorizontalOuter": curve,
                        "lookAtVerticalDown": curve, "lookAtVerticalUp": curve},
        "blendShapeMaster": {"blendShapeGroups": groups},
        "secondaryAnimation": {"boneGroups": [], "colliderGroups": []},
        "materialProperties": [],
    })
}

/// A GLB container around `json` and `bin` (glTF 2.0, "GLB File Format Specification").
pub fn glb(json: &Value, bin: &[u8]) -> Vec<u8> {
    let mut j = serde_json::to_vec(json).unwrap();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let mut b = bin.to_vec();
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
    let total = 12 + 8 + j.len() + 8 + b.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&b);
    out
}
