//! What this session answers, assembled for the app: the busy probes that need no window
//! system (the camera and the screen recorders from `/proc`, the microphone from the sound
//! server) and awareness (the active app from the desktop host, what plays from MPRIS). The
//! shell wraps the probes in `probes::WithDesktop` and `probes::WithTyping` where it has a
//! desktop host and an idle time.

use super::aware::{Awareness, NowPlaying};
use super::probes::{BusyProbes, Probe};
use super::{camera, microphone, screen};
use crate::avatar::HostError;

/// The probes that need no window system, YUI's own process left out of each.
pub struct SystemProbes {
    pub camera: camera::ProcCamera,
    pub microphone: microphone::PulseMicrophone,
    pub screen: screen::ProcScreen,
}

impl SystemProbes {
    /// This machine's, YUI's own process left out of each.
    pub fn system() -> Self {
        Self {
            camera: camera::ProcCamera::system(),
            microphone: microphone::PulseMicrophone::system(),
            screen: screen::ProcScreen::system(),
        }
    }
}

impl BusyProbes for SystemProbes {
    fn screen_shared(&self) -> Probe<bool> {
        self.screen.screen_shared()
    }
    fn microphone(&self) -> Probe<Option<Option<String>>> {
        self.microphone.microphone()
    }
    fn camera(&self) -> Probe<Option<Option<String>>> {
        self.camera.camera()
    }
}

/// The session's answers: the active app from the desktop host, what plays from MPRIS.
pub struct Session {
    pub desktop: Option<std::sync::Arc<dyn crate::avatar::DesktopHost>>,
    #[cfg(target_os = "linux")]
    pub playing: super::mpris::Mpris,
}

impl Awareness for Session {
    fn active_app(&self) -> Result<Option<String>, HostError> {
        match &self.desktop {
            Some(d) => d.active_app(),
            None => Ok(None),
        }
    }
    fn now_playing(&self) -> Result<Option<NowPlaying>, HostError> {
        #[cfg(target_os = "linux")]
        return Ok(self.playing.now_playing());
        #[cfg(not(target_os = "linux"))]
        Ok(None)
    }
    fn watch_playing(&self, on: bool) {
        #[cfg(target_os = "linux")]
        self.playing.watch(on);
        #[cfg(not(target_os = "linux"))]
        let _ = on;
    }
}
