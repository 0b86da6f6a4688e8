//! The settings layering (issue 12, "typed settings"): yui-domain's `settings.rs` declares every
//! key once and
//! uses the domain modules' validators and defaults; those modules read and write their own keys
//! through `store::kv` and never import `settings`, so there is no import cycle. This test reads
//! the sources, so a change that brings the cycle back fails here.

use std::path::Path;

/// The domain modules `settings.rs` takes validators and defaults from.
const DOMAINS: &[&str] = &[
    "crate::backend::",
    "crate::voice::",
    "crate::vocab::",
    "crate::timeouts::",
    "crate::avatar::",
    "crate::presence::",
    "crate::autostart::",
    "crate::longterm::",
    "crate::model::",
    "crate::manners::",
    "crate::display::",
    "crate::layout::",
];

/// Where the modules `settings.rs` names live: yui-domain's own, then yui-base's (re-exported
/// under the same names), from this crate's folder.
const CRATES: &[&str] = &["../yui-domain/src", "../yui-base/src"];

/// The source files of a module path: `<crate>/a/b.rs`, or every file under `<crate>/a/b/`.
fn files_of(module: &str) -> Vec<String> {
    let rel = module
        .trim_start_matches("crate::")
        .trim_end_matches("::")
        .replace("::", "/");
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    for src in CRATES {
        let root = here.join(src);
        if root.join(format!("{rel}.rs")).is_file() {
            return vec![format!("{src}/{rel}.rs")];
        }
        let Ok(dir) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        let mut out: Vec<String> = dir
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".rs"))
            .map(|n| format!("{src}/{rel}/{n}"))
            .collect();
        out.sort();
        assert!(!out.is_empty(), "{module}: no sources");
        return out;
    }
    panic!("{module}: neither {rel}.rs nor {rel}/ in {CRATES:?}")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn settings_uses_only_the_listed_domain_modules_and_none_of_them_imports_settings() {
    let settings = read("../yui-domain/src/settings.rs");
    // Every crate path settings.rs names is the error type, the store, or a listed domain.
    for (i, _) in settings.match_indices("crate::") {
        let path: String = settings[i..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let ok = path.starts_with("crate::error")
            || path.starts_with("crate::store")
            || DOMAINS.iter().any(|prefix| path.starts_with(prefix));
        assert!(
            ok,
            "settings.rs uses {path}, which is not a listed domain module"
        );
    }
    for module in DOMAINS {
        for f in files_of(module) {
            let src = read(&f);
            for needle in ["crate::settings", "use crate::settings", "settings::"] {
                assert!(
                    !src.lines()
                        .filter(|l| !l.trim_start().starts_with("//"))
                        .any(|l| l.contains(needle)),
                    "{f} refers to settings ({needle}): read the key through store::kv instead"
                );
            }
        }
    }
}
