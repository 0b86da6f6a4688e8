//! The X11 desktop as XWayland shows it: the X11 and XWayland windows and the monitors are
//! there to sit on and look at, but a capture of the X screen would show only those windows over
//! black where native Wayland windows are, so it is refused with the reason (in words the model
//! can pass on) instead of handing the model a picture that is not the screen.

use crate::avatar::{Capture, Desktop, DesktopHost, HostError, Rect};
use std::sync::Arc;

/// Why `look at: screen` cannot capture under XWayland.
pub const CAPTURE_REASON: &str = "YUI runs through XWayland in this Wayland session, where a \
capture would show only X11 windows; capturing a Wayland screen needs the desktop's screenshot \
portal, which YUI does not use yet";

/// An X11 desktop host under XWayland: windows and monitors as the inner host sees them, no
/// capture.
pub struct XwaylandDesktop(pub Arc<dyn DesktopHost>);

impl DesktopHost for XwaylandDesktop {
    fn desktop(&self) -> Result<Desktop, HostError> {
        self.0.desktop()
    }
    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.0.changes()
    }
    fn capture(&self, _area: Rect) -> Result<Capture, HostError> {
        Err(HostError::unavailable(CAPTURE_REASON))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Inner(tokio::sync::watch::Sender<u64>);
    impl DesktopHost for Inner {
        fn desktop(&self) -> Result<Desktop, HostError> {
            Ok(Desktop::default())
        }
        fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
            self.0.subscribe()
        }
        fn capture(&self, area: Rect) -> Result<Capture, HostError> {
            Ok(Capture {
                width: area.w,
                height: area.h,
                rgb: vec![0; (area.w * area.h * 3) as usize],
            })
        }
    }

    #[test]
    fn windows_are_seen_and_the_capture_is_refused_with_the_reason() {
        let (tx, _) = tokio::sync::watch::channel(0);
        let host = XwaylandDesktop(Arc::new(Inner(tx)));
        assert!(host.desktop().is_ok());
        let e = host.capture(Rect::new(0, 0, 4, 4)).unwrap_err();
        assert_eq!(e.to_string(), CAPTURE_REASON);
    }
}
