//! Screenshots of a run: the per-call folder the prelude writes into, its collection after the
//! run (last 4 files in file-name order, long edge ≤ 1280 px without upscaling, JPEG, data URLs),
//! and the start-up cleanup of folders a backstop-killed script may have recreated late.

use base64::Engine as _;
use fast_image_resize as fir;
use image::codecs::jpeg::JpegEncoder;
use image::{ImageReader, RgbImage};
use std::io::{self, Cursor};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Why an image could not be made into a data URL (the library's words, its error kept).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ImageError {
    /// The bytes are no image this reads.
    #[error("{0}")]
    Unreadable(#[source] Arc<image::ImageError>),
    /// Its format could not even be guessed.
    #[error("{0}")]
    Io(#[source] Arc<io::Error>),
    /// A pixel buffer that does not match the size it claims.
    #[error("the pixel buffer does not match its size")]
    BadBuffer,
    /// Resizing failed.
    #[error("{message}")]
    Resize {
        message: String,
        #[source]
        source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    },
    /// Encoding the JPEG failed.
    #[error("{0}")]
    Encode(#[source] Arc<image::ImageError>),
}

impl ImageError {
    fn resize(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Resize {
            message: e.to_string(),
            source: Some(Arc::new(e)),
        }
    }
}

/// Folder-name prefix; the start-up cleanup deletes every folder starting with it.
pub const FOLDER_PREFIX: &str = "yui-browser-";
/// Screenshots kept per call: the last ones in file-name order.
pub const MAX_SHOTS: usize = 4;
/// The long edge of a kept screenshot is at most this many pixels.
pub const MAX_EDGE: u32 = 1280;
/// JPEG quality of the attached screenshots.
pub const JPEG_QUALITY: u8 = 80;
/// A file bigger than this is not decoded (it is named as unreadable).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Creates the call's folder `yui-browser-<pid>-<nanos>-<counter>` under `temp_root` and returns
/// its absolute path.
pub fn create_folder(temp_root: &Path) -> io::Result<PathBuf> {
    // The wall clock only makes the name unique across processes; no logic reads it.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::path::absolute(temp_root)?
        .join(format!("{FOLDER_PREFIX}{}-{nanos}-{n}", std::process::id()));
    std::fs::create_dir(&dir)?;
    Ok(dir)
}

/// What a run's folder gave.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Shots {
    /// `data:image/jpeg;base64,…`, in file-name order.
    pub images: Vec<String>,
    /// Names of kept files that did not decode.
    pub unreadable: Vec<String>,
    /// Earlier files dropped by the cap of [`MAX_SHOTS`].
    pub dropped: usize,
}

impl Shots {
    /// The notes the result text carries (none when nothing was dropped or unreadable).
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.dropped > 0 {
            let s = if self.dropped == 1 { "" } else { "s" };
            notes.push(format!(
                "[yui] {} earlier screenshot{s} dropped: only the last {MAX_SHOTS} are attached",
                self.dropped
            ));
        }
        if !self.unreadable.is_empty() {
            notes.push(format!(
                "[yui] unreadable screenshot skipped: {}",
                self.unreadable.join(", ")
            ));
        }
        notes
    }
}

/// Reads the folder (file-name order, last [`MAX_SHOTS`] files), encodes them, then deletes the
/// folder. A folder that cannot be read gives no screenshots.
pub fn collect_and_remove(folder: &Path) -> Shots {
    let shots = collect(folder);
    if let Err(e) = std::fs::remove_dir_all(folder) {
        if e.kind() != io::ErrorKind::NotFound {
            tracing::warn!(folder = %folder.display(), error = %e, "screenshot folder not deleted");
        }
    }
    shots
}

/// Reads the folder without deleting it.
pub fn collect(folder: &Path) -> Shots {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Shots::default();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .collect();
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    let dropped = files.len().saturating_sub(MAX_SHOTS);
    let kept = &files[dropped..];
    let mut shots = Shots {
        dropped,
        ..Shots::default()
    };
    for (path, encoded) in kept.iter().zip(encode_files(kept)) {
        match encoded {
            Some(url) => shots.images.push(url),
            None => shots.unreadable.push(
                path.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            ),
        }
    }
    shots
}

/// Encodes files to JPEG data URLs, one thread per file (decode, resize and encode are CPU work
/// that parallelises cleanly). `None` for a file that does not read or decode.
pub fn encode_files(files: &[PathBuf]) -> Vec<Option<String>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = files
            .iter()
            .map(|p| s.spawn(move || encode_file(p)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect()
    })
}

fn encode_file(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    encode_bytes(&bytes).ok()
}

/// One image file's bytes → `data:image/jpeg;base64,…` (resized so the long edge is at most
/// [`MAX_EDGE`], never upscaled).
/// The error is a plain description (the file is then named as unreadable).
pub fn encode_bytes(bytes: &[u8]) -> Result<String, ImageError> {
    let img = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| ImageError::Io(Arc::new(e)))?
        .decode()
        .map_err(|e| ImageError::Unreadable(Arc::new(e)))?;
    let rgb = shrink(img.into_rgb8())?;
    let mut jpeg = Vec::with_capacity(256 * 1024);
    JpegEncoder::new_with_quality(&mut jpeg, JPEG_QUALITY)
        .encode_image(&rgb)
        .map_err(|e| ImageError::Encode(Arc::new(e)))?;
    let mut url = String::from("data:image/jpeg;base64,");
    base64::engine::general_purpose::STANDARD.encode_string(&jpeg, &mut url);
    Ok(url)
}

/// The size an image of `w`×`h` gets: long edge at most [`MAX_EDGE`], aspect kept, never larger.
pub fn target_size(w: u32, h: u32) -> (u32, u32) {
    let long = w.max(h);
    if long <= MAX_EDGE {
        return (w, h);
    }
    let scale = |v: u32| {
        let s = (u64::from(v) * u64::from(MAX_EDGE) + u64::from(long) / 2) / u64::from(long);
        u32::try_from(s).unwrap_or(MAX_EDGE).clamp(1, MAX_EDGE)
    };
    (scale(w), scale(h))
}

/// Resizes to [`target_size`] (the image itself when it already fits).
pub fn shrink(img: RgbImage) -> Result<RgbImage, ImageError> {
    let (w, h) = img.dimensions();
    let (tw, th) = target_size(w, h);
    if (tw, th) == (w, h) {
        return Ok(img);
    }
    // SIMD convolution (bilinear, support scaled to the ratio, so it anti-aliases): several times
    // faster than image's own resize; see docs/PERFORMANCE.md.
    fir::images::Image::from_vec_u8(w, h, img.into_raw(), fir::PixelType::U8x3)
        .map_err(ImageError::resize)
        .and_then(|src| {
            let mut dst = fir::images::Image::new(tw, th, fir::PixelType::U8x3);
            let options = fir::ResizeOptions::new()
                .resize_alg(fir::ResizeAlg::Convolution(fir::FilterType::Bilinear));
            fir::Resizer::new()
                .resize(&src, &mut dst, &options)
                .map_err(ImageError::resize)?;
            RgbImage::from_raw(tw, th, dst.into_vec()).ok_or(ImageError::BadBuffer)
        })
}

/// Deletes every leftover `yui-browser-*` folder in `temp_dir` (run at app start). Returns how
/// many were deleted.
pub fn cleanup_leftovers(temp_dir: &Path) -> io::Result<usize> {
    let mut removed = 0;
    for entry in std::fs::read_dir(temp_dir)?.filter_map(Result::ok) {
        let is_ours = entry
            .file_name()
            .to_string_lossy()
            .starts_with(FOLDER_PREFIX)
            && entry.file_type().is_ok_and(|t| t.is_dir());
        if is_ours {
            match std::fs::remove_dir_all(entry.path()) {
                Ok(()) => removed += 1,
                Err(e) => tracing::warn!(folder = %entry.path().display(), error = %e,
                    "leftover screenshot folder not deleted"),
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_size_caps_the_long_edge_without_upscaling() {
        assert_eq!(target_size(1920, 1080), (1280, 720));
        assert_eq!(target_size(1000, 2000), (640, 1280));
        assert_eq!(target_size(800, 600), (800, 600));
        assert_eq!(target_size(1280, 10), (1280, 10));
        assert_eq!(target_size(100_000, 1), (1280, 1));
    }
}
