//! Build script: compiles the root `tauri.conf.json` and the app's permissions and capabilities,
//! all from the one command table (`src/commands/table.rs`): one `allow-<command>` permission per
//! command, and each window kind's capability = its file in `capabilities/` (windows, core
//! permissions) plus the commands the table grants it, written to OUT_DIR for tauri-build.

use std::path::Path;

/// `table.rs` read as data here: (command, window kinds). The crate reads the same file with a
/// macro of its own (commands/mod.rs) that makes the invoke handler.
macro_rules! yui_commands {
    ($($area:ident :: $name:ident => [$($window:ident),* $(,)?];)*) => {
        const TABLE: &[(&str, &[&str])] = &[$((stringify!($name), &[$(stringify!($window)),*])),*];
    };
}

include!("src/commands/table.rs");

fn main() {
    println!("cargo:rerun-if-changed=src-tauri/src/commands/table.rs");
    println!("cargo:rerun-if-changed=capabilities");
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    let generated = Path::new(&out).join("capabilities");
    if let Err(e) = write_capabilities(Path::new("capabilities"), &generated) {
        panic!("capabilities: {e}");
    }
    let pattern: &'static str =
        Box::leak(format!("{}/*.json", generated.display()).into_boxed_str());
    let commands: &'static [&str] = Vec::leak(TABLE.iter().map(|(name, _)| *name).collect());
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(commands))
            .capabilities_path_pattern(pattern),
    )
    .expect("failed to run tauri-build");
}

/// Each `capabilities/<kind>.json` with the table's grants for `<kind>` appended to its
/// permissions. A kind the table names that has no file, or an app grant written by hand in a
/// file, stops the build: the table is the one place for them.
fn write_capabilities(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let mut kinds = Vec::new();
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut cap: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let kind = cap["identifier"].as_str().unwrap_or_default().to_string();
        let permissions = cap["permissions"]
            .as_array_mut()
            .ok_or_else(|| format!("{}: no permissions list", path.display()))?;
        if let Some(p) = permissions
            .iter()
            .find(|p| p.as_str().is_some_and(|p| p.starts_with("allow-")))
        {
            return Err(format!(
                "{}: {p} is an app command's grant; grant it in src-tauri/src/commands/table.rs",
                path.display()
            ));
        }
        for (name, windows) in TABLE {
            if windows.contains(&kind.as_str()) {
                permissions.push(format!("allow-{}", name.replace('_', "-")).into());
            }
        }
        // The schema path is relative to the source folder.
        if let Some(obj) = cap.as_object_mut() {
            obj.remove("$schema");
        }
        let file = to.join(path.file_name().unwrap_or_default());
        let json = serde_json::to_string_pretty(&cap).map_err(|e| e.to_string())?;
        std::fs::write(&file, json).map_err(|e| format!("{}: {e}", file.display()))?;
        kinds.push(kind);
    }
    for (name, windows) in TABLE {
        if let Some(w) = windows.iter().find(|w| !kinds.iter().any(|k| k == *w)) {
            return Err(format!(
                "table.rs: {name} names the window kind {w}, which has no capabilities/{w}.json"
            ));
        }
    }
    Ok(())
}
