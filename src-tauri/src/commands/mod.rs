//! Tauri commands, one module per area. Each command delegates to `yui-core` (and, for windows,
//! to [`crate::windows`]); no product logic lives here. Every command is also listed in
//! `src-tauri/build.rs` (its `allow-<command>` permission) and granted per window in
//! `capabilities/`.

pub mod autostart;
pub mod backend;
pub mod display;
pub mod looks;
pub mod manners;
pub mod memory;
pub mod mic;
pub mod model;
pub mod phone;
pub mod playback;
pub mod presets;
pub mod realtime;
pub mod relations;
pub mod settings;
pub mod tools;
pub mod turn;
pub mod vocab;
pub mod voice;
pub mod vrm;
pub mod window;

/// The invoke handler with every command. Keep in step with `COMMANDS` in `src-tauri/build.rs`.
#[macro_export]
macro_rules! yui_invoke_handler {
    () => {
        tauri::generate_handler![
            $crate::commands::window::window_context,
            $crate::commands::window::window_open,
            $crate::commands::window::window_input_region,
            $crate::commands::presets::preset_list,
            $crate::commands::presets::preset_open,
            $crate::commands::presets::preset_close,
            $crate::commands::presets::preset_create,
            $crate::commands::presets::preset_import,
            $crate::commands::presets::preset_update,
            $crate::commands::presets::preset_delete,
            $crate::commands::presets::preset_set_main,
            $crate::commands::presets::preset_choices,
            $crate::commands::phone::phone_history,
            $crate::commands::settings::switches_get,
            $crate::commands::manners::manners_get,
            $crate::commands::manners::manners_set,
            $crate::commands::manners::manners_character,
            $crate::commands::manners::manners_quiet,
            $crate::commands::settings::switch_set,
            $crate::commands::settings::backend_get,
            $crate::commands::settings::backend_set,
            $crate::commands::settings::backend_set_key,
            $crate::commands::tools::tools_list,
            $crate::commands::tools::tools_reload,
            $crate::commands::tools::tools_enable,
            $crate::commands::backend::backend_find,
            $crate::commands::backend::backend_models,
            $crate::commands::backend::backend_test,
            $crate::commands::backend::first_run,
            $crate::commands::model::model_pull,
            $crate::commands::model::model_cancel,
            $crate::commands::model::model_use,
            $crate::commands::model::model_add_file,
            $crate::commands::model::model_page,
            $crate::commands::model::model_set,
            $crate::commands::model::model_remove,
            $crate::commands::turn::turn_start,
            $crate::commands::turn::turn_stop,
            $crate::commands::vocab::vocab_get,
            $crate::commands::vocab::vocab_for_character,
            $crate::commands::vocab::vocab_set,
            $crate::commands::vocab::vocab_reset,
            $crate::commands::vocab::vocab_offerable,
            $crate::commands::vocab::voice_get,
            $crate::commands::vocab::sprites_get,
            $crate::commands::vrm::vrm_look,
            $crate::commands::vrm::vrm_model,
            $crate::commands::vrm::vrm_failed,
            $crate::commands::vrm::look_vrm_preview,
            $crate::commands::vrm::look_vrm_model,
            $crate::commands::turn::push_connections,
            $crate::commands::playback::playback_bubble_done,
            $crate::commands::playback::voice_stop,
            $crate::commands::relations::relations_list,
            $crate::commands::relations::relation_set,
            $crate::commands::relations::relation_bands,
            $crate::commands::autostart::autostart_get,
            $crate::commands::autostart::autostart_set,
            $crate::commands::display::display_get,
            $crate::commands::display::display_set,
            $crate::commands::looks::look_options,
            $crate::commands::looks::look_preview,
            $crate::commands::looks::look_import_folder,
            $crate::commands::memory::memory_overview,
            $crate::commands::memory::memory_search,
            $crate::commands::memory::memory_edit,
            $crate::commands::memory::memory_forget,
            $crate::commands::memory::memory_forget_all,
            $crate::commands::memory::memory_export,
            $crate::commands::memory::memory_pause,
            $crate::commands::voice::voice_panel_get,
            $crate::commands::voice::voice_panel_set,
            $crate::commands::voice::voice_character_set,
            $crate::commands::voice::voice_devices,
            $crate::commands::voice::speech_key_set,
            $crate::commands::voice::speech_key_clear,
            $crate::commands::voice::voice_test,
            $crate::commands::voice::voice_test_listen,
            $crate::commands::mic::mic_press,
            $crate::commands::mic::mic_release,
            $crate::commands::mic::mic_listen,
            $crate::commands::mic::mic_stop,
            $crate::commands::mic::mic_status,
            $crate::commands::mic::voice_listen_get,
            $crate::commands::mic::voice_listen_set,
            $crate::commands::realtime::realtime_settings_get,
            $crate::commands::realtime::realtime_settings_set,
        ]
    };
}
