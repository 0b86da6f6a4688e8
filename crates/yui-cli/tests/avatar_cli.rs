//! `yui tool look` and `yui tool body_action` without the app, on the test's own Xvfb with
//! openbox and a real window (yui-testkit's, on a free display number).

use base64::Engine as _;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::*;
use x11rb::wrapper::ConnectionExt as _;
use yui_testkit::xserver::Desktop;

fn yui(data: &Path, display: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_yui"));
    c.arg("--data-dir").arg(data).args(args);
    c.env_remove("WAYLAND_DISPLAY")
        .env_remove("XDG_SESSION_TYPE");
    match display {
        Some(d) => c.env("DISPLAY", d),
        None => c.env_remove("DISPLAY"),
    };
    c.output().expect("run yui")
}

fn result(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn cli_look_sees_windows_and_screens_and_body_action_is_unsupported() {
    let desktop = Desktop::xvfb_of("1600x900x24");
    let d = desktop.display.clone();
    let (conn, screen) = x11rb::connect(Some(&d)).unwrap();
    let root = conn.setup().roots[screen].root;
    let win = conn.generate_id().unwrap();
    conn.create_window(
        x11rb::COPY_DEPTH_FROM_PARENT,
        win,
        root,
        100,
        200,
        500,
        300,
        0,
        WindowClass::INPUT_OUTPUT,
        x11rb::COPY_FROM_PARENT,
        &CreateWindowAux::new().background_pixel(0x0030_c030),
    )
    .unwrap();
    conn.change_property8(
        PropMode::REPLACE,
        win,
        AtomEnum::WM_CLASS,
        AtomEnum::STRING,
        b"notes\0Notes\0",
    )
    .unwrap();
    conn.change_property8(
        PropMode::REPLACE,
        win,
        AtomEnum::WM_NAME,
        AtomEnum::STRING,
        b"todo.txt",
    )
    .unwrap();
    // USPosition: openbox keeps the position we give.
    let hints = [
        5u32, 100, 200, 500, 300, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    conn.change_property32(
        PropMode::REPLACE,
        win,
        AtomEnum::WM_NORMAL_HINTS,
        AtomEnum::WM_SIZE_HINTS,
        &hints,
    )
    .unwrap();
    conn.map_window(win).unwrap();
    conn.flush().unwrap();

    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let args = |at: &str| format!(r#"{{"at":"{at}"}}"#);
    // Until openbox manages the window (a fixed wait was too short on a loaded machine, and 10 s
    // was once too short at load 10 on a fresh root: the loop ends as soon as it is there).
    let until = Instant::now() + Duration::from_secs(30);
    let perch: Value = loop {
        let out = result(&yui(
            data,
            Some(&d),
            &["tool", "look", "--args", &args("perch_targets")],
        ));
        let perch: Value = serde_json::from_str(out.as_str().unwrap()).unwrap();
        if perch["windows"].as_array().is_some_and(|w| !w.is_empty()) || Instant::now() > until {
            break perch;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(perch["supported"], true);
    let w = &perch["windows"][0];
    assert_eq!(
        (w["app"].clone(), w["title"].clone()),
        (json!("Notes"), json!("todo.txt"))
    );
    assert_eq!(
        (w["monitor"].clone(), w["visible"].clone()),
        (json!(1), json!(true))
    );

    // Screen: refused while the switch is off, an image once it is on.
    let off = result(&yui(
        data,
        Some(&d),
        &["tool", "look", "--args", &args("screen")],
    ));
    assert_eq!(off, json!("error: screen capture is off"));
    let set = yui(
        data,
        None,
        &["settings", "set", "yui.screen", r#"{"enabled":true}"#],
    );
    assert!(set.status.success());
    let shot = result(&yui(
        data,
        Some(&d),
        &["tool", "look", "--args", &args("screen")],
    ));
    assert_eq!(shot["text"], "screenshot of display 1");
    let url = shot["images"][0].as_str().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(url.strip_prefix("data:image/jpeg;base64,").unwrap())
        .unwrap();
    let img = image::load_from_memory(&bytes).unwrap().into_rgb8();
    assert_eq!(img.dimensions(), (1280, 720));
    // The window is in the picture (100..600 × 200..500 scaled by 0.8).
    let p = img.get_pixel(280, 280).0;
    assert!(p[1] > 0x90 && p[0] < 0x60, "the green window: {p:?}");
    let bad = result(&yui(
        data,
        Some(&d),
        &["tool", "look", "--args", r#"{"at":"screen","monitor":2}"#],
    ));
    assert_eq!(bad, json!("error: invalid field monitor"));

    // No body without the app; body prints the last state the app wrote.
    let act = result(&yui(
        data,
        Some(&d),
        &[
            "tool",
            "body_action",
            "--args",
            r#"{"action":"sit_on_window","app":"notes"}"#,
        ],
    ));
    assert_eq!(act, json!("unsupported"));
    let written = r#"{"state":"sitting","monitor":1,"x":10,"y":20,"window":{"app":"Notes","title":"todo.txt"}}"#;
    assert!(yui(data, None, &["settings", "set", "yui.body", written])
        .status
        .success());
    let body = result(&yui(
        data,
        Some(&d),
        &["tool", "look", "--args", &args("body")],
    ));
    let body: Value = serde_json::from_str(body.as_str().unwrap()).unwrap();
    assert_eq!(body["state"], "sitting");
    assert_eq!(body["window"]["app"], "Notes");
    assert_eq!(body["live"], false);
}

#[test]
fn cli_look_without_a_display_says_perch_targets_are_unsupported() {
    let dir = tempfile::tempdir().unwrap();
    let out = result(&yui(
        dir.path(),
        None,
        &["tool", "look", "--args", r#"{"at":"perch_targets"}"#],
    ));
    let v: Value = serde_json::from_str(out.as_str().unwrap()).unwrap();
    assert_eq!(
        (v["supported"].clone(), v["windows"].clone()),
        (json!(false), json!([]))
    );
    let out = result(&yui(
        dir.path(),
        None,
        &["tool", "body_action", "--args", r#"{"action":"stand"}"#],
    ));
    assert_eq!(out, json!("unsupported"));
}
