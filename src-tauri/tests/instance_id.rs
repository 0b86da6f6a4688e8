//! One instance per data dir (src-tauri/src/instance.rs): the D-Bus name stem is the same for a
//! folder in every version (a fixed hash, not std's), differs between folders, and is a valid bus
//! name. The handover itself is tested end to end (tests/e2e/single_instance.rs).

use std::path::Path;
use yui_app::instance::bus_id;

#[test]
fn the_bus_name_is_fixed_per_data_dir_and_valid() {
    // A folder that does not exist is hashed as written; this value must never change, or a
    // new YUI would not find the running older one on the same data.
    let id = bus_id(Path::new("/nonexistent/yui-data"));
    assert_eq!(id, "app.yui.desktop.d58c321d97bc7db7a");
    assert_ne!(id, bus_id(Path::new("/nonexistent/yui-data-2")));
    assert!(id.starts_with("app.yui.desktop.d"), "{id}");
    let name = format!("{id}.SingleInstance");
    assert!(name.len() <= 255);
    for element in name.split('.') {
        assert!(!element.is_empty());
        assert!(
            !element.starts_with(|c: char| c.is_ascii_digit()),
            "{element}"
        );
        assert!(element
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    }
    // The same folder reached through a symlink is the same instance.
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert_eq!(bus_id(&real), bus_id(&link));
}
