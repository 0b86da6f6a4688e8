//! The body under XWayland on a real compositor (weston's headless backend with Xwayland, run as
//! a plain user): the X11 host connects to Xwayland and reads its monitor, `look at:
//! perch_targets` answers with the windows the X window manager lists (weston's publishes no
//! `_NET_CLIENT_LIST`, so none here; GNOME's Mutter and KWin list theirs), and `look at: screen`
//! is refused with the reason the model can pass on (an X11 capture would show only X11
//! windows), with nothing captured. No hang, no crash.

mod support;
#[path = "../../yui-wayland/tests/support/mod.rs"]
mod wl;

use serde_json::{json, Value};
use std::sync::Arc;
use support::*;
use yui_core::avatar::{Avatar, DesktopHost};
use yui_core::display::xwayland::{XwaylandDesktop, CAPTURE_REASON};
use yui_core::tools::avatar::LookTool;
use yui_core::tools::{ToolContext, ToolError};
use yui_core::turn::CancellationToken;
use yui_core::{settings, Store, WindowKind};
use yui_x11::X11Desktop;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_xwayland_perch_targets_answer_and_the_screen_is_refused_with_the_reason() {
    let _g = lock().await;
    let weston = wl::weston(1280, 720, true);
    weston.admit_caller_to_x();
    let x = weston.x_display.clone().unwrap();
    let (conn, _) = x11rb::connect(Some(&x)).expect("Xwayland admits the test");
    let conn = Arc::new(conn);
    let _w = TestWindow::open(
        &conn,
        "Alpha",
        "alpha notes",
        (100, 100, 500, 300),
        0x20c020,
        None,
    );
    let inner = X11Desktop::connect(Some(&x), Some(std::process::id())).unwrap();
    let mut xw = XwaylandDesktop::new(inner.clone());
    // No screenshot portal in this session (a bus nobody listens on).
    xw.portal.address = Some("unix:path=/nonexistent/yui-test-bus".into());
    let host: Arc<dyn DesktopHost> = Arc::new(xw);
    // The window is mapped and framed by weston's X window manager...
    assert!(
        eventually(|| host.desktop().is_ok_and(|d| d.monitors.len() == 1)).await,
        "{:?}",
        host.desktop()
    );
    let desk = host.desktop().unwrap();
    assert_eq!(desk.monitors[0].name, "XWAYLAND0");
    assert_eq!(
        (desk.monitors[0].rect.w, desk.monitors[0].rect.h),
        (1280, 720)
    );
    // ...which lists no clients (its _NET_SUPPORTED has no _NET_CLIENT_LIST): nothing to perch on.
    assert!(desk.windows.is_empty(), "{desk:?}");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("yui.db")).unwrap();
    settings::set_switch(&store, settings::SCREEN, true).unwrap();
    let avatar = Arc::new(Avatar::new(Some(host), None, Some(store.clone())));
    let ctx = ToolContext {
        store: store.clone(),
        clock: Arc::new(yui_core::clock::SystemClock),
        preset_id: "yui".into(),
        window: WindowKind::Main,
        turn_id: "t".into(),
        call: Default::default(),
    };
    let look = LookTool::shared(Some(avatar));
    let out = look
        .call(
            json!({"at": "perch_targets"}),
            &ctx,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let v: Value = serde_json::from_str(out.as_text()).unwrap();
    assert_eq!(v, json!({"supported": true, "windows": []}));
    let refused = look
        .call(json!({"at": "screen"}), &ctx, CancellationToken::new())
        .await;
    // No portal: the contract's word, and why, for the model to pass on.
    match refused {
        Err(e @ ToolError::Failed(_)) => {
            let e = e.to_string();
            assert!(
                e.starts_with(&format!("unsupported: {CAPTURE_REASON}: no session bus")),
                "{e}"
            )
        }
        other => panic!("{other:?}"),
    }
}
