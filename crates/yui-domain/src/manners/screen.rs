//! The screen-recording probe: a program that records or shares the screen runs. Linux has no
//! common signal for "the screen is being captured" on X11 (any client may read the root
//! window), so this names the programs that do it, from `/proc/<pid>/comm` and, for the general
//! tools, the capture source on their command line:
//!
//! - screen recorders and streamers: OBS Studio, SimpleScreenRecorder, Kazam, vokoscreenNG,
//!   Peek, recordMyDesktop, GPU Screen Recorder, Kooha, wf-recorder, wl-screenrec, Green and
//!   Blue Recorder;
//! - `ffmpeg` capturing `x11grab` or `kmsgrab`, `gst-launch-1.0` with `ximagesrc` or
//!   `pipewiresrc`.
//!
//! What it cannot see: a browser tab sharing the screen in a call (the microphone probe usually
//! holds the characters then, since the call records). A process of another user is not
//! readable and is skipped. docs/proactive.md lists the same.

use super::probes::{BusyProbes, Probe};
use std::path::{Path, PathBuf};

/// Programs that record or stream the screen whenever they run (`comm`, which the kernel cuts
/// at 15 bytes).
pub const RECORDERS: [&str; 12] = [
    "obs",
    "simplescreenrecorder",
    "kazam",
    "vokoscreenNG",
    "peek",
    "recordmydesktop",
    "gpu-screen-recorder",
    "kooha",
    "wf-recorder",
    "wl-screenrec",
    "green-recorder",
    "blue-recorder",
];

/// General tools, and the argument that makes them capture the screen.
pub const CAPTURING: [(&str, &[&str]); 2] = [
    ("ffmpeg", &["x11grab", "kmsgrab"]),
    ("gst-launch-1.0", &["ximagesrc", "pipewiresrc"]),
];

/// Where to look.
#[derive(Debug, Clone)]
pub struct ProcScreen {
    /// `/proc`.
    pub proc_root: PathBuf,
    /// YUI's own process id (never counted).
    pub own_pid: u32,
}

impl ProcScreen {
    pub fn system() -> Self {
        Self {
            proc_root: PathBuf::from("/proc"),
            own_pid: std::process::id(),
        }
    }

    /// The name of the first program recording the screen.
    pub fn recorder(&self) -> Option<String> {
        let entries = std::fs::read_dir(&self.proc_root).ok()?;
        entries.flatten().find_map(|e| {
            let pid = e.file_name().to_str()?.parse::<u32>().ok()?;
            (pid != self.own_pid)
                .then(|| recording(&e.path()))
                .flatten()
        })
    }
}

/// `comm` as the kernel keeps it: at most 15 bytes.
fn comm_of(name: &str) -> &str {
    name.get(..15).unwrap_or(name)
}

/// The program's name when the process at `dir` records the screen.
fn recording(dir: &Path) -> Option<String> {
    let comm = std::fs::read_to_string(dir.join("comm")).ok()?;
    let comm = comm.trim();
    if let Some(name) = RECORDERS.iter().find(|r| comm_of(r) == comm) {
        return Some((*name).to_string());
    }
    let (name, sources) = CAPTURING.iter().find(|(n, _)| comm_of(n) == comm)?;
    let cmdline = std::fs::read(dir.join("cmdline")).ok()?;
    let captures = cmdline
        .split(|b| *b == 0)
        .filter_map(|a| std::str::from_utf8(a).ok())
        .any(|a| sources.iter().any(|s| a.contains(s)));
    captures.then(|| (*name).to_string())
}

impl BusyProbes for ProcScreen {
    fn screen_shared(&self) -> Probe<bool> {
        Ok(self.recorder().is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_matched_as_the_kernel_cuts_them() {
        assert_eq!(comm_of("simplescreenrecorder"), "simplescreenrec");
        assert_eq!(comm_of("obs"), "obs");
    }
}
