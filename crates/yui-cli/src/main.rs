//! `yui`: the headless command line over yui-core, built without tauri.
//!
//! Output is JSON on stdout. An error prints `{"code":..,"message":..}` on stderr and exits
//! non-zero (1 for a failed command, 2 for a usage error). Each subcommand group lives in its own
//! module (`<group>_cmd.rs`); to add one, add a variant to [`Command`] and an arm to [`dispatch`].

mod backend_cmd;
mod converse_cmd;
mod doctor_cmd;
mod event_cmd;
mod look_cmd;
mod mcp_serve_cmd;
mod memory_cmd;
mod model_cmd;
mod preset_cmd;
mod relation_cmd;
mod settings_cmd;
mod tool_cmd;
mod tools_cmd;
mod transcript_cmd;
mod turn_audio;
mod turn_cmd;
mod vocab_cmd;
mod voice_cmd;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use yui_core::paths::{Paths, DATA_DIR_ENV};
use yui_core::{CoreError, ErrorCode, Store};

#[derive(Debug, Parser)]
#[command(
    name = "yui",
    version,
    about = "YUI without the desktop shell: settings, presets, backend, turns, tools",
    after_help = "Environment:\n  YUI_API_KEY    API key for this run only (turn, chat, tool, doctor); overrides the stored key\n  YUI_DATA_DIR   data dir (same as --data-dir)\n  YUI_LOG        log filter, e.g. debug; also logs to stderr\n  YUI_KEYRING    off: never use the OS keyring (file fallback)\n\nNew here? `yui doctor` checks the backend and says what to fix."
)]
struct Cli {
    /// Data dir holding the database and the logs (default: the OS data dir).
    #[arg(long, global = true, env = DATA_DIR_ENV, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Declare and run none of the configured command client tools.
    #[arg(long, global = true)]
    no_client_tools: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Read and write settings (JSON values).
    #[command(subcommand)]
    Settings(settings_cmd::SettingsCmd),
    /// List, add, edit, remove, import, open and close characters; choose the main one.
    #[command(subcommand)]
    Preset(preset_cmd::PresetCmd),
    /// A character's VRM look: set a model, show each emotion's face, inspect a model.
    #[command(subcommand)]
    Look(look_cmd::LookCmd),
    /// Model backend settings and the API key.
    #[command(subcommand)]
    Backend(backend_cmd::BackendCmd),
    /// The expression vocabulary and the generate_express schema.
    #[command(subcommand)]
    Vocab(vocab_cmd::VocabCmd),
    /// Relation values, bands and log; set a value by hand.
    #[command(subcommand)]
    Relation(relation_cmd::RelationCmd),
    /// A character's history as JSON lines, oldest first.
    Transcript(transcript_cmd::TranscriptArgs),
    /// Run one turn and print its events as JSON lines (exit 1 when it ends in error).
    Turn(turn_cmd::TurnArgs),
    /// Run the user's turn and every addressed turn that follows (one character answering
    /// another), as the app would; JSON lines with a "preset" field (exit 0 when it ends).
    Converse(converse_cmd::ConverseArgs),
    /// A character's long-term memories: list, search, add, edit, pin, forget, export, extract.
    #[command(subcommand)]
    Memory(memory_cmd::MemoryCmd),
    /// Run one client tool directly and print its result.
    Tool(tool_cmd::ToolArgs),
    /// The configured command client tools: list, check, enable/disable per character.
    #[command(subcommand)]
    Tools(tools_cmd::ToolsCmd),
    /// An interactive terminal conversation.
    Chat(turn_cmd::ChatArgs),
    /// Check the backend: reachable, key, model, streaming and tool calls on both transports;
    /// says which transport to use and whether expression cues will work (exit 0 once reported).
    Doctor(doctor_cmd::DoctorArgs),
    /// The built-in model: list, pull, add your own GGUF, use, remove (docs/built-in-model.md).
    #[command(subcommand)]
    Model(model_cmd::ModelCmd),
    /// Speak a text through the configured (or given) speech engine, or write it to a WAV.
    Say(voice_cmd::SayArgs),
    /// Transcribe a WAV file or the microphone, one JSON line per utterance.
    Listen(voice_cmd::ListenArgs),
    /// Hand the running app an event for a character to react to, as its manners allow
    /// (docs/proactive.md); prints what became of it.
    Event(event_cmd::EventArgs),
    /// Quiet mode: no character speaks up on its own for a while (1h, 30m, tomorrow, off).
    Quiet(event_cmd::QuietArgs),
    /// An MCP server on stdio with the tools notify and say, for scripts and coding agents:
    /// each call reaches the running app (docs/proactive.md).
    McpServe,
}

/// What a command gives back: a value to print as JSON, or text it already formatted.
enum Out {
    Json(serde_json::Value),
    Text(String),
    /// The command printed its own output; exit with this code.
    Exit(u8),
}

/// Run one command. The store is opened only by commands that need it.
fn dispatch(command: &Command, paths: &Paths) -> Result<Out, CoreError> {
    let store = || Store::open(paths.db_path());
    Ok(match command {
        Command::Settings(cmd) => Out::Json(settings_cmd::run(&store()?, cmd)?),
        Command::Preset(cmd) => Out::Json(preset_cmd::run(&store()?, &paths.data_dir, cmd)?),
        Command::Look(cmd) => Out::Json(look_cmd::run(&store()?, &paths.data_dir, cmd)?),
        Command::Backend(cmd) => Out::Json(backend_cmd::run(&store()?, paths, cmd)?),
        Command::Vocab(cmd) => Out::Text(vocab_cmd::run(&store()?, cmd)?),
        Command::Relation(cmd) => Out::Json(relation_cmd::run(&store()?, cmd)?),
        Command::Transcript(args) => Out::Exit(transcript_cmd::run(&store()?, args)?),
        Command::Turn(args) => {
            install_avatar();
            Out::Exit(turn_cmd::run_turn(paths, args)?)
        }
        Command::Converse(args) => {
            install_avatar();
            Out::Exit(converse_cmd::run(paths, args)?)
        }
        Command::Tool(args) => {
            install_avatar();
            Out::Json(tool_cmd::run(paths, args)?)
        }
        Command::Tools(cmd) => match tools_cmd::run(&store()?, cmd)? {
            (v, true) => Out::Json(v),
            (v, false) => {
                println!("{}", serde_json::to_string_pretty(&v)?);
                Out::Exit(1)
            }
        },
        Command::Chat(args) => {
            install_avatar();
            Out::Exit(turn_cmd::run_chat(paths, args)?)
        }
        Command::Doctor(args) => Out::Exit(doctor_cmd::run(paths, args)?),
        Command::Say(args) => Out::Exit(voice_cmd::say(paths, args)?),
        Command::Listen(args) => Out::Exit(voice_cmd::listen(paths, args)?),
        Command::Event(args) => Out::Json(event_cmd::event(paths, args)?),
        Command::Quiet(args) => Out::Json(event_cmd::quiet(paths, args)?),
        Command::McpServe => Out::Exit(mcp_serve_cmd::run(paths)?),
        Command::Memory(cmd) => Out::Json(memory_cmd::run(paths, cmd)?),
        Command::Model(cmd) => Out::Exit(model_cmd::run(paths, cmd)?),
    })
}

/// The headless avatar: the desktop (X11, where there is a display) without a body, so `look`
/// sees windows and screens and `body_action` answers `unsupported`.
fn install_avatar() {
    #[cfg(target_os = "linux")]
    let desktop = yui_x11::X11Desktop::for_session(Some(std::process::id()))
        .map(|h| h as std::sync::Arc<dyn yui_core::avatar::DesktopHost>);
    #[cfg(not(target_os = "linux"))]
    let desktop = None;
    yui_core::avatar::install(std::sync::Arc::new(yui_core::avatar::Avatar::new(
        desktop, None, None,
    )));
}

fn print_error(e: &CoreError) {
    let text = serde_json::to_string(e)
        .unwrap_or_else(|_| format!(r#"{{"code":"internal","message":{:?}}}"#, e.message));
    eprintln!("{text}");
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version: clap's own text on stdout.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            print_error(&CoreError::new(
                ErrorCode::InvalidInput,
                e.render().to_string().trim_end(),
            ));
            return ExitCode::from(2);
        }
    };
    let paths = Paths::resolve(cli.data_dir);
    // Logs go to the log dir; to stderr too only when YUI_LOG asks, so stderr stays parseable.
    let _log = yui_core::logging::init(
        &paths.log_dir,
        std::env::var_os(yui_core::logging::LOG_ENV).is_some(),
    );
    // The command client tools are read once, at start (docs/command-tools.md).
    yui_core::tools::command::init(cli.no_client_tools);
    // So are the MCP servers of mcp.json; a command that needs them starts them (docs/mcp.md).
    yui_core::tools::mcp::init(cli.no_client_tools);
    match dispatch(&cli.command, &paths) {
        Ok(Out::Json(v)) => {
            match serde_json::to_string_pretty(&v) {
                Ok(text) => println!("{text}"),
                Err(e) => {
                    print_error(&CoreError::internal(e.to_string()));
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Ok(Out::Exit(code)) => ExitCode::from(code),
        Ok(Out::Text(text)) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::debug!(code = ?e.code, "command failed");
            print_error(&e);
            ExitCode::FAILURE
        }
    }
}
