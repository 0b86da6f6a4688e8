//! The `yui` CLI's integration tests, one binary for the crate (each file a module): run one
//! with `cargo test -p yui-cli --test integration <module>::`.

mod support;

mod avatar_cli;
mod browser_cli;
mod characters_cli;
mod cli;
mod converse_cli;
mod crash_cli;
mod doctor_cli;
mod events_cli;
mod look_cli;
mod mcp_serve_cli;
mod memory_cli;
mod model_cli;
mod push_cli;
mod realtime_audio_cli;
mod realtime_cli;
mod relation_cli;
mod secrets_cli;
mod tools_cli;
mod turn_cli;
mod vocab_cli;
mod voice_cli;
mod voice_loop_cli;
