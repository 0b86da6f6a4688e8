//! YUI Tauri shell: a thin adapter over `yui-core`. It opens the store, creates the windows from
//! the presets table, the tray, and exposes commands that delegate to the core in one line.
//!
//! [`run_app`] is generic over the runtime so the commands are tested on `tauri::test`'s mock
//! runtime with the real capabilities (`src-tauri/tests/`).

pub mod avatar;
pub mod bridge;
pub mod browser;
pub mod commands;
pub mod display;
pub mod error;
pub mod file_pick;
pub mod gestures;
pub mod instance;
pub mod label;
pub mod presence;
pub mod settings_window;
pub mod shortcut;
pub mod stage;
pub mod state;
pub mod tray;
pub mod visibility;
pub mod webkit;
pub mod windows;

use gestures::RefuseNewWindows as _;
use state::AppState;
use tauri::{App, Builder, Manager, RunEvent, Runtime, WebviewUrl, WebviewWindowBuilder};
use windows::WindowLabel;
use yui_core::paths::Paths;
use yui_core::{CoreError, Store};

/// Register the state, the commands and the window-event handler, and build the app with the
/// root `tauri.conf.json` and `capabilities/`.
pub fn run_app<R: Runtime>(builder: Builder<R>, state: AppState) -> tauri::Result<App<R>> {
    builder
        .manage(state)
        .plugin(stage::plugin())
        .invoke_handler(commands::invoke_handler())
        .on_window_event(windows::on_window_event)
        .build(tauri::generate_context!())
}

/// Start the desktop app: paths (`--data-dir DIR`, else `YUI_DATA_DIR`, else the OS data dir),
/// store, tray, character windows.
pub fn run() {
    let paths = Paths::resolve(yui_core::paths::data_dir_arg(std::env::args().skip(1)));
    // First, while this is the only thread: GTK and WebKit read these at start.
    let display_vars = display::choose_before_gtk(&paths.db_path());
    let webkit = webkit::choose_rendering(display_vars);
    // Kept for the life of the process: dropping it stops the log file writer.
    let _log = yui_core::logging::init(&paths.log_dir, true);
    tracing::info!(data_dir = %paths.data_dir.display(), "starting YUI");
    display::log_choice();
    tracing::info!(
        cpu_painting = webkit.cpu_painting,
        memory_monitor_off = webkit.memory_monitor_off,
        jit_off = webkit.jit_off,
        "WebKit settings YUI chose (src-tauri/src/webkit.rs)"
    );
    // `--no-client-tools`: declare and run none of the configured command tools or MCP servers.
    let no_client_tools = std::env::args().any(|a| a == "--no-client-tools");
    yui_core::tools::command::init(no_client_tools);
    // MCP servers: mcp.json is read now; the servers start when a character window opens.
    yui_core::tools::mcp::init(no_client_tools);
    yui_core::tools::mcp::set_runtime(tauri::async_runtime::handle().inner().clone());
    match Store::open(paths.db_path()) {
        Ok(store) => match startup_check(&store) {
            Ok(()) => run_desktop(AppState::new(store, paths)),
            Err(e) => run_fatal(&paths, "YUI cannot build its characters' tools.", e),
        },
        Err(e) => run_fatal(&paths, "YUI cannot open its database.", e),
    }
}

/// The start-up registry check: every window kind's tools build for the main character, or the
/// app does not start (a broken declaration must not surface in the middle of a turn).
fn startup_check(store: &Store) -> Result<(), CoreError> {
    let main = yui_core::presets::main_preset(store)?;
    yui_core::tools::registry::startup_check(store, &main.id)
}

fn run_desktop(state: AppState) {
    // First: a second launch hands over its arguments and exits before anything is built.
    let builder = tauri::Builder::default().plugin(instance::plugin(&state.paths.data_dir));
    let builder = builder.setup(|app| {
        let handle = app.handle();
        windows::learn_window_system();
        browser::cleanup_at_start();
        commands::autostart::reconcile_at_start(&handle.state::<AppState>());
        if let Err(e) = tray::create(handle) {
            // No tray (e.g. no status-notifier host): the characters' menu still opens settings.
            tracing::warn!(error = %e, "tray icon unavailable");
        }
        if let Err(e) = windows::sync_characters(handle) {
            tracing::error!(error = %e.message, "restoring character windows failed");
        }
        avatar::install(handle);
        stage::watch_user(handle);
        shortcut::install(handle);
        if std::env::args()
            .skip(1)
            .any(|a| a == instance::SETTINGS_ARG)
        {
            instance::come_forward(handle, true);
        }
        Ok(())
    });
    let app = match run_app(builder, state) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("yui: cannot start the app: {e}");
            std::process::exit(1);
        }
    };
    app.run(|_app, event| {
        // Closing the last window must not quit: the tray's Quit does (with an exit code).
        if let RunEvent::ExitRequested {
            api, code: None, ..
        } = event
        {
            api.prevent_exit();
        } else if let RunEvent::Exit = event {
            // The MCP servers' process groups go with the app, and the built-in engine.
            tauri::async_runtime::block_on(yui_core::tools::mcp::shutdown());
            tauri::async_runtime::block_on(yui_core::model::builtin::stop_shared());
        }
    });
}

/// The store cannot be opened (damaged, or written by a newer YUI) or the tools do not build:
/// say so in a window and on stderr, and leave the file untouched.
fn run_fatal(paths: &Paths, what: &str, e: CoreError) {
    let message = format!(
        "{what}\n\n{}\n\nData folder: {}",
        e.message,
        paths.data_dir.display()
    );
    eprintln!("yui: {message}");
    let fragment: String = message
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    let result = tauri::Builder::default()
        .setup(move |app| {
            WebviewWindowBuilder::new(
                app,
                WindowLabel::Fatal.as_label(),
                WebviewUrl::App(format!("error.html#{fragment}").into()),
            )
            .refuse_new_windows()
            .title("YUI — cannot start")
            .inner_size(520.0, 320.0)
            .build()?;
            Ok(())
        })
        .run(tauri::generate_context!());
    if let Err(e) = result {
        eprintln!("yui: cannot show the error window: {e}");
    }
    std::process::exit(2);
}
