//! The Tauri commands on the mock runtime with the real `tauri.conf.json` and `capabilities/`,
//! one binary for the app's tests (each file a module): run one with
//! `cargo test -p yui-app --test commands <module>::`.

mod support;

mod autostart_commands;
mod browser;
mod characters_commands;
mod commands;
mod display_commands;
mod instance_id;
mod ipc_surface;
mod memory_commands;
mod realtime_commands;
mod relations_commands;
mod shell_rules;
mod tools_commands;
mod vocab_commands;
mod vrm_commands;
mod window_positions;
