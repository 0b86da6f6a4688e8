//! Tauri commands, one module per area. Each command delegates to `yui-core` (and, for windows,
//! to [`crate::windows`]); no product logic lives here. Every command is also listed in
//! `src-tauri/build.rs` (its `allow-<command>` permission) and granted per window in
//! `capabilities/`.

pub mod presets;
pub mod settings;
pub mod turn;
pub mod window;
// relations: the relations helper adds `pub mod relations;` here.

/// The invoke handler with every command. Keep in step with `COMMANDS` in `src-tauri/build.rs`.
#[macro_export]
macro_rules! yui_invoke_handler {
    () => {
        tauri::generate_handler![
            $crate::commands::window::window_context,
            $crate::commands::window::window_open,
            $crate::commands::presets::preset_list,
            $crate::commands::presets::preset_open,
            $crate::commands::presets::preset_close,
            $crate::commands::settings::switches_get,
            $crate::commands::settings::switch_set,
            $crate::commands::settings::settings_get,
            $crate::commands::settings::settings_set,
            $crate::commands::settings::backend_get,
            $crate::commands::settings::backend_set,
            $crate::commands::settings::backend_set_key,
            $crate::commands::turn::turn_start,
            $crate::commands::turn::turn_stop,
            // relations: add the relations commands here.
        ]
    };
}
