// The one table of the shell's commands: each line is a `#[tauri::command]` (its module under
// `commands/` and its name) and the window kinds allowed to call it (the capability identifiers
// of `capabilities/`: character = main and pet windows, phone, quick, settings).
//
// Everything else comes from here: the invoke handler (`commands::invoke_handler`), the
// `allow-<command>` permissions and each window kind's grants (`build.rs` includes this file),
// and the checks of `tests/ipc_surface.rs`. A command not listed here cannot be called; a
// `#[tauri::command]` missing here fails `tests/shell_rules.rs`.
yui_commands! {
    // commands/window.rs
    window::window_context => [character, phone];
    window::window_open => [character, quick, settings];
    window::window_input_region => [character];
    // commands/presets.rs
    presets::preset_list => [quick, settings];
    presets::preset_open => [quick, settings];
    presets::preset_close => [quick, settings];
    presets::preset_create => [settings];
    presets::preset_import => [settings];
    presets::preset_update => [settings];
    presets::preset_delete => [settings];
    presets::preset_set_main => [settings];
    presets::preset_choices => [settings];
    presets::character_scale_get => [settings];
    presets::character_scale_set => [settings];
    // commands/phone.rs
    phone::phone_history => [phone];
    // commands/settings.rs
    settings::switches_get => [quick, settings];
    settings::switch_set => [quick, settings];
    settings::backend_get => [settings];
    settings::backend_set => [settings];
    settings::backend_set_key => [settings];
    // commands/manners.rs
    manners::manners_get => [quick, settings];
    manners::manners_set => [settings];
    manners::manners_character => [settings];
    manners::manners_quiet => [quick, settings];
    // commands/tools.rs
    tools::tools_list => [settings];
    tools::tools_reload => [settings];
    tools::tools_enable => [settings];
    // commands/backend.rs
    backend::backend_find => [settings];
    backend::backend_models => [settings];
    backend::backend_test => [settings];
    backend::first_run => [character];
    // commands/model.rs
    model::model_pull => [character, settings];
    model::model_cancel => [character, settings];
    model::model_use => [character, settings];
    model::model_add_file => [character, settings];
    model::model_page => [settings];
    model::model_set => [settings];
    model::model_remove => [settings];
    // commands/turn.rs
    turn::turn_start => [character, phone];
    turn::turn_stop => [character, phone];
    turn::push_connections => [quick];
    // commands/vocab.rs
    vocab::vocab_get => [settings];
    vocab::vocab_for_character => [character];
    vocab::vocab_set => [settings];
    vocab::vocab_reset => [settings];
    vocab::vocab_offerable => [settings];
    vocab::voice_get => [settings];
    vocab::sprites_get => [character];
    // commands/vrm.rs
    vrm::vrm_look => [character];
    vrm::vrm_model => [character];
    vrm::vrm_failed => [character];
    vrm::look_vrm_preview => [settings];
    vrm::look_vrm_model => [settings];
    vrm::vrm_motions => [settings];
    vrm::vrm_motion_set => [settings];
    vrm::vrm_motion_remove => [settings];
    // commands/playback.rs
    playback::playback_bubble_done => [character, phone];
    playback::voice_stop => [character];
    // commands/relations.rs
    relations::relations_list => [settings];
    relations::relation_set => [settings];
    relations::relation_bands => [quick, settings];
    // commands/autostart.rs
    autostart::autostart_get => [settings];
    autostart::autostart_set => [settings];
    // commands/display.rs
    display::display_get => [settings];
    display::display_set => [settings];
    // commands/looks.rs
    looks::look_options => [settings];
    looks::look_preview => [settings];
    looks::look_import_folder => [settings];
    // commands/memory.rs
    memory::memory_overview => [settings];
    memory::memory_search => [settings];
    memory::memory_edit => [settings];
    memory::memory_forget => [settings];
    memory::memory_forget_all => [settings];
    memory::memory_export => [settings];
    memory::memory_pause => [settings];
    // commands/voice.rs
    voice::voice_panel_get => [settings];
    voice::voice_panel_set => [settings];
    voice::voice_character_set => [settings];
    voice::voice_devices => [settings];
    voice::speech_key_set => [settings];
    voice::speech_key_clear => [settings];
    voice::voice_test => [settings];
    voice::voice_test_listen => [settings];
    // commands/mic.rs
    mic::mic_press => [character];
    mic::mic_release => [character];
    mic::mic_listen => [character];
    mic::mic_stop => [character, quick, settings];
    mic::mic_status => [character, quick];
    mic::voice_listen_get => [settings];
    mic::voice_listen_set => [settings];
    // commands/realtime.rs
    realtime::realtime_settings_get => [settings];
    realtime::realtime_settings_set => [settings];
}
