//! Sprite sets: loading a folder of real PNG/WebP files into data URLs, with fallbacks, limits
//! and broken files named.

use serde_json::json;
use std::path::Path;
use yui_core::sprites::{self, load_sprite_set, MAX_FILE_BYTES};
use yui_core::vocab::Vocab;
use yui_core::ErrorCode;

fn write_png(path: &Path, rgb: [u8; 3]) {
    image::RgbaImage::from_pixel(8, 8, image::Rgba([rgb[0], rgb[1], rgb[2], 255]))
        .save_with_format(path, image::ImageFormat::Png)
        .unwrap();
}

fn write_webp(path: &Path) {
    image::RgbaImage::from_pixel(8, 8, image::Rgba([10, 200, 30, 255]))
        .save_with_format(path, image::ImageFormat::WebP)
        .unwrap();
}

fn skipped_reason<'a>(set: &'a sprites::SpriteSet, file: &str) -> Option<&'a str> {
    set.skipped
        .iter()
        .find(|s| s.file == file)
        .map(|s| s.reason.as_str())
}

#[test]
fn loads_emotions_and_motions_as_data_urls_and_lists_missing_emotions() {
    let dir = tempfile::tempdir().unwrap();
    write_png(&dir.path().join("happy.png"), [255, 0, 0]);
    write_webp(&dir.path().join("sad.webp"));
    write_webp(&dir.path().join("motion-wave.webp"));
    write_png(&dir.path().join("blush.png"), [0, 0, 255]); // an id the vocabulary lacks
    std::fs::write(dir.path().join("README.txt"), "my character").unwrap();

    let set = load_sprite_set(dir.path(), &Vocab::default()).unwrap();
    assert_eq!(
        set.emotions.keys().collect::<Vec<_>>(),
        vec!["happy", "sad"]
    );
    // An id the vocabulary lacks is named, not loaded: no cue can play it yet.
    assert_eq!(set.extra["blush"], "blush.png");
    let mut with_blush = Vocab::default();
    let mut blush = with_blush.emotions[0].clone();
    blush.id = "blush".into();
    with_blush.emotions.push(blush);
    let loaded = load_sprite_set(dir.path(), &with_blush).unwrap();
    assert!(loaded.emotions["blush"].starts_with("data:image/png;base64,"));
    assert!(loaded.extra.is_empty());
    assert!(set.emotions["happy"].starts_with("data:image/png;base64,iVBORw0KGgo"));
    assert!(set.emotions["sad"].starts_with("data:image/webp;base64,UklGR"));
    assert_eq!(set.motions.keys().collect::<Vec<_>>(), vec!["wave"]);
    assert!(set.motions["wave"].starts_with("data:image/webp;base64,"));
    assert_eq!(
        set.missing,
        vec!["neutral", "angry", "surprised", "shy", "sleepy", "thinking"]
    );
    assert!(set.skipped.is_empty(), "{:?}", set.skipped);
}

#[test]
fn broken_and_mislabelled_files_are_skipped_and_named() {
    let dir = tempfile::tempdir().unwrap();
    write_png(&dir.path().join("happy.png"), [255, 0, 0]);
    std::fs::write(dir.path().join("angry.png"), b"this is not a picture").unwrap();
    // A PNG named .webp.
    write_png(&dir.path().join("sad.webp"), [0, 0, 0]);
    // A PNG signature with nothing after it.
    std::fs::write(dir.path().join("shy.png"), b"\x89PNG\r\n\x1a\n").unwrap();

    let set = load_sprite_set(dir.path(), &Vocab::default()).unwrap();
    assert_eq!(set.emotions.keys().collect::<Vec<_>>(), vec!["happy"]);
    assert_eq!(skipped_reason(&set, "angry.png"), Some("not a PNG image"));
    assert_eq!(
        skipped_reason(&set, "sad.webp"),
        Some("the file is PNG, not WebP as its name says")
    );
    assert!(
        skipped_reason(&set, "shy.png").is_some_and(|r| r.starts_with("broken image")),
        "{:?}",
        set.skipped
    );
    // Falling back to the built-in face for each of them.
    for id in ["angry", "sad", "shy"] {
        assert!(set.missing.iter().any(|m| m == id), "{id} not missing");
    }
}

#[test]
fn files_over_4_mib_are_skipped_by_name_without_being_read() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("happy.png");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(MAX_FILE_BYTES + 1).unwrap();
    write_png(&dir.path().join("sad.png"), [1, 2, 3]);
    let set = load_sprite_set(dir.path(), &Vocab::default()).unwrap();
    assert_eq!(
        skipped_reason(&set, "happy.png"),
        Some("4194305 bytes, over the 4 MiB limit")
    );
    assert!(!set.emotions.contains_key("happy"));
    assert!(set.emotions.contains_key("sad"));
}

#[test]
fn only_regular_files_directly_in_the_folder_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write_png(&outside.path().join("secret.png"), [9, 9, 9]);
    std::fs::create_dir(dir.path().join("thinking.png")).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    write_png(&dir.path().join("sub").join("happy.png"), [1, 1, 1]);
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        outside.path().join("secret.png"),
        dir.path().join("sad.png"),
    )
    .unwrap();
    // Same id twice: the first name in order wins, the other is named.
    write_png(&dir.path().join("neutral.png"), [5, 5, 5]);
    write_webp(&dir.path().join("neutral.webp"));

    let set = load_sprite_set(dir.path(), &Vocab::default()).unwrap();
    // sleepy takes neutral's image when nothing closer is there (sprite_labels::STAND_INS).
    assert_eq!(
        set.emotions.keys().collect::<Vec<_>>(),
        vec!["neutral", "sleepy"]
    );
    assert_eq!(set.sources["sleepy"], "neutral.png");
    assert!(set.emotions["neutral"].starts_with("data:image/png"));
    assert_eq!(
        skipped_reason(&set, "thinking.png"),
        Some("not a regular file")
    );
    #[cfg(unix)]
    assert_eq!(skipped_reason(&set, "sad.png"), Some("not a regular file"));
    assert_eq!(
        skipped_reason(&set, "neutral.webp"),
        Some("another image already gives emotion neutral")
    );
}

#[test]
fn an_empty_folder_falls_back_entirely_and_a_missing_one_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let set = load_sprite_set(dir.path(), &Vocab::default()).unwrap();
    assert!(set.emotions.is_empty() && set.motions.is_empty());
    assert_eq!(set.missing.len(), 8);

    let e = load_sprite_set(&dir.path().join("nope"), &Vocab::default()).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
}

#[test]
fn avatar_kinds() {
    let dir = tempfile::tempdir().unwrap();
    write_png(&dir.path().join("happy.png"), [255, 0, 0]);
    let v = Vocab::default();
    assert_eq!(
        sprites::for_avatar(&json!({"kind": "builtin", "palette": "rose"}), &v).unwrap(),
        None
    );
    let set = sprites::for_avatar(
        &json!({"kind": "sprites", "dir": dir.path().to_str().unwrap()}),
        &v,
    )
    .unwrap()
    .unwrap();
    assert!(set.emotions.contains_key("happy"));
    let e =
        sprites::for_avatar(&json!({"kind": "sprites", "dir": "relative/dir"}), &v).unwrap_err();
    assert_eq!(
        e.message,
        "a sprite avatar needs \"dir\": an absolute folder path"
    );
}

#[test]
fn a_talk_image_is_the_open_mouth_for_lip_sync_not_an_extra_id() {
    let dir = tempfile::tempdir().unwrap();
    write_png(&dir.path().join("neutral.png"), [200, 200, 200]);
    write_png(&dir.path().join("talk.png"), [200, 0, 0]);
    let set = load_sprite_set(dir.path(), &Vocab::default()).unwrap();
    assert!(set
        .talk
        .as_deref()
        .is_some_and(|t| t.starts_with("data:image/png;base64,")));
    assert!(set.extra.is_empty(), "{:?}", set.extra);
    assert!(!set.emotions.contains_key("talk"));
    // Without one, the sprite stays as it is while speaking.
    let plain = tempfile::tempdir().unwrap();
    write_png(&plain.path().join("neutral.png"), [200, 200, 200]);
    assert!(load_sprite_set(plain.path(), &Vocab::default())
        .unwrap()
        .talk
        .is_none());
}
