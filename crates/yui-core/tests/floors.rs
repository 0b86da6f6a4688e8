//! The floors (docs/ARCHITECTURE.md, "The crates and their floors"). The crates are floors the
//! compiler enforces: yui-base at the bottom, then yui-voice, then yui-domain, then yui-core
//! (this crate: the engine, and diagnosis on top of it; it re-exports the floors below under
//! their own names), then the CLI and the shell. Inside yui-core, nothing of the engine (turn,
//! tools, stage, context) imports diagnosis (doctor, discovery, first run). No crate's files
//! import each other in a loop.
//!
//! Nothing else can check what is inside a crate, so this test reads the sources and sees every
//! path form: `crate::…`, `super::…`, `self::…`, a child module named relatively (`use
//! direction::Direction`, `direction::f()`), and a module brought in by a `use` and named
//! through it later (`use super::sse;` … `sse::parse::f()`); braces are expanded and `pub use`
//! re-exports followed to the file that defines the name. Comments and `#[cfg(test)]` code are
//! left out. A loop is counted between modules: the files of one module's own folder (a type
//! whose `impl` is split over a parent and its child files) are that module (see `graph`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module's floor, from the bottom. The first two are the crates below, re-exported.
const FLOORS: &[(&str, &[&str])] = &[
    (
        "base (yui-base, re-exported)",
        &[
            "clock",
            "error",
            "events",
            "images",
            "logging",
            "names",
            "output",
            "paths",
            "playback",
            "process",
            "realtime_audio",
            "schema",
            "sprite_labels",
            "store",
            "target_names",
            "timeouts",
            "window",
        ],
    ),
    (
        "domain (yui-domain, re-exported)",
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
            "display",
            "presence",
            "autostart",
            "model",
        ],
    ),
    ("engine", &["turn", "tools", "stage", "context", "trim"]),
    ("diagnosis", &["doctor", "discover", "firstrun"]),
];

/// The workspace's crates whose files must not import each other in a loop: (the `src/` folder
/// from this crate's folder, its root file).
const CRATES: &[(&str, &str)] = &[
    ("src", "lib.rs"),
    ("../yui-base/src", "lib.rs"),
    ("../yui-voice/src", "lib.rs"),
    ("../yui-domain/src", "lib.rs"),
    ("../yui-cli/src", "main.rs"),
    ("../yui-testkit/src", "lib.rs"),
    ("../yui-x11/src", "lib.rs"),
    ("../../src-tauri/src", "lib.rs"),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every source file under `src` (relative to it, `/`-separated) and its module path; `root` is
/// the crate's root file (a library's main.rs beside it is a binary of its own, left out).
fn files_of(src: &Path, root: &str) -> BTreeMap<String, Vec<String>> {
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
    walk(src, &mut all);
    all.into_iter()
        .filter_map(|p| {
            let rel = p
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let is_root = rel == root;
            if !is_root && (rel == "lib.rs" || rel == "main.rs") {
                return None;
            }
            let mut segs: Vec<String> = rel
                .trim_end_matches(".rs")
                .split('/')
                .map(String::from)
                .collect();
            if is_root || segs.last().is_some_and(|s| s == "mod") {
                segs.pop();
            }
            Some((rel, segs))
        })
        .collect()
}

fn files() -> BTreeMap<String, Vec<String>> {
    files_of(&src(), "lib.rs")
}

/// The code of a file: no comment lines, nothing after the first `#[cfg(test)]`.
fn code_at(src: &Path, rel: &str) -> String {
    let s = std::fs::read_to_string(src.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    strip(&s)
}

fn strip(s: &str) -> String {
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

/// Where `word` (`crate::`, `foo::`) starts a path of its own in `src`: not the tail of a longer
/// name or path.
fn starts(src: &str, word: &str) -> Vec<usize> {
    src.match_indices(word)
        .map(|(i, _)| i)
        .filter(|&i| !src[..i].ends_with(|c: char| ident(c) || c == ':'))
        .collect()
}

/// Absolute module paths a file names with `crate::`, `super::` and `self::`.
fn refs(src: &str, me: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for word in ["crate::", "super::", "self::"] {
        for i in starts(src, word) {
            let mut base: Vec<String> = if word == "crate::" {
                Vec::new()
            } else {
                me.to_vec()
            };
            let mut rest = &src[i..];
            if let Some(r) = rest.strip_prefix("crate::") {
                rest = r;
            }
            if let Some(r) = rest.strip_prefix("self::") {
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

/// Paths that start with a name standing for a module: `name::…` → `module ++ …`.
fn refs_through(src: &str, names: &BTreeMap<String, Vec<String>>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (name, module) in names {
        for i in starts(src, &format!("{name}::")) {
            paths_at(&src[i + name.len() + 2..], module, &mut out);
        }
    }
    out
}

struct Tree {
    src: PathBuf,
    files: BTreeMap<String, Vec<String>>,
    by_module: BTreeMap<Vec<String>, String>,
    /// (file, name) → the absolute path a `pub use` in that file re-exports under that name.
    reexports: BTreeMap<(String, String), Vec<String>>,
}

impl Tree {
    fn read() -> Self {
        Self::read_at(&src(), "lib.rs")
    }

    fn read_at(src: &Path, root: &str) -> Self {
        let files = files_of(src, root);
        let by_module = files.iter().map(|(f, m)| (m.clone(), f.clone())).collect();
        let mut reexports = BTreeMap::new();
        for (f, me) in &files {
            let c = code_at(src, f);
            for line in c.lines().map(str::trim_start) {
                let Some(body) = line
                    .strip_prefix("pub use ")
                    .or_else(|| line.strip_prefix("pub(crate) use "))
                else {
                    continue;
                };
                let body = body.trim_end_matches(';');
                let paths = if ["crate::", "super::", "self::"]
                    .iter()
                    .any(|w| body.starts_with(w))
                {
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
            src: src.to_path_buf(),
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

    /// Every absolute path the file `f` (module `me`) names, in every path form.
    fn all_refs(&self, f: &str, me: &[String]) -> Vec<Vec<String>> {
        let c = code_at(&self.src, f);
        let mut out = refs(&c, me);
        // Child modules named relatively (`direction::Direction`, `use direction::…`).
        let children: BTreeMap<String, Vec<String>> = self
            .by_module
            .keys()
            .filter(|m| m.len() == me.len() + 1 && m.starts_with(me))
            .map(|m| (m[me.len()].clone(), m.clone()))
            .collect();
        out.extend(refs_through(&c, &children));
        // Modules a `use` brought in, then named through their last segment.
        let brought: BTreeMap<String, Vec<String>> = out
            .iter()
            .filter(|p| !p.is_empty() && self.by_module.contains_key(p.as_slice()))
            .map(|p| (p.last().unwrap().clone(), p.clone()))
            .filter(|(n, _)| !children.contains_key(n))
            .collect();
        out.extend(refs_through(&c, &brought));
        out
    }

    /// The file → file import graph, between modules: a module's file and the files of its own
    /// folder (`stage/mod.rs` and `stage/run.rs`, `avatar/body.rs` and `avatar/body/plan.rs`)
    /// are one module split into files, not two that import each other: a child sees its
    /// parent's private items by design, and a parent re-exports its children's. Their ties are
    /// left out; every other reference counts, siblings' included.
    fn graph(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (f, me) in &self.files {
            let edges = graph.entry(f.clone()).or_default();
            for r in self.all_refs(f, me) {
                let Some(to) = self.target(&r, 0) else {
                    continue;
                };
                let them = &self.files[&to];
                if !them.starts_with(me) && !me.starts_with(them) {
                    edges.insert(to);
                }
            }
        }
        graph
    }
}

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, ms)| ms.contains(&module))
}

/// (upward imports, import loops) of yui-core as it is.
fn survey() -> (BTreeSet<(String, String)>, BTreeSet<Vec<String>>) {
    let t = Tree::read();
    let mut up = BTreeSet::new();
    for (f, me) in &t.files {
        for r in t.all_refs(f, me) {
            if let (Some(a), Some(b)) = (me.first(), r.first()) {
                if let (Some(fa), Some(fb)) = (floor_of(a), floor_of(b)) {
                    if fb > fa {
                        up.insert((f.clone(), b.clone()));
                    }
                }
            }
        }
    }
    (up, loops(&t.graph()))
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
    assert!(
        up.is_empty(),
        "imports of a floor above (file, module above): {up:?}"
    );
    assert!(
        cycles.is_empty(),
        "files that import each other in a loop: {cycles:?}"
    );
}

/// Each loop's imports (file → file), for the failure message.
fn ties(g: &BTreeMap<String, BTreeSet<String>>, cycles: &BTreeSet<Vec<String>>) -> String {
    cycles
        .iter()
        .map(|c| {
            let edges: Vec<String> = c
                .iter()
                .flat_map(|a| {
                    g[a].iter()
                        .filter(|b| c.contains(b))
                        .map(move |b| format!("{a} → {b}"))
                })
                .collect();
            format!("[{}]", edges.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn no_crate_of_the_workspace_has_files_that_import_each_other_in_a_loop() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (dir, root) in CRATES {
        let t = Tree::read_at(&here.join(dir), root);
        assert!(t.files.len() > 3, "{dir}: the survey found its files");
        let g = t.graph();
        let cycles = loops(&g);
        assert!(
            cycles.is_empty(),
            "{dir}: files that import each other in a loop: {}",
            ties(&g, &cycles)
        );
    }
}

/// A loop made only of relative paths (a child module named without `crate::`, and a module
/// brought in by `use super::…` then named through it) is found.
#[test]
fn a_loop_through_relative_paths_is_found() {
    let dir = std::env::temp_dir().join(format!("yui-floors-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("voice")).unwrap();
    let write = |f: &str, s: &str| std::fs::write(dir.join(f), s).unwrap();
    write("lib.rs", "pub mod presets;\npub mod voice;\n");
    // presets.rs → voice/engine.rs: a module brought in by `use`, then named through it.
    write(
        "presets.rs",
        "use super::voice;\npub const TYPES: &[&str] = &[];\nfn f() { voice::engine::canonical(); }\n",
    );
    // voice/mod.rs → voice/engine.rs: a child named relatively.
    write(
        "voice/mod.rs",
        "pub mod engine;\npub use engine::canonical;\n",
    );
    // voice/engine.rs → presets.rs: `self::` is not needed to name the parent's sibling.
    write(
        "voice/engine.rs",
        "pub fn canonical() { let _ = super::super::presets::TYPES; }\n",
    );
    let t = Tree::read_at(&dir, "lib.rs");
    let cycles = loops(&t.graph());
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        cycles.into_iter().collect::<Vec<_>>(),
        vec![vec![
            "presets.rs".to_string(),
            "voice/engine.rs".to_string()
        ]]
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
    (
        "../yui-base/src/clock.rs",
        "SystemClock is the one real clock",
    ),
    (
        "../yui-base/src/images.rs",
        "a screenshot folder's unique name",
    ),
    (
        "src/backend/secrets.rs",
        "entropy for the fallback file's salt",
    ),
];

#[test]
fn the_wall_clock_is_read_in_clock_rs_only() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = files().into_keys().map(|f| format!("src/{f}")).chain(
        files_of(&here.join("../yui-base/src"), "lib.rs")
            .into_keys()
            .map(|f| format!("../yui-base/src/{f}")),
    );
    for f in all {
        let c = code_at(here, &f);
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

/// Whether `code` branches on a transport: a match arm, a comparison or a `matches!` naming one.
fn branches_on_the_transport(code: &str) -> bool {
    const VARIANTS: [&str; 4] = [
        "Transport::ChatCompletions",
        "Transport::Responses",
        "Transport::Push",
        "Transport::Realtime",
    ];
    code.lines().any(|l| {
        // A qualified path (`crate::backend::Transport::Push`) counts as the short one.
        let l = &unqualified(l.trim());
        VARIANTS.iter().any(|v| {
            l.contains(&format!("== {v}"))
                || l.contains(&format!("!= {v}"))
                || (l.contains("matches!(") && l.contains(v))
                || (l.contains(v) && l.contains("=>") && l.find(v) < l.find("=>"))
        })
    })
}

/// `line` with the path before each `Transport::` cut (`crate::backend::Transport::Push` →
/// `Transport::Push`).
fn unqualified(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find("Transport::") {
        let head = &rest[..i];
        // Drop the `a::b::` run that ends right before `Transport::`.
        let keep = head
            .trim_end_matches(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
            .len();
        let cut = if head[keep..].ends_with("::") || head[keep..].is_empty() {
            keep
        } else {
            i
        };
        out.push_str(&head[..cut]);
        out.push_str("Transport::");
        rest = &rest[i + "Transport::".len()..];
    }
    out.push_str(rest);
    out
}

#[test]
fn nothing_outside_the_transport_folders_branches_on_the_transport() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = BTreeSet::new();
    for dir in ["src", "../yui-domain/src"] {
        for f in files_of(&here.join(dir), "lib.rs").into_keys() {
            if f.starts_with("turn/transport/") || f.starts_with("backend/") {
                continue;
            }
            if branches_on_the_transport(&code_at(&here.join(dir), &f)) {
                found.insert(format!("{dir}/{f}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "these branch on the transport outside turn/transport/ and backend/: say what differs \
         in the transport's descriptor (turn/transport/descriptor.rs) or on backend::Transport \
         instead: {found:?}"
    );
    assert!(branches_on_the_transport(
        "match t {\n Transport::Push | Transport::Realtime => 1,\n _ => 0 }"
    ));
    assert!(!branches_on_the_transport("let t = Transport::Push;"));
    assert!(branches_on_the_transport(
        "if backend.transport != crate::backend::Transport::Push {"
    ));
    assert!(!branches_on_the_transport(
        "let t = crate::backend::Transport::Push;"
    ));
}
