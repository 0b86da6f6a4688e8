//! Build script: compiles the root `tauri.conf.json`, the capabilities in `capabilities/`, and one
//! permission per app command (`allow-<command>`), so each window is granted commands one by one.

/// Every `#[tauri::command]` the shell registers. A command missing here is callable by no window
/// once the app manifest lists commands; keep this list and `lib.rs`'s invoke handler in step.
const COMMANDS: &[&str] = &[
    // window (window_input_region: character windows, where they take clicks)
    "window_context",
    "window_input_region",
    // manners: Settings → Manners, quiet mode (commands/manners.rs)
    "manners_get",
    "manners_set",
    "manners_character",
    "manners_quiet",
    "window_open",
    // presets
    "preset_list",
    "preset_open",
    "preset_close",
    // presets, settings-window only (settings → Characters)
    "preset_create",
    "preset_import",
    "preset_update",
    "preset_delete",
    "preset_set_main",
    "preset_choices",
    // phone windows (commands/phone.rs)
    "phone_history",
    // settings (backend_* are settings-window only)
    "switches_get",
    "switch_set",
    "backend_get",
    "backend_set",
    "backend_set_key",
    // command client tools (settings window only)
    "tools_list",
    "tools_reload",
    "tools_enable",
    // backend helpers (settings window) and the first-run greeting (main window)
    "backend_find",
    "backend_models",
    "backend_test",
    "first_run",
    // the built-in model (commands/model.rs): the first run's offer in the main window
    // (model_pull, model_cancel, model_use, model_add_file) and Settings → Backend → Built-in
    // model (all of them)
    "model_pull",
    "model_cancel",
    "model_use",
    "model_add_file",
    "model_page",
    "model_set",
    "model_remove",
    // turn
    "turn_start",
    "push_connections",
    "turn_stop",
    // expression (vocab_*/voice_* are settings-window only; vocab_for_character and sprites_get
    // are for character windows)
    "vocab_get",
    "vocab_for_character",
    "vocab_set",
    "vocab_reset",
    "vocab_offerable",
    "voice_get",
    "sprites_get",
    // VRM looks (commands/vrm.rs): vrm_look and vrm_model for character windows,
    // look_vrm_preview for the look picker
    "vrm_look",
    "vrm_model",
    "vrm_failed",
    "look_vrm_preview",
    "look_vrm_model",
    // playback (character windows)
    "playback_bubble_done",
    "voice_stop",
    // relations (relations_list/relation_set are settings-window only)
    "relations_list",
    "relation_set",
    "relation_bands",
    // start with the desktop (settings window only)
    "autostart_get",
    "autostart_set",
    // how YUI shows its windows (settings window only)
    "display_get",
    "display_set",
    // looks (settings window only: the look picker, commands/looks.rs)
    "look_options",
    "look_preview",
    "look_import_folder",
    // long-term memory (settings window only; commands/memory.rs)
    "memory_overview",
    "memory_search",
    "memory_edit",
    "memory_forget",
    "memory_forget_all",
    "memory_export",
    "memory_pause",
    // Settings → Voice (settings window only; commands/voice.rs)
    "voice_panel_get",
    "voice_panel_set",
    "voice_character_set",
    "voice_devices",
    "speech_key_set",
    "speech_key_clear",
    "voice_test",
    "voice_test_listen",
    // the microphone (commands/mic.rs): push-to-talk and hands-free in character windows, stop
    // and status in the quick controls too, the listening settings in the settings window
    "mic_press",
    "mic_release",
    "mic_listen",
    "mic_stop",
    "mic_status",
    "voice_listen_get",
    "voice_listen_set",
    // Settings → Backend's realtime panel (settings window only; commands/realtime.rs)
    "realtime_settings_get",
    "realtime_settings_set",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("failed to run tauri-build");
}
