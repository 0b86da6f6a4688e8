//! Window kinds, as the contract names them. Which tools each kind declares lives in
//! `yui_core::tools::registry`, the one place that decides it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowKind {
    /// The main character window (owns the avatar executor: body_action, look).
    Main,
    /// A pet window under Tauri, one per other open preset.
    Pet,
    /// The browser build (no Tauri): no browser tool, no avatar tools.
    BrowserBuild,
    /// The phone window: no client tools besides generate_express.
    Phone,
}

impl WindowKind {
    /// The contract's name (`main`, `pet`, `browser_build`, `phone`), as push `hello.window`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Main => "main",
            Self::Pet => "pet",
            Self::BrowserBuild => "browser_build",
            Self::Phone => "phone",
        }
    }
}

impl std::str::FromStr for WindowKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "main" => Ok(Self::Main),
            "pet" => Ok(Self::Pet),
            "browser_build" | "browser-build" => Ok(Self::BrowserBuild),
            "phone" => Ok(Self::Phone),
            other => Err(format!(
                "unknown window kind {other:?} (main, pet, browser_build, phone)"
            )),
        }
    }
}
