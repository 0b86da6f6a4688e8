//! Looks kept in the data dir: a card's picture and an expression pack, copied at import into
//! `<data dir>/looks/<preset id>/` and scaled once to the character's size, so a window never
//! carries a card's megabytes as data URLs (docs/characters.md, "The card's picture").
//!
//! - `picture.png` — the card's picture (PNG card: the card itself; JSON card: its embedded or
//!   named avatar), scaled to fit [`LOOK_WIDTH`] × [`LOOK_HEIGHT`];
//! - `sprites/` — an expression pack: each emotion image scaled the same way (saved as PNG under
//!   its own name), motion images copied as they are (an animated image cannot be scaled
//!   without losing its frames).
//!
//! [`offer`] lists the looks a character can take (the built-in palettes, its card's picture,
//! its pack, a sprite folder it uses now): the settings window's look picker shows these.

use crate::cards::{self, PictureSource};
use crate::error::{CoreError, Result};
use crate::presets::{self, NewPreset, Preset, PresetUpdate, PALETTES};
use crate::sprites::{self, Skipped};
use crate::store::Store;
use serde::Serialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The look's box: the built-in character's drawing (viewBox 200 × 240), at least the main
/// window's character (200 px high). Larger images are scaled down to fit, in proportion.
pub const LOOK_WIDTH: u32 = 200;
pub const LOOK_HEIGHT: u32 = 240;
/// The card's picture in a look folder.
pub const PICTURE_FILE: &str = "picture.png";
/// The expression pack in a look folder.
pub const PACK_DIR: &str = "sprites";
/// The most a pack's files may weigh together at import (before scaling).
const IMPORT_MAX_TOTAL: u64 = 128 * 1024 * 1024;
/// The largest image decoded at import (pixels per side); a card is rarely over 2048.
const MAX_SIDE: u32 = 8192;

pub use crate::look_dir::{dir_for, remove};

/// Decode an image (PNG, JPEG or WebP), scale it to fit the look's box if larger, and encode it
/// as PNG. The error is a reason in plain words (a broken or oversized image).
pub fn scale(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| CoreError::invalid(format!("cannot read the image: {e}")).with_source(e))?;
    if reader.format().is_none() {
        return Err(CoreError::invalid("not a PNG, JPEG or WebP image"));
    }
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(512 * 1024 * 1024);
    reader.limits(limits);
    let img = reader
        .decode()
        .map_err(|e| CoreError::invalid(format!("broken image: {e}")).with_source(e))?;
    if img.width() == 0 || img.height() == 0 {
        return Err(CoreError::invalid("broken image: zero size"));
    }
    let img = if img.width() > LOOK_WIDTH || img.height() > LOOK_HEIGHT {
        img.resize(
            LOOK_WIDTH,
            LOOK_HEIGHT,
            image::imageops::FilterType::Lanczos3,
        )
    } else {
        img
    };
    let mut out = Vec::new();
    let encoder = image::codecs::png::PngEncoder::new_with_quality(
        &mut out,
        image::codecs::png::CompressionType::Best,
        image::codecs::png::FilterType::Adaptive,
    );
    image::DynamicImage::ImageRgba8(img.to_rgba8())
        .write_with_encoder(encoder)
        .map_err(|e| {
            CoreError::internal(format!("cannot encode the scaled image: {e}")).with_source(e)
        })?;
    Ok(out)
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> CoreError {
    CoreError::internal(format!("cannot {what} {}: {e}", path.display())).with_source(e)
}

/// Write `bytes` to `path` through a temporary file, so a reader never sees half a file.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(|e| io_err("write", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io_err("write", path, e))
}

/// Save an already scaled picture as the preset's card picture; returns its path.
pub fn save_picture(data_dir: &Path, preset_id: &str, png: &[u8]) -> Result<PathBuf> {
    let dir = dir_for(data_dir, preset_id);
    std::fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
    let path = dir.join(PICTURE_FILE);
    write_atomic(&path, png)?;
    Ok(path)
}

/// What [`import_pack`] copied.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PackImport {
    /// The pack's folder in the data dir.
    pub dir: PathBuf,
    /// Images copied (emotion and motion files).
    pub images: usize,
    /// Files not copied, and why (the sprite loader's rules: broken, oversized, not regular…).
    pub skipped: Vec<Skipped>,
}

/// Copy the sprite folder `src` into the preset's look folder: emotion images scaled to the
/// look's box, motion images as they are. Replaces a pack copied before. A folder with no image
/// that passes is an error (nothing is replaced).
pub fn import_pack(data_dir: &Path, preset_id: &str, src: &Path) -> Result<PackImport> {
    // The pack is scaled before any window sees it: its total limit is the scaled images', so
    // here only a bound on what import holds in memory at once (a full 28-image pack of 4 MiB
    // files fits).
    let (images, mut skipped) = sprites::read_folder(src, IMPORT_MAX_TOTAL)?;
    let look = dir_for(data_dir, preset_id);
    let staging = look.join("sprites.new");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|e| io_err("create", &staging, e))?;
    let mut copied = 0;
    for image in images {
        let (name, bytes) = if image.motion {
            (image.file.clone(), image.bytes)
        } else {
            match scale(&image.bytes) {
                Ok(png) => (format!("{}.png", image.id), png),
                Err(e) => {
                    skipped.push(Skipped {
                        file: image.file,
                        reason: e.message,
                    });
                    continue;
                }
            }
        };
        let path = staging.join(&name);
        std::fs::write(&path, bytes).map_err(|e| io_err("write", &path, e))?;
        copied += 1;
    }
    if copied == 0 {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(CoreError::invalid(format!(
            "the sprite folder {} has no PNG or WebP image YUI can use",
            src.display()
        )));
    }
    let dir = look.join(PACK_DIR);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&staging, &dir).map_err(|e| io_err("replace", &dir, e))?;
    Ok(PackImport {
        dir,
        images: copied,
        skipped,
    })
}

/// A look a character can take, for the look picker.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LookOption {
    /// `palette:<name>`, `picture`, `pack`, `folder` or `vrm`.
    pub id: String,
    pub label: String,
    /// `palette`, `picture`, `sprites` or `vrm`.
    pub kind: &'static str,
    /// The avatar value to save to take this look.
    pub avatar: Value,
    /// The palette drawn for the built-in face (palettes; the others fall back to it).
    pub palette: String,
    /// Whether the character has this look now.
    pub current: bool,
}

/// The looks a new character can take: the built-in palettes.
pub fn offer_new() -> Vec<LookOption> {
    palette_options(&Value::Null)
}

fn palette_options(now: &Value) -> Vec<LookOption> {
    PALETTES
        .iter()
        .map(|p| {
            let mut label = p.to_string();
            label[..1].make_ascii_uppercase();
            let avatar = json!({"kind": "builtin", "palette": p});
            LookOption {
                id: format!("palette:{p}"),
                label: format!("Built-in: {label}"),
                kind: "palette",
                current: &avatar == now,
                palette: p.to_string(),
                avatar,
            }
        })
        .collect()
}

/// The looks `preset` can take: the built-in palettes, its card's picture and its pack when the
/// data dir has them, and the sprite folder it uses now if that is another one.
pub fn offer(data_dir: &Path, preset: &Preset) -> Vec<LookOption> {
    let now = &preset.avatar;
    let palette = now
        .get("palette")
        .and_then(Value::as_str)
        .filter(|p| PALETTES.contains(p))
        .unwrap_or(PALETTES[0])
        .to_string();
    let option = |id: String, label: String, kind, avatar: Value| LookOption {
        current: &avatar == now,
        palette: avatar
            .get("palette")
            .and_then(Value::as_str)
            .unwrap_or(&palette)
            .to_string(),
        id,
        label,
        kind,
        avatar,
    };
    let mut out = palette_options(now);
    let look = dir_for(data_dir, &preset.id);
    let picture = look.join(PICTURE_FILE);
    let pack = look.join(PACK_DIR);
    let has_picture = picture.is_file();
    if has_picture {
        out.push(option(
            "picture".into(),
            "The card's picture".into(),
            "picture",
            json!({"kind": "picture", "file": picture}),
        ));
    }
    if pack.is_dir() {
        let mut avatar = json!({"kind": "sprites", "dir": pack});
        if has_picture {
            avatar["picture"] = json!(picture);
        }
        out.push(option(
            "pack".into(),
            "The card's expression pack".into(),
            "sprites",
            avatar,
        ));
    }
    let model = crate::vrm::look::file_for(data_dir, &preset.id);
    let vrm_now = now.get("kind").and_then(Value::as_str) == Some("vrm");
    if model.is_file() || vrm_now {
        let file = match now.get("file").and_then(Value::as_str) {
            Some(f) if vrm_now => PathBuf::from(f),
            _ => model,
        };
        let name =
            crate::vrm::meta_of(&file).map_or_else(|_| file.display().to_string(), |m| m.name);
        out.push(option(
            "vrm".into(),
            format!("VRM model: {name}"),
            "vrm",
            crate::vrm::look::avatar(&file, now),
        ));
    }
    if now.get("kind").and_then(Value::as_str) == Some("sprites") && !out.iter().any(|o| o.current)
    {
        let dir = now.get("dir").and_then(Value::as_str).unwrap_or_default();
        out.push(option(
            "folder".into(),
            format!("Sprite folder: {dir}"),
            "sprites",
            now.clone(),
        ));
    }
    out
}

/// A card import with its look.
pub struct CardImport<'a> {
    /// The card file's bytes.
    pub bytes: &'a [u8],
    /// Open the character's window at once.
    pub open: bool,
    /// The folder the card file is in, if known (the CLI): a picture the card names is read
    /// from there.
    pub card_dir: Option<&'a Path>,
    /// An expression pack to copy with it.
    pub sprites: Option<&'a Path>,
}

/// What an import made: the preset and what became of its look.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Imported {
    /// The preset's fields at the top level, as `yui preset add` prints them.
    #[serde(flatten)]
    pub preset: Preset,
    /// Whether the card's picture was kept (the character's look is that picture).
    pub picture: bool,
    /// The expression pack copied, if any.
    pub pack: Option<PackImport>,
    /// Why the picture or the pack was not kept, in plain words (the character is still made).
    pub notes: Vec<String>,
}

/// The folder a card's expression pack usually sits in: beside the card, named as the card file
/// (SillyTavern's `characters/<name>.png` and `characters/<name>/`) or as the character.
pub fn pack_beside(card_file: &Path, name: &str) -> Option<PathBuf> {
    let parent = card_file.parent()?;
    let stem = card_file.file_stem()?.to_str()?;
    [stem, name]
        .into_iter()
        .map(|n| parent.join(n))
        .find(|d| d.is_dir())
}

/// Import a card as a new character with its look: the card's picture (scaled, copied into the
/// data dir) and, if given, an expression pack. A picture or pack that cannot be used is a note,
/// not an error: the character is made with a built-in palette. A card that cannot be read
/// creates nothing.
pub fn import_card(store: &Store, data_dir: &Path, import: &CardImport<'_>) -> Result<Imported> {
    let card = cards::parse(import.bytes)?;
    let mut notes = Vec::new();
    let picture = match cards::picture_of(import.bytes) {
        None => None,
        Some(PictureSource::Bytes(b)) => Some(b),
        Some(PictureSource::File(name)) => match import.card_dir {
            Some(dir) => match std::fs::read(dir.join(&name)) {
                Ok(b) => Some(b),
                Err(e) => {
                    notes.push(format!("the card's picture {name} cannot be read: {e}"));
                    None
                }
            },
            None => {
                notes.push(format!(
                    "the card names its picture {name}; import it with `yui preset import` from its folder to keep it"
                ));
                None
            }
        },
    };
    let picture = picture.and_then(|b| match scale(&b) {
        Ok(png) => Some(png),
        Err(e) => {
            notes.push(format!("the card's picture is not used: {}", e.message));
            None
        }
    });
    let preset = presets::create(
        store,
        &NewPreset {
            name: card.name.clone(),
            persona: Some(cards::persona(&card)),
            avatar: None,
            voice: None,
            open: import.open,
        },
    )?;
    // A folder left by a deleted character of the same id is not this one's.
    remove(data_dir, &preset.id);
    let mut avatar = None;
    let mut picture_path = None;
    if let Some(png) = picture {
        match save_picture(data_dir, &preset.id, &png) {
            Ok(path) => {
                avatar = Some(json!({"kind": "picture", "file": path}));
                picture_path = Some(path);
            }
            Err(e) => notes.push(format!("the card's picture is not kept: {}", e.message)),
        }
    }
    let mut pack = None;
    if let Some(src) = import.sprites {
        match import_pack(data_dir, &preset.id, src) {
            Ok(p) => {
                let mut a = json!({"kind": "sprites", "dir": p.dir});
                if let Some(pic) = &picture_path {
                    a["picture"] = json!(pic);
                }
                avatar = Some(a);
                pack = Some(p);
            }
            Err(e) => notes.push(format!("the expression pack is not used: {}", e.message)),
        }
    }
    let preset = match avatar {
        Some(avatar) => presets::update(
            store,
            &preset.id,
            &PresetUpdate {
                avatar: Some(avatar),
                ..PresetUpdate::default()
            },
        )?,
        None => preset,
    };
    Ok(Imported {
        picture: picture_path.is_some(),
        preset,
        pack,
        notes,
    })
}

/// Import a card the settings page read as base64 bytes, opened on the desktop at once. The
/// webview gives no file path, so a picture the card names by file (and a pack beside it) is for
/// `yui preset import`; the result's notes say so.
pub fn import_card_base64(store: &Store, data_dir: &Path, data: &str) -> Result<Imported> {
    let bytes = crate::cards::decode_base64(data)?;
    import_card(
        store,
        data_dir,
        &CardImport {
            bytes: &bytes,
            open: true,
            card_dir: None,
            sprites: None,
        },
    )
}

/// Delete preset `id` with its history (`presets::delete`) and its look folder.
pub fn delete_character(
    store: &Store,
    data_dir: &Path,
    id: &str,
) -> Result<crate::presets::Deleted> {
    let gone = crate::presets::delete(store, id)?;
    remove(data_dir, id);
    Ok(gone)
}

/// Copy a sprite folder (an expression pack) into preset `id`'s look, scaled, and make it the
/// character's look (over its card's picture, if it has one). Decoding and scaling a pack is
/// seconds of CPU: it runs off the async runtime's threads.
pub async fn use_folder(
    store: Store,
    data_dir: PathBuf,
    id: String,
    dir: String,
) -> Result<(crate::presets::Preset, PackImport)> {
    crate::presets::get(&store, &id)?;
    let pack = {
        let (data_dir, id) = (data_dir.clone(), id.clone());
        tokio::task::spawn_blocking(move || import_pack(&data_dir, &id, Path::new(dir.trim())))
            .await
            .map_err(|e| CoreError::internal(format!("copying the folder stopped: {e}")))??
    };
    let mut avatar = serde_json::json!({"kind": "sprites", "dir": pack.dir});
    let picture = dir_for(&data_dir, &id).join(PICTURE_FILE);
    if picture.is_file() {
        avatar["picture"] = serde_json::json!(picture);
    }
    let change = crate::presets::PresetUpdate {
        avatar: Some(avatar),
        ..crate::presets::PresetUpdate::default()
    };
    Ok((crate::presets::update(&store, &id, &change)?, pack))
}

/// The looks preset `id` can take ([`offer`]); without an id, a new character's ([`offer_new`]).
pub fn offer_for(store: &Store, data_dir: &Path, id: Option<&str>) -> Result<Vec<LookOption>> {
    match id {
        Some(id) => Ok(offer(data_dir, &presets::get(store, id)?)),
        None => Ok(offer_new()),
    }
}

/// The images of a look (checked first), as a character window would get them (`None` for a
/// built-in palette).
pub fn preview(store: &Store, avatar: &Value) -> Result<Option<sprites::SpriteSet>> {
    presets::check_avatar(avatar)?;
    sprites::for_avatar(avatar, &crate::vocab::load(store)?)
}
