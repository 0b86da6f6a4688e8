//! Window commands: who am I (label, role, preset), open the settings, quick and phone windows,
//! and where a character window takes clicks (its input region).

use crate::error::CmdResult;
use crate::state::AppState;
use crate::windows::{self, WindowLabel};
use serde::Serialize;
use tauri::{AppHandle, Manager, Runtime, State, WebviewWindow};
use yui_core::display::input_region::{self, InputRect};
use yui_core::presets::Preset;
use yui_core::CoreError;

/// What a page needs to know about its own window.
#[derive(Debug, Serialize)]
pub struct WindowContext {
    pub label: String,
    /// `main`, `pet`, `phone`, `settings` or `quick`.
    pub role: &'static str,
    /// The preset a character or phone window shows; `null` for settings and quick.
    pub preset: Option<Preset>,
    /// Whether the characters are asleep now (later changes come as `yui://presence`).
    pub asleep: bool,
    /// How many characters are open (they share one ambient budget; later changes come with
    /// `yui://presets-changed`).
    pub open_characters: usize,
    /// Whether a `window.open` during a user gesture empties WebKit's record of this page's key
    /// and mouse presses (`crate::gestures`): the page then makes one as it sends a typed message.
    pub forgets_input: bool,
    /// A character window's drawn character, in logical pixels: the main one's or a pet's at
    /// the user's scale (`yui.character.scale`); `null` for other windows.
    pub character_px: Option<f64>,
}

#[tauri::command]
pub async fn window_context<R: Runtime>(window: WebviewWindow<R>) -> CmdResult<WindowContext> {
    context(&window).await
}

/// The calling window's context: its label and role, the preset it shows, and the shell's facts.
async fn context<R: Runtime>(window: &WebviewWindow<R>) -> CmdResult<WindowContext> {
    let label = WindowLabel::parse(window.label())
        .ok_or_else(|| CoreError::invalid(format!("unknown window {:?}", window.label())))?;
    let preset = match label.runs_turns() {
        true => Some(windows::preset_for(window.app_handle(), &label)?),
        false => None,
    };
    let store = &window.state::<AppState>().store;
    let character_px = preset
        .as_ref()
        .filter(|_| label.is_character())
        .map(|p| yui_core::layout::drawn_size(p.is_main, yui_core::layout::scale(store)));
    Ok(WindowContext {
        label: label.as_label(),
        role: label.role(),
        preset,
        asleep: window.state::<AppState>().asleep(),
        open_characters: yui_core::presets::list_open(&window.state::<AppState>().store)
            .map_or(1, |l| l.len()),
        character_px,
        forgets_input: crate::gestures::forget_input_records(window).await,
    })
}

/// Open (or focus) the `settings` or the `quick` window, or a character's phone
/// (`phone-<presetId>`). Settings may be opened at one of its sections: `section` is the
/// section's id, optionally with a preset id (`character/kai`: Kai's look).
#[tauri::command]
pub async fn window_open<R: Runtime>(
    app: AppHandle<R>,
    which: String,
    section: Option<String>,
) -> CmdResult<()> {
    crate::settings_window::open_named(&app, &which, section.as_deref())
}

/// The calling character window's input region: the rectangles where its page draws (logical
/// pixels from the window's corner; `null`: the whole window). A click elsewhere goes to the
/// window below (docs/avatar.md, "Click-through"). Checked by the core; off by `yui.click_through`.
#[tauri::command]
pub async fn window_input_region<R: Runtime>(
    window: WebviewWindow<R>,
    state: State<'_, AppState>,
    rects: Option<Vec<InputRect>>,
) -> CmdResult<()> {
    windows::input_region::apply(
        &window,
        input_region::region(
            &state.store,
            rects,
            windows::input_region::logical_size(&window)?,
        )?,
    )
}
