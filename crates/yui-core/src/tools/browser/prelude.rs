//! The script the CLI receives: the contract's prelude around the backend's `code`.
//!
//! The prelude names the task space, wires `screenshot(page)` to the call's folder and arms the
//! script's own deadline. `code` starts on line 6, which is why the tool description says error
//! line numbers are 5 more than the line in `code`.

use std::path::Path;

/// The task-space name of a preset: `yui-<presetId>`.
pub fn space_name(preset_id: &str) -> String {
    format!("yui-{preset_id}")
}

/// The line `code` starts on in the script.
pub const CODE_LINE: usize = 6;

/// The full script: prelude, `code` from line 6, then the closing `catch`/`finally`.
///
/// The space name is written as a JSON string literal (valid JavaScript) and the folder is escaped
/// for a template literal, so an odd preset id or temp path cannot break out of the prelude; for
/// ordinary values both come out exactly as the contract prints them.
pub fn build(space: &str, shot_dir: &Path, deadline_ms: u128, code: &str) -> String {
    let space_lit = serde_json::to_string(space).unwrap_or_else(|_| "\"\"".to_string());
    let folder = template_escape(&shot_dir.to_string_lossy());
    format!(
        "const __yuiDeadline = setTimeout(() => {{ console.error(\"[yui] deadline\"); process.exit(124); }}, {deadline_ms});\n\
         try {{\n  const task = await taskSpace({space_lit});\n  let __yuiShot = 0;\n  \
         const screenshot = (page) => page.screenshot({{ path: `{folder}/${{String(++__yuiShot).padStart(3, \"0\")}}.png` }});\n\
         {code}\n\
         }} catch (e) {{\n  console.error(String(e?.stack ?? e));\n  process.exit(1);\n}} finally {{\n  clearTimeout(__yuiDeadline);\n}}\n"
    )
}

/// Escapes text for the inside of a JavaScript template literal.
fn template_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '`' | '$') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_starts_on_line_6_and_prelude_is_exact() {
        let s = build("yui-p1", Path::new("/tmp/yui-browser-1-2-3"), 25000, "CODE");
        let expected = r#"const __yuiDeadline = setTimeout(() => { console.error("[yui] deadline"); process.exit(124); }, 25000);
try {
  const task = await taskSpace("yui-p1");
  let __yuiShot = 0;
  const screenshot = (page) => page.screenshot({ path: `/tmp/yui-browser-1-2-3/${String(++__yuiShot).padStart(3, "0")}.png` });
CODE
} catch (e) {
  console.error(String(e?.stack ?? e));
  process.exit(1);
} finally {
  clearTimeout(__yuiDeadline);
}
"#;
        assert_eq!(s, expected);
        assert_eq!(s.lines().nth(CODE_LINE - 1), Some("CODE"));
    }

    #[test]
    fn odd_names_stay_inside_their_literals() {
        let s = build("yui-a\"b", Path::new("/t/`${x}\\"), 1, "");
        assert!(s.contains(r#"taskSpace("yui-a\"b")"#));
        assert!(s.contains(r"/t/\`\${x}\\/"));
    }
}
