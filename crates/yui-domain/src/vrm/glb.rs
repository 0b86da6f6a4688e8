//! The glTF binary container a `.vrm` file is: a 12-byte header, a JSON chunk, an optional BIN
//! chunk (glTF 2.0 spec, "GLB File Format Specification"). Read into a JSON value and the bytes
//! of the one buffer, and written back the same way after textures were replaced.
//!
//! The JSON is kept as a `serde_json::Value` rather than a typed glTF document: VRM lives in
//! extensions a typed model would drop on the way back out, and import only reads a few fields.

use serde_json::Value;

const MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// A GLB file split into its JSON document and its binary buffer.
#[derive(Debug, Clone)]
pub struct Glb {
    pub json: Value,
    pub bin: Vec<u8>,
}

/// Why bytes are not a GLB file (shown to the user inside a sentence).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GlbError {
    #[error("it does not start like a glTF binary file")]
    NotGlb,
    #[error("it is glTF version {0}; VRM needs glTF 2")]
    Version(u32),
    #[error("it is cut short or its chunks do not add up")]
    Truncated,
    #[error("its JSON part cannot be read ({0})")]
    Json(String),
}

fn u32_at(bytes: &[u8], at: usize) -> Result<u32, GlbError> {
    let b = bytes.get(at..at + 4).ok_or(GlbError::Truncated)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Split `bytes` into the JSON document and the BIN chunk (empty when there is none).
pub fn parse(bytes: &[u8]) -> Result<Glb, GlbError> {
    if bytes.len() < 12 || &bytes[..4] != MAGIC {
        return Err(GlbError::NotGlb);
    }
    let version = u32_at(bytes, 4)?;
    if version != 2 {
        return Err(GlbError::Version(version));
    }
    let total = u32_at(bytes, 8)? as usize;
    if total > bytes.len() || total < 20 {
        return Err(GlbError::Truncated);
    }
    let bytes = &bytes[..total];
    let mut at = 12;
    let mut json = None;
    let mut bin = Vec::new();
    while at + 8 <= bytes.len() {
        let len = u32_at(bytes, at)? as usize;
        let kind = u32_at(bytes, at + 4)?;
        let data = bytes.get(at + 8..at + 8 + len).ok_or(GlbError::Truncated)?;
        match kind {
            CHUNK_JSON if json.is_none() => {
                let text = std::str::from_utf8(data).map_err(|e| GlbError::Json(e.to_string()))?;
                json = Some(
                    serde_json::from_str::<Value>(text.trim_end_matches(['\0', ' ']))
                        .map_err(|e| GlbError::Json(e.to_string()))?,
                );
            }
            CHUNK_BIN if json.is_some() && bin.is_empty() => bin = data.to_vec(),
            // Unknown chunks are skipped, as the spec asks.
            _ => {}
        }
        at += 8 + len;
    }
    let json = json.ok_or(GlbError::Truncated)?;
    if !json.is_object() {
        return Err(GlbError::Json("not a JSON object".into()));
    }
    Ok(Glb { json, bin })
}

/// Write a GLB file: the JSON padded with spaces and the BIN padded with zeros to 4 bytes.
pub fn write(glb: &Glb) -> Vec<u8> {
    let mut json = serde_json::to_vec(&glb.json).unwrap_or_default();
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    let mut bin = glb.bin.clone();
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let total = 12 + 8 + json.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(&json);
    if !bin.is_empty() {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.extend_from_slice(&bin);
    }
    out
}

/// The bytes of buffer view `index` of the GLB buffer, if it is one and in range.
pub fn view<'a>(json: &Value, bin: &'a [u8], index: usize) -> Option<&'a [u8]> {
    let v = json.get("bufferViews")?.get(index)?;
    if v.get("buffer").and_then(Value::as_u64).unwrap_or(0) != 0 {
        return None;
    }
    let offset = v.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
    let len = v.get("byteLength").and_then(Value::as_u64)? as usize;
    bin.get(offset..offset.checked_add(len)?)
}

/// Rebuild the buffer with some views' bytes replaced (`replace[i]`), every view 4-byte
/// aligned in its old order, and the offsets, lengths and the buffer's length updated.
/// Accessors keep their offsets inside their view, so nothing else changes.
pub fn rebuild(glb: &mut Glb, replace: &[(usize, Vec<u8>)]) -> Result<(), GlbError> {
    let count = glb
        .json
        .get("bufferViews")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let mut bin = Vec::with_capacity(glb.bin.len());
    let mut placed = Vec::with_capacity(count);
    for i in 0..count {
        let bytes = match replace.iter().find(|(v, _)| *v == i) {
            Some((_, b)) => b.as_slice(),
            None => view(&glb.json, &glb.bin, i).ok_or(GlbError::Truncated)?,
        };
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        placed.push((bin.len(), bytes.len()));
        bin.extend_from_slice(bytes);
    }
    if let Some(views) = glb
        .json
        .get_mut("bufferViews")
        .and_then(Value::as_array_mut)
    {
        for (v, (offset, len)) in views.iter_mut().zip(placed) {
            v["byteOffset"] = offset.into();
            v["byteLength"] = len.into();
        }
    }
    if let Some(buffer) = glb.json.get_mut("buffers").and_then(|b| b.get_mut(0)) {
        buffer["byteLength"] = bin.len().into();
    }
    glb.bin = bin;
    Ok(())
}
