//! The desktop as a layer-shell session shows it to YUI: the compositor's outputs, and no other
//! app's windows (Wayland shows a client none of the others'). The body moves between the
//! outputs' named spots and the user's own places; `sit_on_window` and `peek` find nothing to
//! sit on (`not_found`) and `look at: perch_targets` says why. The screen is captured through
//! the desktop's screenshot portal (`portal.rs`; xdg-desktop-portal-wlr serves it on wlroots
//! compositors); where none answers, the capture is refused with the reason.
//!
//! The outputs are the ones the compositor named at start (`display::decide`'s probe): nothing
//! is watched, so the host costs nothing while idle.

use super::Output;
use crate::avatar::{Capture, Desktop, DesktopHost, HostError, Monitor, Rect};

/// Why `look at: screen` cannot capture on the overlay layer, before the portal's own reason.
pub const CAPTURE_REASON: &str = "YUI's windows are on the Wayland compositor's overlay layer, \
where only the desktop's screenshot portal may capture the screen, and it could not take one";

/// What `look at: perch_targets` says on the overlay layer.
pub const PERCH_REASON: &str = "Wayland shows YUI no other app's windows: the body can move to \
the named spots of each display and to the user's places, not sit on or peek around windows";

/// The layer-shell session's desktop host.
pub struct LayerShellDesktop {
    monitors: Vec<Monitor>,
    changes: tokio::sync::watch::Sender<u64>,
    #[cfg(target_os = "linux")]
    pub portal: super::portal::ScreenshotPortal,
}

impl LayerShellDesktop {
    /// Over the compositor's `outputs` (numbered from 1 in its order), with the session bus's
    /// screenshot portal.
    pub fn new(outputs: &[Output]) -> Self {
        let monitors: Vec<Monitor> = outputs
            .iter()
            .enumerate()
            .map(|(i, o)| Monitor {
                number: i as u32 + 1,
                name: o.name.clone(),
                rect: o.rect,
                // No client learns the panels' exclusive zones; the overlay layer is above them.
                work_area: o.rect,
                primary: i == 0,
            })
            .collect();
        #[cfg(target_os = "linux")]
        let portal = super::portal::ScreenshotPortal {
            address: None,
            layout: bounds(&monitors),
        };
        Self {
            monitors,
            changes: tokio::sync::watch::channel(0).0,
            #[cfg(target_os = "linux")]
            portal,
        }
    }
}

/// The outputs' bounding box: what a screenshot of the whole layout shows.
fn bounds(monitors: &[Monitor]) -> Option<Rect> {
    let first = monitors.first()?.rect;
    Some(monitors.iter().skip(1).fold(first, |b, m| {
        let r = m.rect;
        let (x0, y0) = (b.x.min(r.x), b.y.min(r.y));
        let x1 = (b.x + b.w as i32).max(r.x + r.w as i32);
        let y1 = (b.y + b.h as i32).max(r.y + r.h as i32);
        Rect::new(x0, y0, (x1 - x0) as u32, (y1 - y0) as u32)
    }))
}

impl DesktopHost for LayerShellDesktop {
    fn desktop(&self) -> Result<Desktop, HostError> {
        Ok(Desktop {
            monitors: self.monitors.clone(),
            windows: Vec::new(),
            current_desktop: None,
        })
    }
    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }
    fn windows_reason(&self) -> Option<&'static str> {
        Some(PERCH_REASON)
    }
    /// Blocking (the tools call it off the async threads): through the portal.
    fn capture(&self, area: Rect) -> Result<Capture, HostError> {
        self.portal.capture_blocking(area, CAPTURE_REASON)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(name: &str, x: i32) -> Output {
        Output {
            name: name.into(),
            rect: Rect::new(x, 0, 1280, 720),
            scale: 1,
        }
    }

    #[test]
    fn the_outputs_are_the_monitors_no_window_is_seen_and_without_a_portal_the_reason_is_said() {
        let mut host = LayerShellDesktop::new(&[output("DP-1", 0), output("HDMI-A-1", 1280)]);
        let d = host.desktop().unwrap();
        let names: Vec<(u32, &str, bool)> = d
            .monitors
            .iter()
            .map(|m| (m.number, m.name.as_str(), m.primary))
            .collect();
        assert_eq!(names, [(1, "DP-1", true), (2, "HDMI-A-1", false)]);
        assert!(d.windows.is_empty());
        assert_eq!(host.windows_reason(), Some(PERCH_REASON));
        assert_eq!(host.portal.layout, Some(Rect::new(0, 0, 2560, 720)));
        host.portal.address = Some("unix:path=/nonexistent/yui-test-bus".into());
        let e = host.capture(Rect::new(0, 0, 4, 4)).unwrap_err();
        assert!(matches!(e, HostError::Unsupported(_)), "{e:?}");
        let e = e.to_string();
        assert!(e.starts_with(CAPTURE_REASON), "{e}");
        assert!(
            e.contains("no session bus to reach a screenshot portal"),
            "{e}"
        );
    }
}
