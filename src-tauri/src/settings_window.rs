//! The tool windows opened by name (`window_open`), and the settings window opened at one of its
//! sections (a character's menu: Look… opens
//! `settings.html#character/<preset id>`); the page shows the section the address names
//! (ui/js/settings-nav.js).

use crate::error::tauri_err;
use crate::label::WindowLabel;
use crate::windows::{build_tool_window, show_phone, show_tool_window};
use serde::Serialize;
use tauri::{AppHandle, Manager, Runtime};
use yui_core::stage::MicStatus;
use yui_core::voice::audio::DeviceList;
use yui_core::voice::config::{self, ListenSettings, SttSettings};
use yui_core::voice::echo::EchoCancel;
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

/// Settings → Voice, the microphone's block.
#[derive(Debug, Serialize)]
pub struct ListenView {
    pub listen: ListenSettings,
    pub stt: SttSettings,
    /// The devices, or why they cannot be listed (`None`: not asked for: listing connects to
    /// the sound server, which the page does only when the user opens the device list).
    pub devices: Option<Result<DeviceList, String>>,
    pub echo: EchoCancel,
    pub status: MicStatus,
    /// Whether the global shortcut could be taken (`None`: none set).
    pub shortcut: Option<Result<(), String>>,
    /// The keys the desktop bound to it, as it describes them (the shortcuts portal; the user
    /// may rebind them in the desktop's settings); `None` where the setting's keys are grabbed.
    pub shortcut_trigger: Option<String>,
}

/// The listening settings, the devices (when `devices`), echo cancellation and the microphone.
/// The listening settings, the devices (when `devices`: listing connects to the sound server),
/// echo cancellation, the microphone's state and whether the global shortcut was taken.
pub async fn listen_view<R: Runtime>(
    app: &AppHandle<R>,
    store: &yui_core::store::Store,
    devices: bool,
) -> Result<ListenView, CoreError> {
    let listen = config::load_listen(store)?;
    let devices = if devices {
        let host = yui_core::voice::hosts::host();
        let listed = tauri::async_runtime::spawn_blocking(move || host.devices())
            .await
            .map_err(|e| CoreError::internal(format!("device listing failed: {e}")))?;
        Some(listed.map_err(|e| e.to_string()))
    } else {
        None
    };
    Ok(ListenView {
        shortcut: crate::shortcut::state(app, &listen),
        shortcut_trigger: crate::shortcut::trigger(app),
        stt: config::load_stt(store)?,
        listen,
        devices,
        echo: yui_core::voice::echo::detect().await,
        status: crate::stage::shell(app).stage.mic_status(),
    })
}

/// Save `yui.voice.listen` and `yui.voice.stt` (each checked by the core), take the global
/// shortcut as set, and answer the view.
pub async fn save_listen<R: Runtime>(
    app: &AppHandle<R>,
    store: &yui_core::store::Store,
    listen: &serde_json::Value,
    stt: &serde_json::Value,
) -> Result<ListenView, CoreError> {
    yui_core::settings::set(store, config::LISTEN_KEY, listen)?;
    yui_core::settings::set(store, config::STT_KEY, stt)?;
    // Off the async threads: the desktop's portal may ask the user before it answers.
    let a = app.clone();
    tauri::async_runtime::spawn_blocking(move || crate::shortcut::follow_settings(&a))
        .await
        .map_err(|e| CoreError::internal(format!("applying the shortcut failed: {e}")))?;
    listen_view(app, store, false).await
}
