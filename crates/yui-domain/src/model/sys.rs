//! What the model store and the engine ask of the machine: free disk space, physical cores, a
//! free loopback port, a random per-run key, whether a process is still there.

use std::path::Path;

/// Bytes free for this user on the file system holding `dir` (`None`: it could not be read).
pub fn free_bytes(dir: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: statvfs(3) writes only into the zeroed struct we pass; `c` is NUL-terminated.
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
            return None;
        }
        #[allow(clippy::unnecessary_cast)]
        Some((s.f_bavail as u64).saturating_mul(s.f_frsize as u64))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// Physical cores (not hardware threads): distinct (package, core) pairs of /proc/cpuinfo, else
/// the threads the OS gives this process.
pub fn physical_cores() -> usize {
    let logical = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| cores_of_cpuinfo(&t))
        .map_or(logical, |c| c.min(logical).max(1))
}

/// The distinct (physical id, core id) pairs of a /proc/cpuinfo text; `None` when it has none.
pub fn cores_of_cpuinfo(text: &str) -> Option<usize> {
    let mut seen = std::collections::BTreeSet::new();
    let (mut pkg, mut core) = (None::<String>, None::<String>);
    for line in text.lines().chain(std::iter::once("")) {
        if line.trim().is_empty() {
            if let Some(c) = core.take() {
                seen.insert((pkg.take().unwrap_or_default(), c));
            }
            pkg = None;
            continue;
        }
        if let Some((k, v)) = line.split_once(':') {
            match k.trim() {
                "physical id" => pkg = Some(v.trim().to_string()),
                "core id" => core = Some(v.trim().to_string()),
                _ => {}
            }
        }
    }
    (!seen.is_empty()).then_some(seen.len())
}

/// The machine's memory in bytes (`MemTotal` of /proc/meminfo; `None` where it cannot be read).
pub fn total_memory() -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| mem_total_of(&t))
}

/// `MemTotal` of a /proc/meminfo text, in bytes.
pub fn mem_total_of(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// A TCP port free on 127.0.0.1 right now (the OS picks it).
pub fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind(("127.0.0.1", 0))?
        .local_addr()?
        .port())
}

/// 32 hex digits from the OS's random source, for a per-run API key.
pub fn random_key() -> std::io::Result<String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Whether a process with this pid exists (and is not a zombie we could reap).
pub fn pid_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(p) = i32::try_from(pid) else {
            return false;
        };
        if p <= 1 {
            return false;
        }
        // SAFETY: kill(2) with signal 0 only checks that the process exists.
        unsafe { libc::kill(p, 0) == 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_count_pairs_not_threads() {
        let two_cores_four_threads = "processor: 0\nphysical id: 0\ncore id: 0\n\nprocessor: 1\nphysical id: 0\ncore id: 1\n\nprocessor: 2\nphysical id: 0\ncore id: 0\n\nprocessor: 3\nphysical id: 0\ncore id: 1\n";
        assert_eq!(cores_of_cpuinfo(two_cores_four_threads), Some(2));
        assert_eq!(cores_of_cpuinfo("processor: 0\nmodel name: x\n"), None);
        assert!(physical_cores() >= 1);
    }

    #[test]
    fn memory_is_read_from_meminfo() {
        assert_eq!(
            mem_total_of("MemTotal:        8048576 kB\nMemFree: 1 kB\n"),
            Some(8_048_576 * 1024)
        );
        assert_eq!(mem_total_of("MemFree: 1 kB\n"), None);
        assert!(total_memory().is_some_and(|m| m > 0));
    }

    #[test]
    fn keys_are_random_hex() {
        let (a, b) = (random_key().unwrap(), random_key().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(free_bytes(Path::new("/")).is_some());
        assert!(!pid_alive(0));
        assert!(pid_alive(std::process::id()));
    }
}
