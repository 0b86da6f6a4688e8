//! The camera probe: another process holds a video device open. Linux keeps every process's
//! open files as links in `/proc/<pid>/fd/`; one that points at `/dev/video*` (and belongs to a
//! process other than YUI) means the camera is in use, and the process's `comm` names it. The
//! folder and the device prefix are the seam tests use (a temp file held open by a real child
//! process). A folder that cannot be read is skipped (another user's process): the probe only
//! sees what the user may see.

use super::probes::{BusyProbes, Probe};
use std::path::{Path, PathBuf};

/// Where to look and for what.
#[derive(Debug, Clone)]
pub struct ProcCamera {
    /// `/proc`.
    pub proc_root: PathBuf,
    /// `/dev/video`.
    pub prefix: PathBuf,
    /// YUI's own process id (never counted).
    pub own_pid: u32,
}

impl ProcCamera {
    /// The real system's.
    pub fn system() -> Self {
        Self {
            proc_root: PathBuf::from("/proc"),
            prefix: PathBuf::from("/dev/video"),
            own_pid: std::process::id(),
        }
    }

    /// The first other process holding a matching file open, with its name when readable.
    pub fn holder(&self) -> Option<Option<String>> {
        let entries = std::fs::read_dir(&self.proc_root).ok()?;
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if pid == self.own_pid {
                continue;
            }
            if self.holds(&e.path()) {
                let comm = std::fs::read_to_string(e.path().join("comm"))
                    .ok()
                    .map(|c| c.trim().to_string())
                    .filter(|c| !c.is_empty());
                return Some(comm);
            }
        }
        None
    }

    fn holds(&self, proc_dir: &Path) -> bool {
        let Ok(fds) = std::fs::read_dir(proc_dir.join("fd")) else {
            return false;
        };
        let prefix = self.prefix.to_string_lossy();
        fds.flatten().any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|target| target.to_string_lossy().starts_with(prefix.as_ref()))
        })
    }
}

impl BusyProbes for ProcCamera {
    fn camera(&self) -> Probe<Option<Option<String>>> {
        Ok(self.holder())
    }
}
