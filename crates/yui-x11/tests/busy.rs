//! The fullscreen busy probe on a real X server (Xvfb with openbox): a real window going
//! fullscreen makes the manners hold a proactive turn ("held: fullscreen window"); leaving
//! fullscreen, or minimising it, lets it go.

mod support;

use std::sync::Arc;
use support::*;
use yui_core::manners::probes::{self, Busy, BusyProbes, NoProbes, WithDesktop};
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
