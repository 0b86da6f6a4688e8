//! The settings layering (issue 12, "typed settings"): `settings.rs` declares every key once and
//! uses the domain modules' validators and defaults; those modules read and write their own keys
//! through `store::kv` and never import `settings`, so there is no import cycle. This test reads
//! the sources, so a change that brings the cycle back fails here.

use std::path::Path;

/// The domain modules `settings.rs` takes validators and defaults from, and their files.
const DOMAINS: &[(&str, &[&str])] = &[
    ("crate::backend::", &["src/backend.rs"]),
    ("crate::voice::", &["src/voice.rs"]),
    ("crate::vocab::", &["src/vocab.rs"]),
    ("crate::turn::sse::", &["src/turn/sse.rs"]),
    (
        "crate::tools::command::select::",
        &["src/tools/command/select.rs"],
    ),
    (
        "crate::avatar::",
        &[
            "src/avatar/mod.rs",
            "src/avatar/body.rs",
            "src/avatar/geometry.rs",
            "src/avatar/capture.rs",
        ],
    ),
];

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn settings_uses_only_the_listed_domain_modules_and_none_of_them_imports_settings() {
    let settings = read("src/settings.rs");
    // Every crate path settings.rs names is the error type, the store, or a listed domain.
    for (i, _) in settings.match_indices("crate::") {
        let path: String = settings[i..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let ok = path.starts_with("crate::error")
            || path.starts_with("crate::store")
            || DOMAINS.iter().any(|(prefix, _)| path.starts_with(prefix));
        assert!(
            ok,
            "settings.rs uses {path}, which is not a listed domain module"
        );
    }
    for (_, files) in DOMAINS {
        for f in *files {
            let src = read(f);
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
