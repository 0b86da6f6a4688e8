//! Tauri commands, one module per area. Each command delegates to `yui-core` (and, for windows,
//! to [`crate::windows`]); no product logic lives here. `table.rs` lists every command once with
//! the window kinds that may call it; the invoke handler, the permissions and the grants are made
//! from that table.

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

/// One command of the table: its name and the window kinds (capability identifiers) that may
/// call it.
#[derive(Debug, Clone, Copy)]
pub struct Command {
    pub name: &'static str,
    pub windows: &'static [&'static str],
}

/// Reads `table.rs`: [`TABLE`] for the checks, and [`invoke_handler`] for the app's builder.
/// (`build.rs` gives the same table a macro of its own.)
macro_rules! yui_commands {
    ($($area:ident :: $name:ident => [$($window:ident),* $(,)?];)*) => {
        /// Every command the shell registers, with the window kinds that may call it.
        pub const TABLE: &[Command] = &[
            $(Command { name: stringify!($name), windows: &[$(stringify!($window)),*] }),*
        ];

        /// The invoke handler with every command of [`TABLE`].
        pub fn invoke_handler<R: tauri::Runtime>(
        ) -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static {
            tauri::generate_handler![$($area::$name),*]
        }
    };
}

include!("table.rs");
