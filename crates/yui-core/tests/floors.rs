//! The floors of yui-core (docs/ARCHITECTURE.md, "Floors"): the shared vocabulary and the base
//! at the bottom, then the domain, then the engine (turn, tools, stage), then diagnosis (doctor,
//! discovery). Nothing imports a floor above its own, and no source files import each other in
//! a loop. Nothing else can check this, so this test reads the sources: every `crate::…` and
//! `super::…` path (braces expanded, `pub use` re-exports followed to the file that defines
//! the name), outside comments and `#[cfg(test)]` code.
//!
//! The two lists of what is still allowed (`STILL_UP`, `STILL_CYCLES`) may only shrink: a
//! listed import that is gone fails the test too, so the list is kept true.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module's floor, from the bottom.
const FLOORS: &[(&str, &[&str])] = &[
    (
        "base and shared vocabulary",
        &[
            "shared",
            "error",
            "clock",
            "paths",
            "logging",
            "process",
            "window",
            "target_names",
            "sprite_labels",
            "playback",
            "store",
        ],
    ),
    (
        "domain",
        &[
            "backend",
            "presets",
            "transcript",
            "settings",
            "vocab",
            "relations",
            "voice",
            "longterm",
            "avatar",
            "cards",
            "looks",
            "sprites",
            "layout",
            "presence",
            "autostart",
            "model",
        ],
    ),
    ("engine", &["turn", "tools", "stage", "context", "memory"]),
    ("diagnosis", &["doctor", "discover", "firstrun"]),
];

/// Upward imports still there (file, the module above it): none left.
const STILL_UP: &[(&str, &str)] = &[];

/// Import loops still there (the files, sorted): none left.
const STILL_CYCLES: &[&[&str]] = &[];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every source file (relative to src/, `/`-separated) and its module path.
fn files() -> BTreeMap<String, Vec<String>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("src/ is readable").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut all = Vec::new();
    walk(&src(), &mut all);
    all.into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(src())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let mut segs: Vec<String> = rel
                .trim_end_matches(".rs")
                .split('/')
                .map(String::from)
                .collect();
            if segs.last().is_some_and(|s| s == "mod") || segs == ["lib"] {
                segs.pop();
            }
            (rel, segs)
        })
        .collect()
}

/// The code of a file: no comment lines, nothing after the first `#[cfg(test)]`.
fn code(rel: &str) -> String {
    let s = std::fs::read_to_string(src().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let s = s.split("#[cfg(test)]").next().unwrap_or("");
    s.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Paths starting at `i` (`a::b::{c, d::{e}}`), expanded, appended to `out` after `prefix`.
fn paths_at(s: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut segs = prefix.to_vec();
    let mut rest = s;
    loop {
        let n = rest.find(|c: char| !ident(c)).unwrap_or(rest.len());
        if n == 0 {
            break;
        }
        let seg = &rest[..n];
        if seg != "self" {
            segs.push(seg.to_string());
        }
        rest = &rest[n..];
        if let Some(r) = rest.strip_prefix("::") {
            rest = r;
            if let Some(inner) = rest.strip_prefix('{') {
                for item in split_group(inner) {
                    paths_at(item.trim(), &segs, out);
                }
                return;
            }
        } else {
            break;
        }
    }
    out.push(segs);
}

/// The top-level comma-separated items of a `{…}` group (`inner` starts after the `{`).
fn split_group(inner: &str) -> Vec<&str> {
    let (mut depth, mut start, mut items) = (0, 0, Vec::new());
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&inner[start..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// Absolute module paths a file names (`crate::…`, `super::…`).
fn refs(src: &str, me: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for word in ["crate::", "super::"] {
        for (i, _) in src.match_indices(word) {
            if src[..i].ends_with(|c: char| ident(c) || c == ':') {
                continue;
            }
            let mut base: Vec<String> = if word == "crate::" {
                Vec::new()
            } else {
                me.to_vec()
            };
            let mut rest = &src[i..];
            if let Some(r) = rest.strip_prefix("crate::") {
                rest = r;
            }
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            paths_at(rest, &base, &mut out);
        }
    }
    out
}

struct Tree {
    files: BTreeMap<String, Vec<String>>,
    by_module: BTreeMap<Vec<String>, String>,
    /// (file, name) → the absolute path a `pub use` in that file re-exports under that name.
    reexports: BTreeMap<(String, String), Vec<String>>,
}

impl Tree {
    fn read() -> Self {
        let files = files();
        let by_module = files.iter().map(|(f, m)| (m.clone(), f.clone())).collect();
        let mut reexports = BTreeMap::new();
        for (f, me) in &files {
            let c = code(f);
            for line in c.lines().map(str::trim_start) {
                let Some(body) = line
                    .strip_prefix("pub use ")
                    .or_else(|| line.strip_prefix("pub(crate) use "))
                else {
                    continue;
                };
                let body = body.trim_end_matches(';');
                let paths = if body.starts_with("crate::") || body.starts_with("super::") {
                    refs(body, me)
                } else {
                    let mut p = Vec::new();
                    paths_at(body, me, &mut p);
                    p
                };
                for p in paths {
                    if let Some(name) = p.last() {
                        reexports.insert((f.clone(), name.clone()), p.clone());
                    }
                }
            }
        }
        Self {
            files,
            by_module,
            reexports,
        }
    }

    /// The file that defines what `path` names.
    fn target(&self, path: &[String], depth: usize) -> Option<String> {
        for k in (1..=path.len()).rev() {
            if let Some(f) = self.by_module.get(&path[..k]) {
                if k < path.len() && depth < 8 {
                    if let Some(p) = self.reexports.get(&(f.clone(), path[k].clone())) {
                        if p.as_slice() != path {
                            return self.target(p, depth + 1);
                        }
                    }
                }
                return Some(f.clone());
            }
        }
        None
    }
}

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, ms)| ms.contains(&module))
}

/// (upward imports, import loops) of the tree as it is.
fn survey() -> (BTreeSet<(String, String)>, BTreeSet<Vec<String>>) {
    let t = Tree::read();
    let mut up = BTreeSet::new();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (f, me) in &t.files {
        let edges = graph.entry(f.clone()).or_default();
        for r in refs(&code(f), me) {
            if let Some(to) = t.target(&r, 0) {
                if &to != f {
                    edges.insert(to);
                }
            }
            if let (Some(a), Some(b)) = (me.first(), r.first()) {
                if let (Some(fa), Some(fb)) = (floor_of(a), floor_of(b)) {
                    if fb > fa {
                        up.insert((f.clone(), b.clone()));
                    }
                }
            }
        }
    }
    (up, loops(&graph))
}

/// Strongly connected components of more than one file (Tarjan).
fn loops(g: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<Vec<String>> {
    struct S<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: BTreeSet<Vec<String>>,
    }
    fn visit<'a>(s: &mut S<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        let g = s.g;
        for w in g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.insert(comp);
            }
        }
    }
    let mut s = S {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: BTreeSet::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn every_top_level_module_stands_on_a_floor() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    for line in lib.lines() {
        if let Some(m) = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
        {
            let m = m.trim_end_matches(';');
            assert!(floor_of(m).is_some(), "lib.rs declares `{m}`: put it on a floor in tests/floors.rs (and docs/ARCHITECTURE.md)");
        }
    }
}

#[test]
fn nothing_imports_a_floor_above_its_own_and_no_files_import_each_other_in_a_loop() {
    let (up, cycles) = survey();
    let still_up: BTreeSet<(String, String)> = STILL_UP
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let new_up: Vec<_> = up.difference(&still_up).collect();
    assert!(
        new_up.is_empty(),
        "imports of a floor above (file, module above): {new_up:?}"
    );
    let gone: Vec<_> = still_up.difference(&up).collect();
    assert!(
        gone.is_empty(),
        "no longer imported upward, strike from STILL_UP: {gone:?}"
    );
    let still_cycles: BTreeSet<Vec<String>> = STILL_CYCLES
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let new_cycles: Vec<_> = cycles.difference(&still_cycles).collect();
    assert!(
        new_cycles.is_empty(),
        "files that import each other in a loop: {new_cycles:?}"
    );
    let gone: Vec<_> = still_cycles.difference(&cycles).collect();
    assert!(
        gone.is_empty(),
        "loop broken, strike from STILL_CYCLES: {gone:?}"
    );
}

#[test]
fn the_survey_sees_braces_reexports_and_super() {
    // The reader itself: a grouped import, `super::` and a re-export are followed.
    let mut out = Vec::new();
    paths_at("turn::{self, transport::push::PushClient}", &[], &mut out);
    assert_eq!(
        out,
        vec![
            vec!["turn".to_string()],
            vec![
                "turn".into(),
                "transport".into(),
                "push".into(),
                "PushClient".into()
            ]
        ]
    );
    let me: Vec<String> = vec![
        "turn".into(),
        "transport".into(),
        "push".into(),
        "map".into(),
    ];
    let r = refs("use super::wire::ServerFrame;", &me);
    assert_eq!(
        r,
        vec![vec![
            "turn".to_string(),
            "transport".into(),
            "push".into(),
            "wire".into(),
            "ServerFrame".into()
        ]]
    );
    let t = Tree::read();
    let path: Vec<String> = ["turn", "TurnRequest"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(t.target(&path, 0).as_deref(), Some("turn/request.rs"));
}

/// Files that may read the wall clock, and why: everything else takes the `Clock` it is given
/// (docs/ARCHITECTURE.md, "The clock is passed in"). Monotonic `Instant`s for waits are fine.
const WALL_CLOCK_READERS: &[(&str, &str)] = &[
    ("clock.rs", "SystemClock is the one real clock"),
    ("shared/images.rs", "a screenshot folder's unique name"),
    ("backend/secrets.rs", "entropy for the fallback file's salt"),
];

#[test]
fn the_wall_clock_is_read_in_clock_rs_only() {
    for (f, _) in files() {
        let c = code(&f);
        let reads = [
            "SystemTime::now",
            "Utc::now",
            "Local::now",
            "OffsetDateTime::now",
        ]
        .iter()
        .any(|n| c.contains(n));
        let allowed = WALL_CLOCK_READERS.iter().any(|(a, _)| *a == f);
        assert!(
            !reads || allowed,
            "{f} reads the wall clock: take the `Clock` passed in (crate::clock) instead"
        );
    }
}

/// docs/ARCHITECTURE.md: "files stay under 600 lines" — the Rust sources of every crate of the
/// workspace (`crates/*/src`, `src-tauri/src`; tests, benches and the vendored crate aside).
#[test]
fn no_product_source_file_is_over_600_lines() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut sources = Vec::new();
    for c in std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
    {
        walk(&c.path().join("src"), &mut sources);
    }
    walk(&root.join("src-tauri/src"), &mut sources);
    assert!(sources.len() > 100, "the survey found the sources");
    let long: Vec<String> = sources
        .iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).ok()?.lines().count();
            (n > 600).then(|| format!("{} ({n} lines)", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these files: {long:?}");
}
