//! The shell's rules that only reading the sources can check (docs/ARCHITECTURE.md, "The shell
//! only forwards"). Each test names its rule precisely; comments (`//`) are left out of every
//! search.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Every `.rs` file under `src-tauri/src`, with its path relative to `src-tauri/src` and its
/// text without `//` comments.
fn shell_sources() -> Vec<(String, String)> {
    let base = root().join("src-tauri/src");
    let mut out = Vec::new();
    let mut dirs = vec![base.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src-tauri/src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(&base)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                let text = std::fs::read_to_string(&path).expect("read source");
                out.push((rel, without_comments(&text)));
            }
        }
    }
    out.sort();
    out
}

/// The text with every `//` comment removed (outside string literals).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| {
            let mut in_str = false;
            let b = line.as_bytes();
            for i in 0..b.len() {
                match b[i] {
                    b'"' if i == 0 || b[i - 1] != b'\\' => in_str = !in_str,
                    b'/' if !in_str && b.get(i + 1) == Some(&b'/') => return &line[..i],
                    _ => {}
                }
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each `#[tauri::command]` function in `text`: its name and its body (inside the outer braces).
fn commands(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("#[tauri::command]") {
        let rest = &text[at..];
        let name_at = rest.find("fn ").expect("a command is a fn") + 3;
        let name: String = rest[name_at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // The body opens at the first `{` after the signature's closing `)` of the arguments and
        // its return type (signatures hold no braces).
        let open = rest.find('{').expect("a body");
        let mut depth = 0;
        let mut end = open;
        for (i, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push((name, rest[open + 1..end].to_string()));
    }
    out
}

/// Why `body` is not one delegation: a statement at the top (a `;` outside every bracket) or a
/// decision or binding anywhere (`let`, `if`, `match`, `for`, `while`, `loop`).
fn not_one_call(body: &str) -> Option<String> {
    let mut depth = 0i32;
    let mut in_str = false;
    let mut prev = ' ';
    for c in body.chars() {
        match c {
            '"' if prev != '\\' => in_str = !in_str,
            '(' | '[' | '{' if !in_str => depth += 1,
            ')' | ']' | '}' if !in_str => depth -= 1,
            ';' if !in_str && depth == 0 => return Some("more than one statement".into()),
            _ => {}
        }
        prev = c;
    }
    let words: Vec<&str> = body
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    ["let", "if", "match", "for", "while", "loop"]
        .into_iter()
        .find(|k| words.contains(k))
        .map(|k| format!("`{k}` in the body"))
}

/// Rule: every `#[tauri::command]` body is one call into the core (or a thin shell helper): one
/// expression with no `;` at its top, and no `let`, `if`, `match`, `for`, `while` or `loop`
/// anywhere in it. Logic a command needs belongs in yui-core.
#[test]
fn commands_delegate_in_one_line() {
    let mut seen = 0;
    let mut bad = Vec::new();
    for (file, text) in shell_sources() {
        for (name, body) in commands(&text) {
            seen += 1;
            if let Some(why) = not_one_call(&body) {
                bad.push(format!("{file}: {name}: {why}"));
            }
        }
    }
    // Every registered command was read (the scan cannot pass by seeing none).
    assert_eq!(
        seen,
        yui_app::commands::TABLE.len(),
        "commands found vs the command table"
    );
    assert!(
        bad.is_empty(),
        "commands that do more than delegate:\n{}",
        bad.join("\n")
    );
}

/// Rule: the command table (`commands/table.rs`) is the one list of commands. Every
/// `#[tauri::command]` is a line of it, written as `<its file under commands/>::<its name>`, and
/// every line names such a command once; a command written elsewhere in the shell, or missing
/// from the table (so registered and granted nowhere), fails here.
#[test]
fn every_command_is_one_line_of_the_one_table() {
    let table = without_comments(
        &std::fs::read_to_string(root().join("src-tauri/src/commands/table.rs")).unwrap(),
    );
    let mut listed: Vec<String> = table
        .lines()
        .filter_map(|l| l.split_once("=>").map(|(c, _)| c.trim().to_string()))
        .collect();
    let mut written = Vec::new();
    for (file, text) in shell_sources() {
        for (name, _) in commands(&text) {
            match file
                .strip_prefix("commands/")
                .and_then(|f| f.strip_suffix(".rs"))
            {
                Some(area) => written.push(format!("{area}::{name}")),
                None => panic!("{file}: {name} is a command outside commands/"),
            }
        }
    }
    let count = listed.len();
    listed.sort();
    listed.dedup();
    assert_eq!(count, listed.len(), "a command listed twice in table.rs");
    written.sort();
    assert_eq!(
        written, listed,
        "#[tauri::command] functions (left) and the lines of commands/table.rs (right) differ"
    );
    let names: Vec<&str> = yui_app::commands::TABLE.iter().map(|c| c.name).collect();
    assert_eq!(names.len(), count, "the table as compiled: {names:?}");
}

fn source(rel: &str) -> String {
    shell_sources()
        .into_iter()
        .find(|(f, _)| f == rel)
        .map(|(_, t)| t)
        .unwrap_or_else(|| panic!("{rel} not found"))
}

fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Rule: the shell decides nothing. `src-tauri/src/stage.rs`, the shell's end of the stage,
/// - reads nothing from the store: the store's one mention is handing it to `Stage::new`, and it
///   names none of the core's data modules (`presets`, `relations`, `settings`, `vocab`,
///   `transcript`);
/// - keeps no state: no `HashMap`, `BTreeMap`, `Mutex`, `RwLock`, `Channel` or `turn_id`;
/// - picks no window: it names no `WindowKind`, no `label_for` and no `StageEvent` variant: an
///   event's windows are `StageEvent::to`, its name `BridgeEvent::of`, its payload
///   `StageEvent::payload`.
#[test]
fn the_shell_decides_nothing() {
    let text = source("stage.rs");
    let w = words(&text);
    let count = |word: &str| w.iter().filter(|x| **x == word).count();
    let mut bad = Vec::new();
    if count("store") != 1 || !text.contains("state.store.clone()") {
        bad.push(format!(
            "`store` used {} times (only Stage::new's argument may)",
            count("store")
        ));
    }
    for word in [
        "presets",
        "relations",
        "settings",
        "vocab",
        "transcript",
        "HashMap",
        "BTreeMap",
        "Mutex",
        "RwLock",
        "Channel",
        "turn_id",
        "WindowKind",
        "label_for",
    ] {
        if count(word) > 0 {
            bad.push(format!("names `{word}`"));
        }
    }
    for (i, _) in text.match_indices("StageEvent::") {
        let variant: String = text[i + "StageEvent::".len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric())
            .collect();
        bad.push(format!("names the variant StageEvent::{variant}"));
    }
    assert!(
        bad.is_empty(),
        "src-tauri/src/stage.rs decides:\n{}",
        bad.join("\n")
    );
}

/// Rule: windows opening and closing reach the stage from one place: only `stage.rs` calls the
/// stage's `window_opened`, `window_closed`, `opened` or `closed`.
#[test]
fn windows_are_reported_to_the_stage_in_one_place() {
    let mut bad = Vec::new();
    for (file, text) in shell_sources() {
        for call in [".window_opened(", ".window_closed(", ".opened(", ".closed("] {
            if file != "stage.rs" && text.contains(call) {
                bad.push(format!("{file} calls {call}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Rule: the stage's events (turns played on a window, playback, addressed turns, connections
/// and the core's change events) leave the shell in one place: `StageEvent` is named only in
/// `stage.rs` (the forwarder) and `bridge.rs` (the names), and no other file names their bridge
/// events, so no command emits a change event of its own.
#[test]
fn stage_events_are_forwarded_in_one_place() {
    let forwarded = [
        "CharacterTurn",
        "PlaybackFinished",
        "CharacterAddressed",
        "Connection",
        "PresetsChanged",
        "SwitchesChanged",
        "VocabChanged",
        "RelationsChanged",
        "SettingsChanged",
    ];
    let mut bad = Vec::new();
    for (file, text) in shell_sources() {
        if file == "bridge.rs" {
            continue;
        }
        if file != "stage.rs" && words(&text).contains(&"StageEvent") {
            bad.push(format!("{file} names StageEvent"));
        }
        for v in forwarded {
            if text.contains(&format!("BridgeEvent::{v}")) {
                bad.push(format!("{file} emits BridgeEvent::{v}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Rule: every event to a window leaves in one place: `stage.rs` forwards the stage's events
/// through `bridge.rs`; nothing else calls `emit`, `emit_to` or `bridge::emit` (presence,
/// visibility and the body's state are stage events too).
#[test]
fn window_events_are_emitted_in_one_place() {
    let mut emitting = Vec::new();
    for (file, text) in shell_sources() {
        if file == "stage.rs" || file == "bridge.rs" {
            continue;
        }
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        if [".emit(", ".emit_to(", "bridge::emit("]
            .iter()
            .any(|e| code.contains(e))
        {
            emitting.push(file);
        }
    }
    assert!(
        emitting.is_empty(),
        "files that emit to windows outside stage.rs/bridge.rs (send a stage event instead): \
         {emitting:?}"
    );
}

/// Rule: the UI copies no rule of the core. No module in `ui/js` names a voice type of
/// `yui_core::presets::VOICE_TYPES` or more than one palette of `PALETTES` (they come from
/// `preset_choices` and `look_options`), and none combines a motion's `reactive`, `ambient` and
/// `broker_publish` flags in one condition (which motions may be offered comes from
/// `vocab_offerable`).
#[test]
fn the_ui_copies_no_core_rule() {
    let dir = root().join("ui/js");
    let mut bad = Vec::new();
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "js") {
            continue;
        }
        read += 1;
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let quoted =
            |w: &str| text.contains(&format!("\"{w}\"")) || text.contains(&format!("'{w}'"));
        for v in yui_core::presets::VOICE_TYPES {
            if quoted(v) {
                bad.push(format!("{name} names the voice type {v}"));
            }
        }
        let palettes: Vec<_> = yui_core::presets::PALETTES
            .iter()
            .filter(|p| quoted(p))
            .collect();
        if palettes.len() > 1 {
            bad.push(format!("{name} lists palettes {palettes:?}"));
        }
        for line in text.lines() {
            let flags = ["reactive", "ambient", "broker_publish"];
            if flags.iter().all(|f| line.contains(f))
                && (line.contains("&&") || line.contains("||"))
            {
                bad.push(format!(
                    "{name} decides which motions are offered: {}",
                    line.trim()
                ));
            }
        }
    }
    assert!(read > 5, "read ui/js");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A file's module path (`windows/build.rs` → `["windows", "build"]`; `lib.rs` → `[]`).
fn module_of(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// Each path in `text` that follows the word `lead` (`crate`, `super`, `use`): its `::` segments.
fn paths_after(text: &str, lead: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices(lead) {
        let before = text[..at].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[at + lead.len()..];
        let rest = if lead == "use" {
            if !rest.starts_with(char::is_whitespace) {
                continue;
            }
            rest.trim_start()
        } else {
            rest
        };
        let path: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let segs: Vec<String> = path
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        if !segs.is_empty() {
            out.push(segs);
        }
    }
    out
}

/// Rule: no import cycle among the shell's files. An arrow runs from a file to the deepest
/// module file a `crate::…`, `super::…` or `use child::…` path of it names (declaring a child
/// with `mod` is no arrow; re-exporting it with `pub use` is). The files may form no loop
/// (Tarjan's strongly connected components, each of more than one file, is a cycle).
#[test]
fn the_shell_has_no_import_cycle() {
    let files = shell_sources();
    let modules: std::collections::HashMap<Vec<String>, String> = files
        .iter()
        .map(|(f, _)| (module_of(f), f.clone()))
        .collect();
    let resolve = |path: &[String]| {
        (1..=path.len())
            .rev()
            .find_map(|k| modules.get(&path[..k]).cloned())
    };
    let mut edges: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    for (file, text) in &files {
        let me = module_of(file);
        let is_dir = file.ends_with("mod.rs") || file == "lib.rs";
        let parent: Vec<String> = me[..me.len().saturating_sub(1)].to_vec();
        let here: Vec<String> = if is_dir { me.clone() } else { parent.clone() };
        let mut targets = Vec::new();
        targets.extend(paths_after(text, "crate"));
        // `super` is the parent module, for a `mod.rs` as for a plain file.
        for segs in paths_after(text, "super") {
            targets.push(parent.iter().cloned().chain(segs).collect());
        }
        for segs in paths_after(text, "use") {
            let first = segs[0].clone();
            if [
                "crate",
                "super",
                "self",
                "std",
                "core",
                "tauri",
                "serde",
                "serde_json",
                "yui_core",
                "tokio",
                "tracing",
            ]
            .contains(&first.as_str())
            {
                continue;
            }
            // Only a child module of this one (`use build::…` in a `mod.rs`): other crates too
            // are named bare (`use gtk::…`).
            let child: Vec<String> = here.iter().cloned().chain([first]).collect();
            if modules.contains_key(&child) {
                targets.push(here.iter().cloned().chain(segs).collect());
            }
        }
        if file == "lib.rs" {
            // The crate root names its modules bare (`windows::sync_characters`).
            for (at, _) in text.match_indices("::") {
                let word: String = text[..at]
                    .chars()
                    .rev()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                targets.push(vec![word]);
            }
        }
        let set = edges.entry(file.clone()).or_default();
        for t in targets {
            if let Some(to) = resolve(&t) {
                if &to != file && to != "lib.rs" {
                    set.insert(to);
                }
            }
        }
    }
    let cycles = strongly_connected(&edges);
    assert!(
        cycles.is_empty(),
        "import cycles in src-tauri/src:\n{}",
        cycles
            .iter()
            .map(|c| c
                .iter()
                .map(|f| format!(
                    "  {f} -> {:?}",
                    edges[f]
                        .iter()
                        .filter(|t| c.contains(t))
                        .collect::<Vec<_>>()
                ))
                .collect::<Vec<_>>()
                .join("\n"))
            .collect::<Vec<_>>()
            .join("\n---\n")
    );
    assert!(
        edges.values().map(|e| e.len()).sum::<usize>() > 20,
        "the scan found the imports"
    );
}

/// The strongly connected components of more than one node (Tarjan).
fn strongly_connected(
    edges: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Vec<Vec<String>> {
    struct T<'a> {
        edges: &'a std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        index: std::collections::HashMap<&'a str, usize>,
        low: std::collections::HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: std::collections::HashSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        for w in t.edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        edges,
        index: Default::default(),
        low: Default::default(),
        stack: Vec::new(),
        on: Default::default(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}
