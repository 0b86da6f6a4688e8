//! A display capture to the image `look at: screen` answers: long edge at most 1280 px (never
//! upscaled, SIMD resize), JPEG, `data:image/jpeg;base64,…`. In memory only: nothing is written
//! to disk.

use super::Capture;
use crate::images::{self as shots, ImageError};
use base64::Engine as _;
use image::codecs::jpeg::JpegEncoder;
use image::RgbImage;

/// JPEG quality of a screen capture.
pub const JPEG_QUALITY: u8 = 80;

/// Resize and encode a capture as a JPEG data URL.
pub fn to_data_url(cap: Capture) -> Result<String, ImageError> {
    let img = RgbImage::from_raw(cap.width, cap.height, cap.rgb).ok_or(ImageError::BadBuffer)?;
    let img = shots::shrink(img)?;
    let mut jpeg = Vec::with_capacity(256 * 1024);
    JpegEncoder::new_with_quality(&mut jpeg, JPEG_QUALITY)
        .encode_image(&img)
        .map_err(|e| ImageError::Encode(std::sync::Arc::new(e)))?;
    let mut url = String::from("data:image/jpeg;base64,");
    base64::engine::general_purpose::STANDARD.encode_string(&jpeg, &mut url);
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_hd_capture_becomes_a_1280_jpeg() {
        let cap = Capture {
            width: 1920,
            height: 1080,
            rgb: vec![90; 1920 * 1080 * 3],
        };
        let url = to_data_url(cap).unwrap();
        let b64 = url.strip_prefix("data:image/jpeg;base64,").unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        let img = image::load_from_memory(&bytes).unwrap();
        assert_eq!((img.width(), img.height()), (1280, 720));
    }

    #[test]
    fn a_short_buffer_is_an_error() {
        let cap = Capture {
            width: 10,
            height: 10,
            rgb: vec![0; 5],
        };
        assert!(to_data_url(cap).is_err());
    }
}
