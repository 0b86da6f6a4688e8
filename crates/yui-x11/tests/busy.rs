//! The fullscreen busy probe on a real X server (Xvfb with openbox): a real window going
//! fullscreen makes the manners hold a proactive turn ("held: fullscreen window"); leaving
//! fullscreen, or minimising it, lets it go.

mod support;

use std::sync::Arc;
use support::*;
use yui_core::manners::probes::{self, Busy, BusyProbes, NoProbes, WithDesktop};
use yui_testkit::xserver::wm_sync;
use yui_x11::X11Desktop;

const GREEN: u32 = 0x00_20_c0_20;

#[tokio::test]
async fn x11_a_fullscreen_window_is_busy_and_stops_being_when_it_leaves_fullscreen() {
    let _g = lock().await;
    let s = Session::xvfb();
    let conn = s.conn();
    let w = TestWindow::open(&conn, "Game", "game", (100, 100, 640, 480), GREEN, None);
    let host = X11Desktop::connect(Some(&s.display), Some(std::process::id())).unwrap();
    let probes = WithDesktop {
        desktop: host.clone(),
        rest: Arc::new(NoProbes),
    };
    let listed = || {
        yui_core::avatar::DesktopHost::desktop(host.as_ref())
            .map(|d| d.windows.iter().any(|w| w.class == "Game"))
            .unwrap_or(false)
    };
    assert!(eventually(listed).await, "the window is listed");
    assert!(!probes.fullscreen().unwrap());
    assert_eq!(probes::busy(&probes), None);
    w.fullscreen(true);
    assert!(
        eventually(|| probes.fullscreen().unwrap()).await,
        "fullscreen seen"
    );
    assert_eq!(probes::busy(&probes), Some(Busy::Fullscreen));
    w.fullscreen(false);
    assert!(
        eventually(|| !probes.fullscreen().unwrap()).await,
        "left fullscreen"
    );
    w.fullscreen(true);
    assert!(eventually(|| probes.fullscreen().unwrap()).await);
    w.minimize();
    assert!(
        eventually(|| !probes.fullscreen().unwrap()).await,
        "a minimised fullscreen window holds nothing"
    );
}

/// Awareness's active app on a real X server: the class of the window the window manager made
/// active (never its title); while one of YUI's own windows is active, the app the user was in
/// before; nothing before any other app was active.
#[tokio::test]
async fn x11_the_active_app_is_the_active_windows_class_and_yuis_own_window_keeps_the_one_before() {
    use yui_core::avatar::DesktopHost;
    let _g = lock().await;
    let s = Session::xvfb();
    let conn = s.conn();
    let own_pid = 4_000_001;
    let host = X11Desktop::connect(Some(&s.display), Some(own_pid)).unwrap();
    let own = TestWindow::open(
        &conn,
        "Yui-app",
        "Yui",
        (0, 0, 200, 200),
        GREEN,
        Some(own_pid),
    );
    let listed = |class: &'static str| {
        let host = host.clone();
        move || {
            host.desktop()
                .map(|d| d.windows.iter().any(|w| w.class == class))
                .unwrap_or(false)
        }
    };
    assert!(eventually(listed("Yui-app")).await);
    own.activate();
    assert!(
        eventually(|| host.active_app().unwrap().is_none()).await,
        "only YUI's own window was ever active: no app to tell"
    );
    let editor = TestWindow::open(
        &conn,
        "Gedit",
        "notes.txt — secret",
        (300, 0, 300, 200),
        GREEN,
        None,
    );
    let browser = TestWindow::open(
        &conn,
        "Firefox",
        "Bank — Mozilla Firefox",
        (300, 300, 300, 200),
        GREEN,
        None,
    );
    assert!(eventually(listed("Firefox")).await);
    editor.activate();
    assert!(
        eventually(|| host.active_app().unwrap().as_deref() == Some("Gedit")).await,
        "the editor is active: {:?}",
        host.active_app()
    );
    browser.activate();
    assert!(eventually(|| host.active_app().unwrap().as_deref() == Some("Firefox")).await);
    // openbox has acted on the editor's and the browser's focus events before YUI's turn.
    wm_sync(&conn);
    own.activate();
    // Give the window manager time to activate YUI's window, then it still says Firefox.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(host.active_app().unwrap().as_deref(), Some("Firefox"));
    browser.close();
    editor.activate();
    assert!(eventually(|| host.active_app().unwrap().as_deref() == Some("Gedit")).await);
}
