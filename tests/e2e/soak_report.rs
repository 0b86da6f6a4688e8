//! What the memory soak (`soak.rs`) measured and how it prints: each checkpoint's processes
//! (PSS, RSS, the app's own anonymous + shared memory, CPU), the summary side by side, the growth
//! per phase and the verdicts.
//!
//! The verdicts read the app's own memory (`procstat::Mem::own`: PSS of anonymous and shared
//! memory), not the whole PSS: file-backed pages (WebKit's libraries, fonts) are split with every
//! other process mapping them, so another WebKit program starting or ending elsewhere on the
//! machine moves this app's PSS by tens of MiB with no change in the app. Both are printed.

use super::super::procstat::Mem;
use std::collections::BTreeMap;
use std::time::Duration;

const MIB: f64 = 1024.0;

/// One checkpoint: per process (pid → name, memory), CPU per process name over the window.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    pub name: &'static str,
    pub mem: BTreeMap<u32, (String, Mem)>,
    pub cpu: BTreeMap<String, f64>,
}

impl Checkpoint {
    /// Total PSS of the app's tree, KiB.
    pub fn pss(&self) -> u64 {
        self.mem.values().map(|(_, m)| m.pss).sum()
    }
    pub fn rss(&self) -> u64 {
        self.mem.values().map(|(_, m)| m.rss).sum()
    }
    /// The app's own memory (anonymous + shared PSS) over its tree, KiB.
    pub fn own(&self) -> u64 {
        self.mem.values().map(|(_, m)| m.own()).sum()
    }
    /// CPU of the app's tree (context processes left out), % of one core.
    pub fn cpu_total(&self) -> f64 {
        self.cpu
            .iter()
            .filter(|(k, _)| !k.starts_with('('))
            .map(|(_, v)| v)
            .sum()
    }
}

/// What the store holds after the turns.
#[derive(Debug, Clone, Default)]
pub struct Stored {
    pub user_lines: usize,
    pub replies: usize,
    pub relation_marks: usize,
    pub relation_changes: usize,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub checkpoints: Vec<Checkpoint>,
    /// (turns done, total PSS, own memory; KiB) every `sample_every` turns.
    pub samples: Vec<(usize, u64, u64)>,
    /// (seconds idle, total PSS, own memory; KiB) every 5 minutes of the idle phase.
    pub idle_samples: Vec<(u64, u64, u64)>,
    pub turns_done: usize,
    pub turns_failed: Vec<String>,
    /// Turns whose window ended on the cue's emotion.
    pub cues_seen: usize,
    pub turns_secs: f64,
    pub stored: Stored,
    /// The second launch: main + 1 pet.
    pub one_pet: Option<Checkpoint>,
}

impl Report {
    pub fn get(&self, name: &str) -> Option<&Checkpoint> {
        self.checkpoints.iter().find(|c| c.name == name)
    }
    /// Growth of `f` (KiB of a checkpoint) from checkpoint `a` to `b`, MiB.
    fn delta(&self, a: &str, b: &str, f: fn(&Checkpoint) -> u64) -> f64 {
        match (self.get(a), self.get(b)) {
            (Some(a), Some(b)) => (f(b) as f64 - f(a) as f64) / MIB,
            _ => f64::NAN,
        }
    }
    /// Growth of the app's own memory from checkpoint `a` to `b`, MiB: what the verdicts read.
    pub fn growth(&self, a: &str, b: &str) -> f64 {
        self.delta(a, b, Checkpoint::own)
    }
    /// Growth of total PSS from checkpoint `a` to `b`, MiB.
    pub fn growth_pss(&self, a: &str, b: &str) -> f64 {
        self.delta(a, b, Checkpoint::pss)
    }
    /// Least-squares slope of the app's own memory over the turn samples from `from` turns on,
    /// KiB per turn.
    pub fn slope(&self, from: usize) -> f64 {
        let pts: Vec<(f64, f64)> = self
            .samples
            .iter()
            .filter(|(n, _, _)| *n >= from)
            .map(|(n, _, k)| (*n as f64, *k as f64))
            .collect();
        let n = pts.len() as f64;
        if n < 2.0 {
            return f64::NAN;
        }
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
        sxy / sxx
    }
    /// The third character's cost, MiB: main + 2 pets at start minus main + 1 pet, as
    /// (own memory, total PSS).
    pub fn extra_character(&self) -> Option<(f64, f64)> {
        let (two, one) = (self.get("start")?, self.one_pet.as_ref()?);
        Some((
            (two.own() as f64 - one.own() as f64) / MIB,
            (two.pss() as f64 - one.pss() as f64) / MIB,
        ))
    }
}

/// The wall-clock time of day, UTC (`HH:MM:SS UTC`).
fn utc_now() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() % 86_400);
    format!("{:02}:{:02}:{:02} UTC", t / 3600, t / 60 % 60, t % 60)
}

fn mib(kib: u64) -> f64 {
    kib as f64 / MIB
}

/// One table: every process of the app's tree, its PSS, RSS, own memory and CPU.
pub fn print_checkpoint(c: &Checkpoint, window: Duration) {
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    println!(
        "soak: checkpoint `{}` at {} (CPU over {} s; load {load})",
        c.name,
        utc_now(),
        window.as_secs()
    );
    println!(
        "  {:<22} {:>7} {:>9} {:>9} {:>12} {:>8}",
        "process", "pid", "PSS MiB", "RSS MiB", "anon+shm MiB", "CPU %"
    );
    let mut named: Vec<&String> = Vec::new();
    for (pid, (name, m)) in &c.mem {
        // CPU is per name: shown on the first process of that name.
        let cpu = match (named.contains(&name), c.cpu.get(name)) {
            (false, Some(v)) => format!("{v:.2}"),
            _ => String::new(),
        };
        named.push(name);
        println!(
            "  {:<22} {:>7} {:>9.1} {:>9.1} {:>12.1} {:>8}",
            name,
            pid,
            mib(m.pss),
            mib(m.rss),
            mib(m.own()),
            cpu
        );
    }
    println!(
        "  {:<22} {:>7} {:>9.1} {:>9.1} {:>12.1} {:>8.2}",
        "app total",
        "",
        mib(c.pss()),
        mib(c.rss()),
        mib(c.own()),
        c.cpu_total()
    );
    for (n, v) in c.cpu.iter().filter(|(k, _)| k.starts_with('(')) {
        println!(
            "  {:<22} {:>7} {:>9} {:>9} {:>12} {:>8.2}",
            n, "", "", "", "", v
        );
    }
}

/// The summary after the run: every process at each checkpoint side by side, the growth over
/// the idle phase against `idle_limit_mib` and over the turns against `limit_mib`, the turns and
/// the store, the third character's cost against `extra_limit_mib`. Returns whether every check
/// passed.
pub fn print_summary(
    r: &Report,
    idle_limit_mib: f64,
    limit_mib: f64,
    extra_limit_mib: f64,
) -> bool {
    let cps: Vec<&Checkpoint> = r.checkpoints.iter().collect();
    println!("soak: summary (per checkpoint: PSS, RSS, anon+shmem PSS in MiB; CPU % of one core)");
    print!("  {:<30}", "process");
    for c in &cps {
        print!(" | {:^31}", c.name);
    }
    println!();
    let mut pids: Vec<(u32, String)> = Vec::new();
    for c in &cps {
        for (pid, (name, _)) in &c.mem {
            if !pids.iter().any(|(p, _)| p == pid) {
                pids.push((*pid, name.clone()));
            }
        }
    }
    for (pid, name) in &pids {
        print!("  {:<30}", format!("{name} ({pid})"));
        for c in &cps {
            match c.mem.get(pid) {
                Some((n, m)) => print!(
                    " | {:>7.1} {:>7.1} {:>7.1} {:>6.2}",
                    mib(m.pss),
                    mib(m.rss),
                    mib(m.own()),
                    c.cpu.get(n).copied().unwrap_or(0.0)
                ),
                None => print!(" | {:^31}", "-"),
            }
        }
        println!();
    }
    print!("  {:<30}", "app total");
    for c in &cps {
        print!(
            " | {:>7.1} {:>7.1} {:>7.1} {:>6.2}",
            mib(c.pss()),
            mib(c.rss()),
            mib(c.own()),
            c.cpu_total()
        );
    }
    println!();
    let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
    let mut pass = true;
    for (what, a, b, limit_mib) in [
        ("idle", "start", "after idle", idle_limit_mib),
        ("turns", "after idle", "after turns", limit_mib),
    ] {
        let g = r.growth(a, b);
        let ok = g <= limit_mib;
        pass &= ok;
        println!(
            "  growth over {what:<5}: anon+shmem {g:>+6.1} MiB (limit {limit_mib} MiB): {}; \
             total PSS {:>+6.1} MiB",
            verdict(ok),
            r.growth_pss(a, b)
        );
    }
    println!(
        "  start → after turns: anon+shmem {:+.1} MiB, total PSS {:+.1} MiB; slope over the \
         turns {:.1} KiB/turn (second half {:.1})",
        r.growth("start", "after turns"),
        r.growth_pss("start", "after turns"),
        r.slope(0),
        r.slope(r.turns_done / 2)
    );
    let st = &r.stored;
    let turns_ok = r.turns_failed.is_empty();
    let stored_ok = st.user_lines == r.turns_done
        && st.replies == r.turns_done
        && st.relation_marks == r.turns_done;
    pass &= turns_ok && stored_ok;
    println!(
        "  turns: {} done, {} failed, in {:.0} s ({:.2} s a turn); the face on the turn's cue \
         at its end: {}: {}",
        r.turns_done,
        r.turns_failed.len(),
        r.turns_secs,
        r.turns_secs / r.turns_done.max(1) as f64,
        r.cues_seen,
        verdict(turns_ok)
    );
    println!(
        "  store: {} user lines, {} replies, {} rate_relation marks, {} relation changes (the \
         rest clamped by the daily cap of 4 points per character and target): {}",
        st.user_lines,
        st.replies,
        st.relation_marks,
        st.relation_changes,
        verdict(stored_ok)
    );
    if let (Some((own, pss)), Some(one)) = (r.extra_character(), r.one_pet.as_ref()) {
        let ok = own <= extra_limit_mib;
        pass &= ok;
        let two = r.get("start").expect("start");
        println!(
            "  third character: main + 2 pets − main + 1 pet: anon+shmem {:.1} − {:.1} = \
             {own:.1} MiB (limit {extra_limit_mib} MiB): {}; total PSS {:.1} − {:.1} = {pss:.1} MiB",
            mib(two.own()),
            mib(one.own()),
            verdict(ok),
            mib(two.pss()),
            mib(one.pss()),
        );
    }
    println!("soak: {}", verdict(pass));
    pass
}
