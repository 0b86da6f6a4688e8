//! Where a character's looks live: `<data dir>/looks/<preset id>/` (a card's picture, an
//! expression pack, a VRM model), and removing it with the character. Apart from `looks` so
//! `vrm` can keep its model there without the two importing each other.

use std::path::{Path, PathBuf};

/// `<data dir>/looks/<preset id>`.
pub fn dir_for(data_dir: &Path, preset_id: &str) -> PathBuf {
    data_dir.join("looks").join(preset_id)
}

/// Remove a preset's look folder (after the preset is deleted). A folder already gone is fine.
pub fn remove(data_dir: &Path, preset_id: &str) {
    let dir = dir_for(data_dir, preset_id);
    if let Err(e) = std::fs::remove_dir_all(&dir) {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!(dir = %dir.display(), "cannot remove a look folder: {e}");
        }
    }
}
