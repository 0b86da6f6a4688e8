//! Which preset a calling character or phone window shows, and the calling window as the stage
//! names it (the labels themselves are [`crate::label`]).

pub use crate::label::WindowLabel;
use crate::state::AppState;
use tauri::{AppHandle, Manager, Runtime, WebviewWindow};
use yui_core::presets::{self, Preset};
use yui_core::stage::Window;
use yui_core::{CoreError, WindowKind};

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
