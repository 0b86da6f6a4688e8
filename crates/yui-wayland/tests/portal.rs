//! The layer-shell session's desktop host against the real portals on real headless sway, all
//! from Debian's packages: xdg-desktop-portal with its wlroots backend xdg-desktop-portal-wlr
//! (which takes the screenshot with grim, and needs PipeWire running for its ScreenCast half),
//! on a private session bus. `look at: screen` gets sway's own pixels through
//! `org.freedesktop.portal.Screenshot`; the push-to-talk shortcut is refused in one plain line,
//! since no wlroots backend offers `org.freedesktop.portal.GlobalShortcuts`.

mod support;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use yui_domain::avatar::{DesktopHost, HostError, Rect};
use yui_domain::display::layer_desktop::LayerShellDesktop;
use yui_domain::display::shortcuts::GlobalShortcut;
use yui_domain::display::shortcuts_portal::ShortcutsPortal;
use yui_domain::display::Output;
use yui_testkit::dbus::Bus;

/// The portal's processes, stopped on drop (before the bus and the compositor).
struct Portals(Vec<Child>);

impl Drop for Portals {
    fn drop(&mut self) {
        for c in self.0.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

const PROGRAMS: [&str; 3] = [
    "/usr/bin/pipewire",
    "/usr/libexec/xdg-desktop-portal-wlr",
    "/usr/libexec/xdg-desktop-portal",
];

/// PipeWire, the wlroots backend and the portal itself in sway's session on `bus`.
fn portals(sway: &support::Compositor, bus: &Bus, log: &std::path::Path) -> Portals {
    let mut running = Portals(Vec::new());
    for program in PROGRAMS {
        let name = program.rsplit('/').next().unwrap();
        let child = Command::new(program)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("XDG_RUNTIME_DIR", &sway.runtime_dir)
            .env("WAYLAND_DISPLAY", &sway.display)
            .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
            .env("XDG_CURRENT_DESKTOP", "sway")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log.join(format!("{name}.log"))).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("{program}: {e}"));
        running.0.push(child);
        // Each needs the one before it (the backend connects to PipeWire at start).
        std::thread::sleep(Duration::from_millis(500));
    }
    running
}

#[test]
fn on_sway_the_screen_comes_through_the_real_screenshot_portal_and_no_shortcut_portal_is_said() {
    if let Some(p) = PROGRAMS.iter().find(|p| !std::path::Path::new(p).exists()) {
        eprintln!("skipped: {p} is not installed (scripts/dev.sh installs xdg-desktop-portal-wlr)");
        return;
    }
    let Some(bus) = Bus::start() else { return };
    // A background of a colour nothing else has.
    let sway = support::sway(640, 480, "output * bg #c03020 solid_color");
    let logs = tempfile::tempdir().unwrap();
    let _portals = portals(&sway, &bus, logs.path());
    let outputs = [Output {
        name: "HEADLESS-1".into(),
        rect: Rect::new(0, 0, 640, 480),
        scale: 1,
    }];
    let mut host = LayerShellDesktop::new(&outputs);
    host.portal.address = Some(bus.address.clone());
    let monitor = host.desktop().unwrap().monitors[0].clone();
    assert_eq!((monitor.number, monitor.name.as_str()), (1, "HEADLESS-1"));
    // The portal may still be starting: asked again until it answers.
    let until = Instant::now() + Duration::from_secs(20);
    let shot = loop {
        match host.capture(Rect::new(100, 80, 64, 48)) {
            Ok(c) => break c,
            Err(e) if Instant::now() < until => {
                eprintln!("not yet: {e}");
                std::thread::sleep(Duration::from_millis(300));
            }
            Err(e) => {
                let log =
                    |n: &str| std::fs::read_to_string(logs.path().join(n)).unwrap_or_default();
                panic!(
                    "no screenshot through the portal: {e}\nportal:\n{}\nwlr:\n{}",
                    log("xdg-desktop-portal.log"),
                    log("xdg-desktop-portal-wlr.log")
                );
            }
        }
    };
    assert_eq!((shot.width, shot.height), (64, 48));
    let px = &shot.rgb[..3];
    let near = |a: u8, b: u8| a.abs_diff(b) <= 8;
    assert!(
        near(px[0], 0xc0) && near(px[1], 0x30) && near(px[2], 0x20),
        "sway's background, not {px:?}"
    );
    // The real portal has no GlobalShortcuts here (no wlroots backend offers it).
    let shortcuts = ShortcutsPortal::new(Some(bus.address.clone()));
    let e = shortcuts
        .take("Ctrl+Alt+Space", Arc::new(|_| {}))
        .unwrap_err();
    assert!(matches!(e, HostError::Unsupported(_)), "{e:?}");
    assert_eq!(
        e.to_string(),
        "this desktop offers no global shortcuts portal"
    );
}
