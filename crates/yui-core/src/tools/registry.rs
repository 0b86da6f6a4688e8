//! The one place that declares which tools each window gets, and the start-up check of the
//! registry.
//!
//! Order: generate_express first (when the vocabulary is not empty), then the tools the window
//! hands over — main: rate_relation, address_character, browser, body_action, look; a pet window
//! under Tauri: rate_relation, address_character, browser; the browser build: rate_relation,
//! address_character; the phone window: none.

use super::*;

/// The names a window kind hands to the registry, in declaration order (after generate_express).
pub fn handed_tools(kind: WindowKind) -> &'static [&'static str] {
    match kind {
        WindowKind::Main => &[RATE_RELATION, ADDRESS_CHARACTER, BROWSER, BODY_ACTION, LOOK],
        WindowKind::Pet => &[RATE_RELATION, ADDRESS_CHARACTER, BROWSER],
        WindowKind::BrowserBuild => &[RATE_RELATION, ADDRESS_CHARACTER],
        WindowKind::Phone => &[],
    }
}
