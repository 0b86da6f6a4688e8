//! Sprite sets: a user character drawn from image files instead of the built-in SVG character.
//!
//! A preset whose avatar is `{"kind": "sprites", "dir": "/abs/path"}` uses the images in that one
//! folder (format in docs/sprites.md):
//! - `<emotion_id>.png` or `<emotion_id>.webp` — the face for that emotion (e.g. `happy.png`);
//! - `motion-<motion_id>.png` / `.webp` — optional, an (animated) image shown while the motion
//!   plays (e.g. `motion-wave.webp`);
//! - `talk.png` / `.webp` — optional, the open mouth shown while the character's voice is loud
//!   (lip sync; without it the sprite stays as it is while speaking).
//!
//! A file may also be named by SillyTavern's classifier labels (`joy.png`, `sadness.png`): each
//! emotion id takes its own file first, then the first stand-in of [`crate::sprite_labels`]'s
//! table; labels no id took load as extra ids. A look may carry a still picture (a card's
//! picture, `"picture": "/abs/file"`, or the whole look `{"kind": "picture", "file": …}`): it
//! shows for every emotion without its own image.
//!
//! Emotions without an image (and no picture) fall back to the built-in face (listed in
//! `missing`). The loader
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
/// The optional open-mouth image's id (`talk.png`), shown while the voice is loud.
pub const TALK: &str = "talk";
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
    /// The still picture shown for every emotion without its own image (a card's picture).
    pub picture: Option<String>,
    /// `talk.png` / `talk.webp`: shown while the character's voice has its mouth open (lip sync).
    pub talk: Option<String>,
    /// Emotion id → the file it came from (`happy` ← `joy.png`): what `yui vocab sprites` shows.
    pub sources: BTreeMap<String, String>,
    /// Extra ids: images for ids the vocabulary does not have (a pack's other labels, `blush`),
    /// id → file. Not loaded (no window can play them until the vocabulary has the id; saving
    /// the vocabulary makes the windows load their sprites again).
    pub extra: BTreeMap<String, String>,
    /// Emotion ids of the vocabulary with no image (the built-in face is shown for them).
    pub missing: Vec<String>,
    /// Files not loaded: too large, not a PNG/WebP, a duplicate id, not a regular file.
    pub skipped: Vec<Skipped>,
}

pub(crate) fn mime_for(ext: &str) -> Option<(&'static str, image::ImageFormat)> {
    match ext.to_ascii_lowercase().as_str() {
        "png" => Some(("image/png", image::ImageFormat::Png)),
        "webp" => Some(("image/webp", image::ImageFormat::WebP)),
        _ => None,
    }
}

/// Check that `bytes` really are an image of `format` (header and dimensions).
pub(crate) fn check_image(
    bytes: &[u8],
    format: image::ImageFormat,
) -> std::result::Result<(), String> {
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

/// An image file of a sprite folder that passed the checks.
#[derive(Debug, Clone)]
pub struct FolderImage {
    /// The file's name in the folder.
    pub file: String,
    /// Whether it is a motion image (`motion-<id>`), else an emotion (or label) image.
    pub motion: bool,
    /// The id (or SillyTavern label) its name gives.
    pub id: String,
    pub mime: &'static str,
    pub bytes: Vec<u8>,
}

impl FolderImage {
    fn data_url(&self) -> String {
        data_url(self.mime, &self.bytes)
    }
}

fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// The images of the folder `dir` that pass the checks (regular file, PNG/WebP as named, at
/// most [`MAX_FILE_BYTES`], within `max_total` bytes together, one per id), and the files
/// skipped.
pub fn read_folder(dir: &Path, max_total: u64) -> Result<(Vec<FolderImage>, Vec<Skipped>)> {
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

    let mut images: Vec<FolderImage> = Vec::new();
    let mut skipped = Vec::new();
    let mut total: u64 = 0;
    for (name, entry) in names {
        let mut skip = |reason: String| {
            skipped.push(Skipped {
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
                skip(format!("cannot read: {e}"));
                continue;
            }
        };
        if !meta.is_file() {
            skip("not a regular file".into());
            continue;
        }
        if meta.len() > MAX_FILE_BYTES {
            skip(format!("{} bytes, over the 4 MiB limit", meta.len()));
            continue;
        }
        let (motion, id) = match stem.strip_prefix(MOTION_PREFIX) {
            Some(id) => (true, id),
            None => (false, stem),
        };
        let kind = if motion { "motion" } else { "emotion" };
        if id.is_empty() {
            skip(format!("no {kind} id in the name"));
            continue;
        }
        if images.iter().any(|i| i.motion == motion && i.id == id) {
            skip(format!("another image already gives {kind} {id}"));
            continue;
        }
        if total + meta.len() > max_total {
            skip(format!(
                "the sprite set is over its {} MiB total",
                max_total / (1024 * 1024)
            ));
            continue;
        }
        let bytes = match std::fs::read(entry.path()) {
            Ok(b) => b,
            Err(e) => {
                skip(format!("cannot read: {e}"));
                continue;
            }
        };
        if bytes.len() as u64 > MAX_FILE_BYTES {
            // Grew between the size check and the read.
            skip(format!("{} bytes, over the 4 MiB limit", bytes.len()));
            continue;
        }
        if let Err(reason) = check_image(&bytes, format) {
            skip(reason);
            continue;
        }
        total += bytes.len() as u64;
        images.push(FolderImage {
            file: name.clone(),
            motion,
            id: id.to_string(),
            mime,
            bytes,
        });
    }
    for s in &skipped {
        tracing::warn!(dir = %dir.display(), file = %s.file, "sprite skipped: {}", s.reason);
    }
    Ok((images, skipped))
}

/// Load the sprite set in `dir`, mapping file names onto `vocab`'s emotions (own id first, then
/// SillyTavern's labels, [`crate::sprite_labels`]).
pub fn load_sprite_set(dir: &Path, vocab: &Vocab) -> Result<SpriteSet> {
    let (images, skipped) = read_folder(dir, MAX_TOTAL_BYTES)?;
    let mut set = SpriteSet {
        skipped,
        ..SpriteSet::default()
    };
    let by_id: BTreeMap<&str, &FolderImage> = images
        .iter()
        .filter(|i| !i.motion)
        .map(|i| (i.id.as_str(), i))
        .collect();
    let mut taken: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for e in &vocab.emotions {
        let found = crate::sprite_labels::candidates(&e.id)
            .into_iter()
            .find_map(|c| by_id.get(c).map(|i| (c, *i)));
        if let Some((label, image)) = found {
            taken.insert(label);
            set.emotions.insert(e.id.clone(), image.data_url());
            set.sources.insert(e.id.clone(), image.file.clone());
        }
    }
    // The labels no id took: extra ids, named but not loaded (a cue can name only the
    // vocabulary's ids; each image loaded costs every window that shows the character).
    if let Some(talk) = by_id.get(TALK).filter(|_| !taken.contains(TALK)) {
        set.talk = Some(talk.data_url());
        taken.insert(TALK);
    }
    for (id, image) in &by_id {
        if !taken.contains(id) && !set.emotions.contains_key(*id) {
            set.extra.insert(id.to_string(), image.file.clone());
        }
    }
    for image in images.iter().filter(|i| i.motion) {
        set.motions.insert(image.id.clone(), image.data_url());
    }
    set.missing = vocab
        .emotions
        .iter()
        .filter(|e| !set.emotions.contains_key(&e.id))
        .map(|e| e.id.clone())
        .collect();
    Ok(set)
}

/// A still picture (PNG or WebP, the same checks as a folder's images) as a `data:` URL.
pub(crate) fn load_picture(file: &Path) -> std::result::Result<String, String> {
    let ext = file
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    let (mime, format) = mime_for(ext).ok_or("not a .png or .webp file")?;
    let meta = std::fs::symlink_metadata(file).map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!("{} bytes, over the 4 MiB limit", meta.len()));
    }
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read: {e}"))?;
    check_image(&bytes, format)?;
    Ok(data_url(mime, &bytes))
}

fn abs_path<'a>(avatar: &'a Value, key: &str) -> Option<&'a Path> {
    avatar
        .get(key)
        .and_then(Value::as_str)
        .map(Path::new)
        .filter(|p| p.is_absolute())
}

/// The sprite set of a preset's avatar: `None` for the built-in character; the loaded set for
/// `{"kind": "sprites", "dir": "/abs/path"}` (with its optional `"picture"`), and a set of just
/// the picture for `{"kind": "picture", "file": "/abs/file"}`. A picture that cannot load is
/// named in `skipped`, never an error.
pub fn for_avatar(avatar: &Value, vocab: &Vocab) -> Result<Option<SpriteSet>> {
    let mut set = match avatar.get("kind").and_then(Value::as_str) {
        // A VRM look's images are its fallback's (shown when the model cannot be drawn).
        Some("vrm") => return for_avatar(avatar.get("fallback").unwrap_or(&Value::Null), vocab),
        Some("sprites") => {
            let dir = abs_path(avatar, "dir").ok_or_else(|| {
                CoreError::invalid("a sprite avatar needs \"dir\": an absolute folder path")
            })?;
            load_sprite_set(dir, vocab)?
        }
        Some("picture") => SpriteSet {
            missing: vocab.emotions.iter().map(|e| e.id.clone()).collect(),
            ..SpriteSet::default()
        },
        _ => return Ok(None),
    };
    let key = if avatar.get("kind").and_then(Value::as_str) == Some("picture") {
        "file"
    } else {
        "picture"
    };
    if let Some(raw) = avatar.get(key).and_then(Value::as_str) {
        let loaded = match abs_path(avatar, key) {
            Some(file) => load_picture(file),
            None => Err("the picture needs an absolute path".into()),
        };
        match loaded {
            Ok(url) => set.picture = Some(url),
            Err(reason) => {
                tracing::warn!(file = raw, "picture skipped: {reason}");
                set.skipped.push(Skipped {
                    file: raw.to_string(),
                    reason,
                });
            }
        }
    }
    Ok(Some(set))
}
