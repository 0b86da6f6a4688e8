//! The X11 desktop as XWayland shows it: the X11 and XWayland windows and the monitors are
//! there to sit on and look at, but a capture of the X screen would show only those windows over
//! black where native Wayland windows are, so the screen is captured through the desktop's
//! screenshot portal instead (`portal.rs`); where none answers, the capture is refused with the
//! reason (in words the model can pass on), never a picture that is not the screen.

use crate::avatar::{Capture, Desktop, DesktopHost, HostError, Rect};
use std::sync::Arc;

/// Why `look at: screen` cannot capture under XWayland, before the portal's own reason.
pub const CAPTURE_REASON: &str = "YUI runs through XWayland in this Wayland session, where an \
X11 capture would show only X11 windows, and the desktop's screenshot portal could not take one";

/// An X11 desktop host under XWayland: windows and monitors as the inner host sees them, the
/// screen through the screenshot portal.
pub struct XwaylandDesktop {
    pub inner: Arc<dyn DesktopHost>,
    #[cfg(target_os = "linux")]
    pub portal: super::portal::ScreenshotPortal,
}

impl XwaylandDesktop {
    /// Over `inner`, with the session bus's portal.
    pub fn new(inner: Arc<dyn DesktopHost>) -> Self {
        Self {
            inner,
            #[cfg(target_os = "linux")]
            portal: Default::default(),
        }
    }
}

impl DesktopHost for XwaylandDesktop {
    fn desktop(&self) -> Result<Desktop, HostError> {
        self.inner.desktop()
    }
    fn active_app(&self) -> Result<Option<String>, HostError> {
        self.inner.active_app()
    }
    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.changes()
    }
    /// Blocking (the tools call it off the async threads): through the portal.
    fn capture(&self, area: Rect) -> Result<Capture, HostError> {
        self.portal.capture_blocking(area, CAPTURE_REASON)
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
    fn windows_are_seen_and_without_a_portal_the_capture_is_refused_with_the_reason() {
        let (tx, _) = tokio::sync::watch::channel(0);
        let mut host = XwaylandDesktop::new(Arc::new(Inner(tx)));
        // A bus nobody listens on: no portal answers.
        host.portal.address = Some("unix:path=/nonexistent/yui-test-bus".into());
        assert!(host.desktop().is_ok());
        let e = host.capture(Rect::new(0, 0, 4, 4)).unwrap_err().to_string();
        assert!(e.starts_with(CAPTURE_REASON), "{e}");
        assert!(
            e.contains("no session bus to reach a screenshot portal"),
            "{e}"
        );
    }
}
