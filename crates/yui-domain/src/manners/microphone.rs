//! The microphone probe: another program records from a microphone, as the sound server's
//! source outputs show (`yui_voice::recorders`: running streams on sources that are not
//! monitors, level meters left out). YUI's own streams (the app's listening) are never counted.
//! Where no sound server answers, the probe cannot tell and reads as not busy (logged once per
//! proactive turn by `probes::busy`).

use super::probes::{BusyProbes, Probe};
use crate::avatar::HostError;
use std::path::PathBuf;

/// The sound server's recorders, minus YUI's own process.
#[derive(Debug, Clone)]
pub struct PulseMicrophone {
    /// The server's socket; `None`: the one the environment names.
    pub socket: Option<PathBuf>,
    /// YUI's own process id (never counted).
    pub own_pid: u32,
}

impl PulseMicrophone {
    /// The session's sound server, this process left out.
    pub fn system() -> Self {
        Self {
            socket: None,
            own_pid: std::process::id(),
        }
    }

    /// The first other program recording, with its name when the stream gives one.
    pub fn recorder(&self) -> Result<Option<Option<String>>, HostError> {
        #[cfg(target_os = "linux")]
        {
            use yui_voice::recorders::{recorders, recorders_at};
            let found = match &self.socket {
                Some(s) => recorders_at(s),
                None => recorders(),
            }
            .map_err(|e| HostError::platform("asking the sound server who records", e))?;
            Ok(found
                .into_iter()
                .find(|r| r.pid != Some(self.own_pid))
                .map(|r| r.name))
        }
        #[cfg(not(target_os = "linux"))]
        Err(HostError::unavailable(
            "the microphone probe needs PulseAudio or PipeWire",
        ))
    }
}

impl BusyProbes for PulseMicrophone {
    fn microphone(&self) -> Probe<Option<Option<String>>> {
        self.recorder()
    }
}
