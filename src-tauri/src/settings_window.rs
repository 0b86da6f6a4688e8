//! The tool windows opened by name (`window_open`), and the settings window opened at one of its
//! sections (a character's menu: Look… opens
//! `settings.html#character/<preset id>`); the page shows the section the address names
//! (ui/js/settings-nav.js).

use crate::error::tauri_err;
use crate::label::WindowLabel;
use crate::windows::{build_tool_window, show_phone, show_tool_window};
use tauri::{AppHandle, Manager, Runtime};
use yui_core::CoreError;

/// Open (or focus) settings, at `section` if given (`<section id>[/<preset id>]`, ids of
/// lowercase letters, digits, `-` and `_`): a new window loads `settings.html#<section>`, an
/// open one is sent to it (its page follows `location.hash`, ui/js/settings-nav.js).
pub fn show_settings<R: Runtime>(
    app: &AppHandle<R>,
    section: Option<&str>,
) -> Result<(), CoreError> {
    if let Some(s) = section {
        let ok = s.split('/').count() <= 2
            && s.split('/').all(|p| {
                !p.is_empty()
                    && p.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_'
                    })
            });
        if !ok {
            return Err(CoreError::invalid(format!(
                "unknown settings section {s:?}"
            )));
        }
    }
    let existed = app
        .get_webview_window(&WindowLabel::Settings.as_label())
        .is_some();
    let w = build_tool_window(app, &WindowLabel::Settings, section)?;
    if let (true, Some(s)) = (existed, section) {
        // Checked above: only [a-z0-9_/-], so the string is a plain JS literal.
        w.eval(format!("location.hash = '#{s}'"))
            .map_err(tauri_err)?;
    }
    Ok(())
}

/// Open (or focus) the window labelled `which`: `settings` (at `section`, if one is given),
/// `quick`, or a character's phone (`phone-<presetId>`).
pub fn open_named<R: Runtime>(
    app: &AppHandle<R>,
    which: &str,
    section: Option<&str>,
) -> Result<(), CoreError> {
    match WindowLabel::parse(which) {
        Some(WindowLabel::Settings) => show_settings(app, section.filter(|s| !s.is_empty())),
        Some(l @ WindowLabel::Quick) => show_tool_window(app, &l),
        Some(WindowLabel::Phone(id)) => show_phone(app, &id),
        _ => Err(CoreError::invalid(format!("cannot open window {which:?}"))),
    }
}
