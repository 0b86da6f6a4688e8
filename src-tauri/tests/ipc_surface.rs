//! The smallest IPC surface, table-driven over every window kind the app creates: each window is
//! allowed the commands its capability grants and refused every other app command (every name
//! in `generate_handler!`) and every core plugin command it is not granted; every grant is used
//! by the window's own UI (its page's JS modules); and the CSP in `tauri.conf.json` forbids
//! inline, eval'd and remote script.
//!
//! The declaration is the command table (src-tauri/src/commands/table.rs: each command and the
//! window kinds that may call it) with `capabilities/*.json` (one file per window kind: its
//! windows and core permissions); this test reads both, so a grant added without a UI that uses
//! it fails here, and the refusals show the build made the grants the table says.

use crate::support;

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use support::{invoke, window};
use yui_app::commands::TABLE;
use yui_app::windows::WindowLabel;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// One label of every window kind (and a label no window kind has).
const LABELS: &[&str] = &[
    "main",
    "pet-kai",
    "phone-yui",
    "phone-kai",
    "settings",
    "quick",
    "error",
    "stray",
];

/// The page a window shows. The match has no wildcard: a new window kind does not compile until
/// it is given its page here (and so its row in this test).
fn page_of(label: &WindowLabel) -> &'static str {
    match label {
        WindowLabel::Main | WindowLabel::Pet(_) => "ui/index.html",
        WindowLabel::Phone(_) => "ui/phone.html",
        WindowLabel::Settings => "ui/settings.html",
        WindowLabel::Quick => "ui/quick.html",
        WindowLabel::Fatal => "ui/error.html",
    }
}

/// Commands that once existed and no window may call (the browser runs inside turns only; the
/// generic settings read/write had no UI).
const GONE: &[&str] = &[
    "browser_run",
    "browser_guide",
    "settings_get",
    "settings_set",
];

/// The core permissions a capability may hold, the plugin command each allows, and the JS call of
/// the window's UI that needs it.
const CORE: &[(&str, &str, &str)] = &[
    ("core:event:allow-listen", "plugin:event|listen", "listen("),
    // The function the listen promise resolves to.
    (
        "core:event:allow-unlisten",
        "plugin:event|unlisten",
        "listen(",
    ),
    ("core:event:allow-emit", "plugin:event|emit", ".emit("),
    (
        "core:event:allow-emit-to",
        "plugin:event|emit_to",
        ".emitTo(",
    ),
    (
        "core:window:allow-start-dragging",
        "plugin:window|start_dragging",
        ".startDragging(",
    ),
    ("core:window:allow-hide", "plugin:window|hide", ".hide("),
];

/// Plugin commands no window is granted, checked refused everywhere too.
const CORE_NEVER: &[&str] = &[
    "plugin:window|close",
    "plugin:window|set_position",
    "plugin:window|set_size",
    "plugin:window|show",
    "plugin:webview|create_webview_window",
    "plugin:webview|set_webview_size",
    "plugin:app|app_show",
    "plugin:path|resolve_directory",
];

/// Every command the app registers: the one table (src-tauri/src/commands/table.rs), from which
/// the invoke handler and the permissions are made.
fn registered() -> Vec<String> {
    let names: Vec<String> = TABLE.iter().map(|c| c.name.to_string()).collect();
    assert!(names.len() > 20, "the table has {names:?}");
    names
}

struct Capability {
    windows: Vec<String>,
    /// App commands granted (`allow-<command>`).
    commands: BTreeSet<String>,
    /// Core permissions, as written.
    core: BTreeSet<String>,
}

fn capabilities() -> Vec<Capability> {
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(root().join("capabilities"))
        .expect("capabilities/")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    for path in files {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read"))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let strings = |k: &str| -> Vec<String> {
            v[k].as_array()
                .unwrap_or_else(|| panic!("{}: no {k}[]", path.display()))
                .iter()
                .map(|s| s.as_str().expect("a string").to_string())
                .collect()
        };
        // App commands are granted in the table only; the file holds the core permissions.
        let core: BTreeSet<String> = strings("permissions").into_iter().collect();
        assert!(
            core.iter().all(|p| !p.starts_with("allow-")),
            "{}: an app command granted outside the table",
            path.display()
        );
        let kind = v["identifier"].as_str().expect("identifier");
        let commands = TABLE
            .iter()
            .filter(|c| c.windows.contains(&kind))
            .map(|c| c.name.to_string())
            .collect();
        out.push(Capability {
            windows: strings("windows"),
            commands,
            core,
        });
    }
    out
}

fn matches(pattern: &str, label: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => label.starts_with(prefix),
        None => pattern == label,
    }
}

/// What `label` is granted: app commands and core permissions of every capability naming it.
fn grants(caps: &[Capability], label: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut commands, mut core) = (BTreeSet::new(), BTreeSet::new());
    for c in caps
        .iter()
        .filter(|c| c.windows.iter().any(|w| matches(w, label)))
    {
        commands.extend(c.commands.iter().cloned());
        core.extend(c.core.iter().cloned());
    }
    (commands, core)
}

/// Arguments that keep an allowed command from reaching anything outside the test: the command
/// runs (or rejects its arguments) after the ACL let it through.
fn probe_args(cmd: &str) -> Value {
    match cmd {
        "backend_test" | "backend_models" => {
            let dead = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let base = format!("http://127.0.0.1:{dead}/v1");
            json!({"overrides": {"base_url": base, "model": "m"}, "baseUrl": base})
        }
        // Refused by the core before any window is touched (the mock runtime has no GTK window).
        "window_input_region" => json!({"rects": []}),
        _ => json!({}),
    }
}

fn refused(r: &Result<Value, Value>) -> bool {
    matches!(r, Err(e) if e.to_string().contains("not allowed"))
}

#[test]
fn every_window_kind_is_refused_every_command_outside_its_list() {
    std::env::set_var(yui_core::discover::PORTS_ENV, "none");
    let h = support::harness();
    std::env::set_var("YUI_CONFIG_DIR", h.dir.path().join("config"));
    let caps = capabilities();
    let cmds = registered();
    let mut granted_somewhere = BTreeSet::new();
    for label in LABELS {
        let (granted, core) = grants(&caps, label);
        // A grant of a command the app does not register is a stale line in a capability.
        for g in &granted {
            assert!(cmds.contains(g), "{label} is granted unknown command {g}");
        }
        for p in &core {
            assert!(
                CORE.iter().any(|(perm, ..)| perm == p),
                "{label}: core permission {p} is not in CORE (name the plugin command and the JS call that needs it)"
            );
        }
        let w = window(&h, label);
        for cmd in &cmds {
            let r = invoke(&w, cmd, probe_args(cmd));
            if granted.contains(cmd) {
                assert!(!refused(&r), "{label} must be allowed {cmd}: {r:?}");
            } else {
                assert!(refused(&r), "{label} must be refused {cmd}: {r:?}");
            }
        }
        for (perm, plugin_cmd, _) in CORE {
            let r = invoke(&w, plugin_cmd, json!({}));
            if core.contains(*perm) {
                assert!(!refused(&r), "{label} must be allowed {plugin_cmd}: {r:?}");
            } else {
                assert!(refused(&r), "{label} must be refused {plugin_cmd}: {r:?}");
            }
        }
        for cmd in GONE.iter().chain(CORE_NEVER) {
            let r = invoke(&w, cmd, json!({}));
            let text = format!("{r:?}");
            assert!(
                r.is_err() && (text.contains("not allowed") || text.contains("not found")),
                "{label} must not reach {cmd}: {text}"
            );
        }
        granted_somewhere.extend(granted);
    }
    // Every registered command is some window's: a command no window may call is dead surface.
    for cmd in &cmds {
        assert!(
            granted_somewhere.contains(cmd),
            "{cmd} is granted to no window: remove it"
        );
    }
    // A window showing no IPC at all (the start-up error page, an unknown label) really has none.
    for label in ["error", "stray"] {
        assert_eq!(grants(&caps, label), Default::default(), "{label}");
    }
}

/// The JS modules a page loads: its `<script type="module" src>` and everything they import.
fn module_graph(page: &str) -> BTreeMap<PathBuf, String> {
    let html_path = root().join(page);
    let html = std::fs::read_to_string(&html_path).expect("page");
    let mut todo: Vec<PathBuf> = html
        .split("<script")
        .skip(1)
        .filter_map(|tag| tag.split("src=\"").nth(1)?.split('"').next())
        .map(|src| html_path.parent().unwrap().join(src))
        .collect();
    let mut out = BTreeMap::new();
    while let Some(path) = todo.pop() {
        let path = normalize(&path);
        if out.contains_key(&path) {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        for line in src
            .lines()
            .filter(|l| l.trim_start().starts_with("import "))
        {
            if let Some(spec) = line.split(['"', '\'']).nth(1) {
                todo.push(path.parent().unwrap().join(spec));
            }
        }
        out.insert(path, src);
    }
    assert!(!out.is_empty(), "{page} loads no module");
    out
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn quotes(cmd: &str) -> [String; 3] {
    [format!("\"{cmd}\""), format!("'{cmd}'"), format!("`{cmd}`")]
}

/// ipc.js's wrappers: `export function name(...)` → the commands its body invokes.
fn wrappers(ipc: &str, cmds: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for part in ipc.split("export function ").skip(1) {
        let name = part.split('(').next().unwrap_or("").trim().to_string();
        let body = part.split("\nexport ").next().unwrap_or(part);
        for cmd in cmds {
            if quotes(cmd).iter().any(|q| body.contains(q.as_str())) {
                out.push((name.clone(), cmd.clone()));
            }
        }
    }
    out
}

/// What a page's modules invoke: a command named as a string literal outside ipc.js, or called
/// through one of ipc.js's wrappers (`windowContext()` → `window_context`).
fn used_by(modules: &BTreeMap<PathBuf, String>, cmds: &[String]) -> BTreeSet<String> {
    let ipc = read("ui/js/ipc.js");
    let wrapped = wrappers(&ipc, cmds);
    assert!(
        wrapped
            .iter()
            .any(|(n, c)| n == "windowContext" && c == "window_context"),
        "ipc.js wrappers: {wrapped:?}"
    );
    let mut used = BTreeSet::new();
    for (path, src) in modules {
        if path.ends_with("js/ipc.js") {
            continue;
        }
        for cmd in cmds {
            if quotes(cmd).iter().any(|q| src.contains(q.as_str())) {
                used.insert(cmd.clone());
            }
        }
        for (name, cmd) in &wrapped {
            if src.contains(&format!("{name}(")) {
                used.insert(cmd.clone());
            }
        }
    }
    used
}

#[test]
fn every_grant_is_used_by_the_windows_own_ui() {
    let caps = capabilities();
    let cmds = registered();
    for label in LABELS {
        let Some(kind) = WindowLabel::parse(label) else {
            assert_eq!(grants(&caps, label), Default::default(), "{label}");
            continue;
        };
        let modules = module_graph(page_of(&kind));
        let used = used_by(&modules, &cmds);
        let (granted, core) = grants(&caps, label);
        let unused: Vec<_> = granted.difference(&used).collect();
        assert!(
            unused.is_empty(),
            "{label} is granted {unused:?} that its UI ({}) never invokes: remove the grant",
            page_of(&kind)
        );
        let all: String = modules
            .iter()
            .filter(|(p, _)| !p.ends_with("js/ipc.js"))
            .map(|(_, s)| s.as_str())
            .collect();
        for p in &core {
            let (_, _, call) = CORE.iter().find(|(perm, ..)| perm == p).expect("known");
            assert!(
                all.contains(call),
                "{label} holds {p} but its UI never calls {call}"
            );
        }
    }
}

/// The CSP directive `name`'s sources.
fn csp_sources(csp: &Value, name: &str) -> Vec<String> {
    csp[name]
        .as_str()
        .unwrap_or_else(|| panic!("the CSP has no {name}"))
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_csp_forbids_inline_eval_and_remote_script() {
    let conf: Value = serde_json::from_str(&read("tauri.conf.json")).expect("tauri.conf.json");
    let security = &conf["app"]["security"];
    let csp = &security["csp"];
    assert!(csp.is_object(), "no CSP: {security}");
    assert_eq!(csp_sources(csp, "default-src"), ["'self'"]);
    assert_eq!(csp_sources(csp, "script-src"), ["'self'"]);
    assert_eq!(csp_sources(csp, "object-src"), ["'none'"]);
    assert_eq!(csp_sources(csp, "base-uri"), ["'none'"]);
    assert_eq!(csp_sources(csp, "frame-src"), ["'none'"]);
    assert_eq!(csp_sources(csp, "form-action"), ["'none'"]);
    // The IPC only: a page cannot fetch from the model server, or anywhere else.
    assert_eq!(
        csp_sources(csp, "connect-src"),
        ["ipc:", "http://ipc.localhost"]
    );
    for (name, value) in csp.as_object().unwrap() {
        let sources: Vec<&str> = value
            .as_str()
            .expect("a string")
            .split_whitespace()
            .collect();
        for s in &sources {
            assert!(
                !matches!(
                    *s,
                    "'unsafe-eval'" | "'wasm-unsafe-eval'" | "*" | "http:" | "https:"
                ),
                "{name} allows {s}"
            );
            // Remote hosts: none, but the IPC origin in connect-src.
            let remote = s.starts_with("http") || s.starts_with("ws") || s.contains("://");
            assert!(
                !remote || (name == "connect-src" && *s == "http://ipc.localhost"),
                "{name} allows the remote source {s}"
            );
        }
        if name != "style-src" {
            assert!(
                !sources.contains(&"'unsafe-inline'"),
                "{name} allows inline code"
            );
        }
    }
    // Tauri adds its nonces and hashes to script-src (its own bootstrap scripts); only style-src
    // is left alone (inline styles, no script).
    assert_eq!(
        security["dangerousDisableAssetCspModification"],
        json!(["style-src"])
    );
    assert_eq!(security["freezePrototype"], true);
}
