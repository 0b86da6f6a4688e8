//! Start with the desktop (`yui.autostart`): the switch writes and removes a real XDG autostart
//! entry in a temporary folder, the entry's Exec line follows the Desktop Entry rules, and the
//! start-up reconcile points a stale entry at the running program.

use serde_json::json;
use std::path::Path;
use yui_core::autostart::{self, Autostart};
use yui_core::{settings, ErrorCode, Store};

fn setup() -> (tempfile::TempDir, Store, Autostart) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("yui.sqlite3")).unwrap();
    let auto = Autostart::new(dir.path().join("config/autostart"), "/usr/bin/yui-app");
    (dir, store, auto)
}

#[test]
fn off_by_default_with_no_entry() {
    let (_d, store, auto) = setup();
    assert_eq!(
        settings::get(&store, autostart::KEY).unwrap(),
        json!({"enabled": false})
    );
    let s = auto.status(&store).unwrap();
    assert!(!s.enabled && !s.present);
    // Reconcile with the switch off writes nothing.
    auto.reconcile(&store).unwrap();
    assert!(!auto.entry_path().exists());
}

#[test]
fn switching_on_writes_the_entry_and_off_removes_it() {
    let (_d, store, auto) = setup();
    let on = auto.set(&store, true).unwrap();
    assert!(on.enabled && on.present);
    assert_eq!(on.entry, auto.entry_path());
    assert!(auto.entry_path().ends_with("config/autostart/yui.desktop"));
    let text = std::fs::read_to_string(auto.entry_path()).unwrap();
    assert!(text.starts_with("[Desktop Entry]\n"), "{text}");
    for line in [
        "Type=Application",
        "Name=YUI",
        "Exec=/usr/bin/yui-app",
        "X-GNOME-Autostart-enabled=true",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "{line:?} missing in {text}"
        );
    }
    assert_eq!(
        settings::get(&store, autostart::KEY).unwrap(),
        json!({"enabled": true})
    );
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(&auto.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("yui.desktop")]);

    let off = auto.set(&store, false).unwrap();
    assert!(!off.enabled && !off.present);
    assert!(!auto.entry_path().exists());
    // Off again: nothing to remove is not an error.
    auto.set(&store, false).unwrap();
}

#[test]
fn an_entry_that_cannot_be_written_leaves_the_switch_off() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("yui.sqlite3")).unwrap();
    // The autostart "folder" is a file: nothing can be created in it.
    let blocker = dir.path().join("autostart");
    std::fs::write(&blocker, "not a folder").unwrap();
    let auto = Autostart::new(&blocker, "/usr/bin/yui-app");
    let e = auto.set(&store, true).unwrap_err();
    assert_eq!(e.code, ErrorCode::Internal);
    assert!(
        e.message.contains("cannot create the autostart entry"),
        "{}",
        e.message
    );
    assert!(!autostart::enabled(&store).unwrap());
}

#[test]
fn reconcile_points_a_stale_entry_at_the_running_program_and_never_removes_one() {
    let (_d, store, auto) = setup();
    Autostart::new(&auto.dir, "/opt/old/yui-app")
        .set(&store, true)
        .unwrap();
    assert!(std::fs::read_to_string(auto.entry_path())
        .unwrap()
        .contains("Exec=/opt/old/yui-app\n"));
    auto.reconcile(&store).unwrap();
    assert!(std::fs::read_to_string(auto.entry_path())
        .unwrap()
        .contains("Exec=/usr/bin/yui-app\n"));
    // The entry deleted by hand while the switch is on comes back at the next start.
    std::fs::remove_file(auto.entry_path()).unwrap();
    assert!(auto.reconcile(&store).unwrap().present);
    // Another data dir with the switch off (a test run, `--data-dir`) leaves the entry alone.
    let other = tempfile::tempdir().unwrap();
    let other_store = Store::open(other.path().join("yui.sqlite3")).unwrap();
    let s = auto.reconcile(&other_store).unwrap();
    assert!(!s.enabled && s.present);
}

#[test]
fn the_key_is_typed() {
    let (_d, store, _auto) = setup();
    let e = settings::set(&store, autostart::KEY, &json!({"enabled": "yes"})).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert_eq!(e.message, "yui.autostart must be {\"enabled\": true|false}");
    assert!(settings::known(autostart::KEY).is_some());
}

#[test]
fn exec_lines_quote_and_escape_as_the_desktop_entry_spec_says() {
    assert_eq!(autostart::exec_arg("/usr/bin/yui-app"), "/usr/bin/yui-app");
    assert_eq!(
        autostart::exec_arg("/opt/100%/yui-app"),
        "/opt/100%%/yui-app"
    );
    assert_eq!(
        autostart::exec_arg("/home/a b/yui-app"),
        "\"/home/a b/yui-app\""
    );
    // `$` escaped inside the quotes, and that backslash doubled for the string type.
    assert_eq!(
        autostart::exec_arg("/home/$x/yui-app"),
        "\"/home/\\\\$x/yui-app\""
    );
    let text = autostart::entry_text(Path::new("/home/a b/yui-app"));
    assert!(text.contains("Exec=\"/home/a b/yui-app\"\n"), "{text}");
}
