//! A model's textures at import: measured from their headers before anything is decoded (a
//! texture too big for memory refuses the model), and scaled down once to what a character
//! window can show, so every window that draws the model decodes and uploads less.

use super::glb::{self, Glb};
use serde::Serialize;
use serde_json::Value;

/// The longest side a texture keeps. A character window is about 300 px wide and shows the
/// head and upper body; at a device pixel ratio of 2 that is 600 device pixels, and a model's
/// texture atlas gives the face a quarter of its width or less, so 1024 keeps what the window
/// can show for the face while a VRoid export's 2048–4096 textures cost 4–16 times less.
pub const MAX_TEXTURE_SIDE: u32 = 1024;
/// The largest texture side decoded at all (a texture over it is refused, not scaled).
pub const MAX_DECODE_SIDE: u32 = 8192;
/// The most all textures may need in memory once decoded (RGBA), before scaling.
pub const MAX_DECODED_TOTAL: u64 = 1024 * 1024 * 1024;

/// One texture image of the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Texture {
    /// Its index in the glTF `images`.
    pub image: usize,
    pub width: u32,
    pub height: u32,
    /// The size it was scaled to at import, if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaled_to: Option<(u32, u32)>,
}

/// Why a model's textures refuse it (shown inside a sentence after the file's name).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TextureError {
    #[error("has a texture of {0}×{1} pixels, too big to load (at most {MAX_DECODE_SIDE} a side)")]
    TooLarge(u32, u32),
    #[error(
        "has textures that need {0} MB of memory once decoded, more than the 1024 MB YUI allows"
    )]
    TooMuch(u64),
    #[error("loads a texture or buffer from a file outside itself ({0}); only self-contained .vrm files can be used")]
    External(String),
    #[error("has a broken texture ({0})")]
    Broken(String),
}

/// The bytes of `images[i]` when it lives in the GLB buffer (a data: URI or an unknown format
/// is left as it is).
fn image_bytes<'a>(glb: &'a Glb, image: &Value) -> Result<Option<&'a [u8]>, TextureError> {
    if let Some(uri) = image.get("uri").and_then(Value::as_str) {
        if uri.starts_with("data:") {
            return Ok(None);
        }
        return Err(TextureError::External(uri.chars().take(80).collect()));
    }
    let Some(view) = image.get("bufferView").and_then(Value::as_u64) else {
        return Ok(None);
    };
    glb::view(&glb.json, &glb.bin, view as usize)
        .map(Some)
        .ok_or_else(|| TextureError::Broken("its data is outside the file".into()))
}

fn reader(bytes: &[u8]) -> Option<image::ImageReader<std::io::Cursor<&[u8]>>> {
    let r = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .ok()?;
    r.format().is_some().then_some(r)
}

/// Measure every texture from its header; refuse a model whose textures would not fit in
/// memory, or that reads files outside itself.
pub fn measure(glb: &Glb) -> Result<Vec<Texture>, TextureError> {
    if let Some(buffers) = glb.json.get("buffers").and_then(Value::as_array) {
        if let Some(uri) = buffers
            .iter()
            .filter_map(|b| b.get("uri").and_then(Value::as_str))
            .find(|u| !u.starts_with("data:"))
        {
            return Err(TextureError::External(uri.chars().take(80).collect()));
        }
    }
    let images = glb.json.get("images").and_then(Value::as_array);
    let mut out = Vec::new();
    let mut total: u64 = 0;
    for (i, image) in images.into_iter().flatten().enumerate() {
        let Some(bytes) = image_bytes(glb, image)? else {
            continue;
        };
        // A format the image crate does not know (KTX2, …) is the renderer's business.
        let Some(r) = reader(bytes) else { continue };
        let (w, h) = r
            .into_dimensions()
            .map_err(|e| TextureError::Broken(e.to_string()))?;
        if w > MAX_DECODE_SIDE || h > MAX_DECODE_SIDE {
            return Err(TextureError::TooLarge(w, h));
        }
        total += u64::from(w) * u64::from(h) * 4;
        out.push(Texture {
            image: i,
            width: w,
            height: h,
            scaled_to: None,
        });
    }
    if total > MAX_DECODED_TOTAL {
        return Err(TextureError::TooMuch(total / (1024 * 1024)));
    }
    Ok(out)
}

/// Scale every texture over [`MAX_TEXTURE_SIDE`] down to it (in proportion), re-encoded in its
/// own format (PNG keeps its alpha; JPEG stays JPEG), and rebuild the buffer around them.
pub fn scale_down(glb: &mut Glb, textures: &mut [Texture]) -> Result<(), TextureError> {
    let mut replace = Vec::new();
    for t in textures.iter_mut() {
        if t.width <= MAX_TEXTURE_SIDE && t.height <= MAX_TEXTURE_SIDE {
            continue;
        }
        let image = &glb.json["images"][t.image];
        let view = image.get("bufferView").and_then(Value::as_u64);
        let (Some(view), Ok(Some(bytes))) = (view, image_bytes(glb, image)) else {
            continue;
        };
        let Some(mut r) = reader(bytes) else { continue };
        let format = r.format();
        let mut limits = image::Limits::default();
        limits.max_image_width = Some(MAX_DECODE_SIDE);
        limits.max_image_height = Some(MAX_DECODE_SIDE);
        r.limits(limits);
        let img = r
            .decode()
            .map_err(|e| TextureError::Broken(e.to_string()))?;
        let small = img.resize(
            MAX_TEXTURE_SIDE,
            MAX_TEXTURE_SIDE,
            image::imageops::FilterType::CatmullRom,
        );
        let mut out = Vec::new();
        let (encoded, mime) = if format == Some(image::ImageFormat::Jpeg) {
            let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90);
            (
                image::DynamicImage::ImageRgb8(small.to_rgb8()).write_with_encoder(enc),
                "image/jpeg",
            )
        } else {
            let enc = image::codecs::png::PngEncoder::new(&mut out);
            (
                image::DynamicImage::ImageRgba8(small.to_rgba8()).write_with_encoder(enc),
                "image/png",
            )
        };
        encoded.map_err(|e| TextureError::Broken(e.to_string()))?;
        t.scaled_to = Some((small.width(), small.height()));
        glb.json["images"][t.image]["mimeType"] = mime.into();
        replace.push((view as usize, out));
    }
    if !replace.is_empty() {
        glb::rebuild(glb, &replace).map_err(|e| TextureError::Broken(e.to_string()))?;
    }
    Ok(())
}
