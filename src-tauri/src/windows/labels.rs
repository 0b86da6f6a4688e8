//! The one enum of window labels, and which preset a character or phone window shows. Parse
//! labels with [`WindowLabel::parse`]; never compare label strings elsewhere.

use crate::state::AppState;
use tauri::{AppHandle, Manager, Runtime, WebviewWindow};
use yui_core::presets::{self, Preset};
use yui_core::stage::Window;
use yui_core::{CoreError, WindowKind};

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

/// The label a preset's window has.
pub fn label_for(preset: &Preset) -> WindowLabel {
    if preset.is_main {
        WindowLabel::Main
    } else {
        WindowLabel::Pet(preset.id.clone())
    }
}

/// The label of the calling `window` if it is a window that runs turns (main, pet or a phone);
/// else an `invalid_input` error saying `why`.
pub fn turn_label<R: Runtime>(
    window: &WebviewWindow<R>,
    why: &str,
) -> Result<WindowLabel, CoreError> {
    WindowLabel::parse(window.label())
        .filter(WindowLabel::runs_turns)
        .ok_or_else(|| CoreError::invalid(why))
}

/// The calling `window` as the stage names it, if it runs turns (main, pet or a phone); else an
/// `invalid_input` error saying `why`.
pub fn turn_window<R: Runtime>(window: &WebviewWindow<R>, why: &str) -> Result<Window, CoreError> {
    turn_label(window, why)?
        .window()
        .ok_or_else(|| CoreError::invalid(why))
}

/// The contract's window kind of the calling `window` (`None`: settings, quick).
pub fn kind_of<R: Runtime>(window: &WebviewWindow<R>) -> Option<WindowKind> {
    WindowLabel::parse(window.label()).and_then(|l| l.kind())
}

/// The label of the calling `window` if it is a character window (main or pet); else an
/// `invalid_input` error saying `why` (e.g. "turns run in character windows only").
pub fn character_label<R: Runtime>(
    window: &WebviewWindow<R>,
    why: &str,
) -> Result<WindowLabel, CoreError> {
    WindowLabel::parse(window.label())
        .filter(WindowLabel::is_character)
        .ok_or_else(|| CoreError::invalid(why))
}

/// The preset the calling character `window` shows (`why`: as for [`character_label`]).
pub fn calling_preset<R: Runtime>(
    window: &WebviewWindow<R>,
    why: &str,
) -> Result<Preset, CoreError> {
    preset_for(window.app_handle(), &character_label(window, why)?)
}

/// The preset the calling phone `window` shows.
pub fn calling_phone<R: Runtime>(window: &WebviewWindow<R>) -> Result<Preset, CoreError> {
    match WindowLabel::parse(window.label()) {
        Some(label @ WindowLabel::Phone(_)) => preset_for(window.app_handle(), &label),
        _ => Err(CoreError::invalid("only a phone window reads its history")),
    }
}

/// The preset a character window shows, read from the store.
pub fn preset_for<R: Runtime>(
    app: &AppHandle<R>,
    label: &WindowLabel,
) -> Result<Preset, CoreError> {
    let store = &app.state::<AppState>().store;
    match label {
        WindowLabel::Main => presets::main_preset(store),
        WindowLabel::Pet(id) | WindowLabel::Phone(id) => presets::get(store, id),
        _ => Err(CoreError::invalid("not a character window")),
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
