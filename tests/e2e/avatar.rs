//! The body in the real app: a scripted backend calls `body_action sit_on_window`, and the main
//! window ends on the top edge of another app's real X window (and the tool answered `ok`).
//! Leaves a screenshot of the scene in `$YUI_E2E_SHOTS` (docs/img/avatar-sitting.png is one).

use super::{fake_backend, launch_showing, say_in_chat};
use serde_json::json;
use std::time::Duration;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::*;
use x11rb::wrapper::ConnectionExt as _;
use yui_core::avatar::geometry::SIT_SINK;
use yui_core::avatar::DesktopHost;
use yui_core::backend::Transport;
use yui_testkit::sse;

/// Another app's window: class Notes, title "todo.txt — Notes", at (200, 450).
fn open_perch() -> (x11rb::rust_connection::RustConnection, Window) {
    let (conn, screen) = x11rb::connect(None).expect("the e2e display");
    let root = conn.setup().roots[screen].root;
    let id = conn.generate_id().unwrap();
    conn.create_window(
        x11rb::COPY_DEPTH_FROM_PARENT,
        id,
        root,
        200,
        450,
        600,
        300,
        0,
        WindowClass::INPUT_OUTPUT,
        x11rb::COPY_FROM_PARENT,
        &CreateWindowAux::new().background_pixel(0x00f4_f1e8),
    )
    .unwrap();
    conn.change_property8(
        PropMode::REPLACE,
        id,
        AtomEnum::WM_CLASS,
        AtomEnum::STRING,
        b"notes\0Notes\0",
    )
    .unwrap();
    conn.change_property8(
        PropMode::REPLACE,
        id,
        AtomEnum::WM_NAME,
        AtomEnum::STRING,
        b"todo.txt - Notes",
    )
    .unwrap();
    let hints = [
        5u32, 200, 450, 600, 300, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    conn.change_property32(
        PropMode::REPLACE,
        id,
        AtomEnum::WM_NORMAL_HINTS,
        AtomEnum::WM_SIZE_HINTS,
        &hints,
    )
    .unwrap();
    conn.map_window(id).unwrap();
    conn.flush().unwrap();
    (conn, id)
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_model_sit_on_window_call_puts_the_main_window_on_that_windows_top_edge() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, _perch) = open_perch();
    let (srv, mut requests) = fake_backend::serve(|req| {
        let args = json!({"action": "sit_on_window", "app": "notes"}).to_string();
        let events = if req.n == 1 {
            vec![
                json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"body_action","arguments":args}}]},"finish_reason":null}]}),
                json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
            ]
        } else {
            vec![
                json!({"choices":[{"index":0,"delta":{"role":"assistant","content":"Comfy up here!"},"finish_reason":null}]}),
                json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
            ]
        };
        sse::chat_stream(&events)
    })
    .await;
    let base_url = srv.base_url.clone();
    super::seed(dir.path(), |st| {
        fake_backend::point_at(st, &base_url, Transport::ChatCompletions)
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    say_in_chat(&s, "#character [data-emotion]", "Sit on my notes").await;
    s.wait_script(
        "return document.getElementById('bubble').textContent === 'Comfy up here!'",
        Duration::from_secs(30),
    )
    .await
    .expect("the reply after the body_action round trip");

    let _first = requests.recv().await.expect("first request");
    let second = requests.recv().await.expect("round trip").body;
    let tool = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .expect("a tool message");
    assert_eq!(tool["content"], "ok");

    // Where the windows are, read from the X server.
    let host = yui_x11::X11Desktop::connect(None, None).unwrap();
    let desk = host.desktop().unwrap();
    let perch = desk
        .windows
        .iter()
        .find(|w| w.class == "Notes")
        .expect("the perch");
    let main = desk
        .windows
        .iter()
        .find(|w| w.title.starts_with("YUI"))
        .expect("the main window");
    assert_eq!(
        main.frame.bottom(),
        perch.frame.y + SIT_SINK,
        "main {:?} on perch {:?}",
        main.frame,
        perch.frame
    );
    assert!(main.frame.x >= perch.frame.x && main.frame.right() <= perch.frame.right());
    let state = s
        .exec(
            "return document.getElementById('stage').dataset.body",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(state, json!("sitting"));
    if let Some(dir) = std::env::var_os("YUI_E2E_SHOTS") {
        // For the picture: the chat closed (Escape) and the pointer away (no tooltip).
        let input = s.find("#chat-input").await.unwrap();
        s.send_keys(&input, "\u{E00C}").await.unwrap();
        let root = conn.setup().roots[0].root;
        conn.warp_pointer(x11rb::NONE, root, 0, 0, 0, 0, 5, 5)
            .unwrap();
        conn.flush().unwrap();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let out = std::path::Path::new(&dir).join("avatar-sitting.png");
        let ok = std::process::Command::new("import")
            .args(["-window", "root"])
            .arg(&out)
            .status()
            .is_ok_and(|st| st.success());
        assert!(ok, "screenshot to {}", out.display());
    }
    s.delete().await.ok();
}
