//! The one enum of window labels: parse labels with [`WindowLabel::parse`]; never compare label
//! strings elsewhere. Pure (no state, no windows): the bottom of the shell, so the state, the
//! avatar and the windows all use it without importing each other.

use yui_core::stage::Window;
use yui_core::WindowKind;

/// Every window label the app uses. Parse labels with [`WindowLabel::parse`]; never compare label
/// strings elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WindowLabel {
    /// The main character (the preset marked main).
    Main,
    /// One pet window per other open preset: `pet-<presetId>`.
    Pet(String),
    /// A character's phone: its conversation history and an input, `phone-<presetId>`.
    Phone(String),
    /// The ordinary settings window.
    Settings,
    /// The quick-controls popover.
    Quick,
    /// The window that explains why the app cannot start (store damaged or too new).
    Fatal,
}

const PET_PREFIX: &str = "pet-";
const PHONE_PREFIX: &str = "phone-";

impl WindowLabel {
    pub fn as_label(&self) -> String {
        match self {
            Self::Main => "main".into(),
            Self::Pet(id) => format!("{PET_PREFIX}{id}"),
            Self::Phone(id) => format!("{PHONE_PREFIX}{id}"),
            Self::Settings => "settings".into(),
            Self::Quick => "quick".into(),
            Self::Fatal => "error".into(),
        }
    }

    pub fn parse(label: &str) -> Option<Self> {
        match label {
            "main" => Some(Self::Main),
            "settings" => Some(Self::Settings),
            "quick" => Some(Self::Quick),
            "error" => Some(Self::Fatal),
            other => {
                let id = |prefix| other.strip_prefix(prefix).filter(|id| !id.is_empty());
                id(PET_PREFIX)
                    .map(|id| Self::Pet(id.to_string()))
                    .or_else(|| id(PHONE_PREFIX).map(|id| Self::Phone(id.to_string())))
            }
        }
    }

    /// The contract's window kind, for character windows only.
    pub fn kind(&self) -> Option<WindowKind> {
        match self {
            Self::Main => Some(WindowKind::Main),
            Self::Pet(_) => Some(WindowKind::Pet),
            Self::Phone(_) => Some(WindowKind::Phone),
            Self::Settings | Self::Quick | Self::Fatal => None,
        }
    }

    /// The name the UI sees (`main`, `pet`, `phone`, `settings`, `quick`).
    pub fn role(&self) -> &'static str {
        match self {
            Self::Main => "main",
            Self::Pet(_) => "pet",
            Self::Phone(_) => "phone",
            Self::Settings => "settings",
            Self::Quick => "quick",
            Self::Fatal => "error",
        }
    }

    pub fn is_character(&self) -> bool {
        matches!(self, Self::Main | Self::Pet(_))
    }

    /// Windows that show one preset and run its turns: the character windows and phones.
    pub fn runs_turns(&self) -> bool {
        self.kind().is_some()
    }
}

impl From<&Window> for WindowLabel {
    fn from(w: &Window) -> Self {
        match w {
            Window::Main => Self::Main,
            Window::Pet(id) => Self::Pet(id.clone()),
            Window::Phone(id) => Self::Phone(id.clone()),
            Window::Settings => Self::Settings,
            Window::Quick => Self::Quick,
        }
    }
}

impl WindowLabel {
    /// The window as the core's stage names it (`None`: the error window).
    pub fn window(&self) -> Option<Window> {
        Some(match self {
            Self::Main => Window::Main,
            Self::Pet(id) => Window::Pet(id.clone()),
            Self::Phone(id) => Window::Phone(id.clone()),
            Self::Settings => Window::Settings,
            Self::Quick => Window::Quick,
            Self::Fatal => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip() {
        for l in [
            WindowLabel::Main,
            WindowLabel::Pet("kai".into()),
            WindowLabel::Phone("kai".into()),
            WindowLabel::Settings,
            WindowLabel::Quick,
            WindowLabel::Fatal,
        ] {
            assert_eq!(WindowLabel::parse(&l.as_label()), Some(l));
        }
        assert_eq!(WindowLabel::Pet("kai".into()).as_label(), "pet-kai");
        assert_eq!(WindowLabel::parse("pet-"), None);
        assert_eq!(WindowLabel::parse("phone-"), None);
        assert_eq!(
            WindowLabel::Phone("kai".into()).kind(),
            Some(WindowKind::Phone)
        );
        assert_eq!(WindowLabel::parse("other"), None);
    }
}
