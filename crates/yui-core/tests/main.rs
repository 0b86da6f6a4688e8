//! yui-core's integration tests, one binary for the crate: one link instead of one per file,
//! which saves CI both the link time and gigabytes of disk. Each file is a module; run one with
//! `cargo test -p yui-core --test integration <module>::`.

mod avatar_support;
mod model_support;
mod turn_support;

mod autostart;
mod avatar;
mod browser;
mod characters;
mod command_tools;
mod contract_strings;
mod doctor;
mod fault_matrix;
mod floors;
mod fuzz_replay;
mod looks;
mod manners_day;
mod mcp;
mod mcp_start;
mod memory;
mod memory_embed;
mod memory_extract;
mod mic;
mod model_engine;
mod model_local;
mod model_pull;
mod realtime_audio;
mod realtime_audio_loop;
mod relations;
mod settings_layers;
mod sprites;
mod stage;
mod stage_proactive;
mod stage_realtime;
mod stage_realtime_floor;
mod stage_realtime_resume;
mod stage_realtime_voice;
mod stage_routes;
mod stage_voice;
mod store;
mod turn_chat;
mod turn_faults;
mod turn_push;
mod turn_real_servers;
mod turn_realtime;
mod turn_realtime_seed;
mod turn_realtime_session;
mod turn_realtime_setup;
mod turn_registry;
mod turn_responses;
mod vocab;
mod voice;
mod voice_panel;
mod voice_test_listen;
mod wording;
