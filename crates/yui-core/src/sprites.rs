//! Sprite sets: a user character drawn from image files instead of the built-in SVG character.
//!
//! A preset whose avatar is `{"kind": "sprites", "dir": "/abs/path"}` uses the images in that one
//! folder (format in docs/sprites.md):
//! - `<emotion_id>.png` or `<emotion_id>.webp` — the face for that emotion (e.g. `happy.png`);
//! - `motion-<motion_id>.png` / `.webp` — optional, an (animated) image shown while the motion
//!   plays (e.g. `motion-wave.webp`).
//!
//! Emotions without an image fall back to the built-in face (listed in `missing`). The loader
//! reads only regular files directly in the folder (no subfolders, no symbolic links), checks
//! each is really a PNG/WebP, skips files over [`MAX_FILE_BYTES`] and stops at
//! [`MAX_TOTAL_BYTES`], naming every skipped file with the reason. The images travel to the
//! window as `data:` URLs (the app's CSP allows `img-src data:`), so the webview never gets file
//! access.

use crate::error::{CoreError, Result};
use crate::vocab::Vocab;
use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Largest image file loaded (4 MiB).
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Largest sprite set, all images together (32 MiB): it crosses IPC in one message.
pub const MAX_TOTAL_BYTES: u64 = 32 * 1024 * 1024;
/// Prefix of a motion image's file name.
pub const MOTION_PREFIX: &str = "motion-";

/// A file of the folder that was not loaded, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub file: String,
    pub reason: String,
}

/// A loaded sprite set: id → `data:` URL.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SpriteSet {
    pub emotions: BTreeMap<String, String>,
    pub motions: BTreeMap<String, String>,
    /// Emotion ids of the vocabulary with no image (the built-in face is shown for them).
    pub missing: Vec<String>,
    /// Files not loaded: too large, not a PNG/WebP, a duplicate id, not a regular file.
    pub skipped: Vec<Skipped>,
}

fn mime_for(ext: &str) -> Option<(&'static str, image::ImageFormat)> {
    match ext.to_ascii_lowercase().as_str() {
        "png" => Some(("image/png", image::ImageFormat::Png)),
        "webp" => Some(("image/webp", image::ImageFormat::WebP)),
        _ => None,
    }
}

/// Check that `bytes` really are an image of `format` (header and dimensions).
fn check_image(bytes: &[u8], format: image::ImageFormat) -> std::result::Result<(), String> {
    let reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| e.to_string())?;
    let name = |f: image::ImageFormat| match f {
        image::ImageFormat::Png => "PNG".to_string(),
        image::ImageFormat::WebP => "WebP".to_string(),
        other => format!("{other:?}"),
    };
    match reader.format() {
        Some(f) if f == format => {}
        Some(f) => {
            return Err(format!(
                "the file is {}, not {} as its name says",
                name(f),
                name(format)
            ))
        }
        None => return Err(format!("not a {} image", name(format))),
    }
    let (w, h) = reader
        .into_dimensions()
        .map_err(|e| format!("broken image: {e}"))?;
    if w == 0 || h == 0 {
        return Err("broken image: zero size".into());
    }
    Ok(())
}

/// Load the sprite set in `dir`, checking which of `vocab`'s emotions have an image.
pub fn load_sprite_set(dir: &Path, vocab: &Vocab) -> Result<SpriteSet> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        CoreError::not_found(format!(
            "sprite folder {} cannot be read: {e}",
            dir.display()
        ))
    })?;
    // Sorted, so which duplicate wins and which files exceed the total is stable.
    let mut names: Vec<(String, std::fs::DirEntry)> = entries
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e))
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));

    let mut set = SpriteSet::default();
    let mut total: u64 = 0;
    for (name, entry) in names {
        let skip = |set: &mut SpriteSet, reason: String| {
            set.skipped.push(Skipped {
                file: name.clone(),
                reason,
            })
        };
        let Some((stem, ext)) = name.rsplit_once('.') else {
            continue;
        };
        let Some((mime, format)) = mime_for(ext) else {
            continue; // not an image name: a README, a licence file…
        };
        // symlink_metadata: a link is not followed, so nothing outside the folder is read.
        let meta = match std::fs::symlink_metadata(entry.path()) {
            Ok(m) => m,
            Err(e) => {
                skip(&mut set, format!("cannot read: {e}"));
                continue;
            }
        };
        if !meta.is_file() {
            skip(&mut set, "not a regular file".into());
            continue;
        }
        if meta.len() > MAX_FILE_BYTES {
            skip(
                &mut set,
                format!("{} bytes, over the 4 MiB limit", meta.len()),
            );
            continue;
        }
        let (kind, id) = match stem.strip_prefix(MOTION_PREFIX) {
            Some(id) => ("motion", id),
            None => ("emotion", stem),
        };
        if id.is_empty() {
            skip(&mut set, format!("no {kind} id in the name"));
            continue;
        }
        let map = if kind == "motion" {
            &set.motions
        } else {
            &set.emotions
        };
        if map.contains_key(id) {
            skip(&mut set, format!("another image already gives {kind} {id}"));
            continue;
        }
        if total + meta.len() > MAX_TOTAL_BYTES {
            skip(&mut set, "the sprite set is over its 32 MiB total".into());
            continue;
        }
        let bytes = match std::fs::read(entry.path()) {
            Ok(b) => b,
            Err(e) => {
                skip(&mut set, format!("cannot read: {e}"));
                continue;
            }
        };
        if bytes.len() as u64 > MAX_FILE_BYTES {
            // Grew between the size check and the read.
            skip(
                &mut set,
                format!("{} bytes, over the 4 MiB limit", bytes.len()),
            );
            continue;
        }
        if let Err(reason) = check_image(&bytes, format) {
            skip(&mut set, reason);
            continue;
        }
        total += bytes.len() as u64;
        let url = format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&bytes)
        );
        let id = id.to_string();
        if kind == "motion" {
            set.motions.insert(id, url);
        } else {
            set.emotions.insert(id, url);
        }
    }
    set.missing = vocab
        .emotions
        .iter()
        .filter(|e| !set.emotions.contains_key(&e.id))
        .map(|e| e.id.clone())
        .collect();
    for s in &set.skipped {
        tracing::warn!(dir = %dir.display(), file = %s.file, "sprite skipped: {}", s.reason);
    }
    Ok(set)
}

/// The sprite set of a preset's avatar: `None` for the built-in character, the loaded set for
/// `{"kind": "sprites", "dir": "/abs/path"}`.
pub fn for_avatar(avatar: &Value, vocab: &Vocab) -> Result<Option<SpriteSet>> {
    if avatar.get("kind").and_then(Value::as_str) != Some("sprites") {
        return Ok(None);
    }
    let dir = avatar
        .get("dir")
        .and_then(Value::as_str)
        .filter(|d| Path::new(d).is_absolute())
        .ok_or_else(|| {
            CoreError::invalid("a sprite avatar needs \"dir\": an absolute folder path")
        })?;
    load_sprite_set(Path::new(dir), vocab).map(Some)
}
