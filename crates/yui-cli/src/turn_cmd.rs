//! `yui turn` and `yui chat`: run turns against the configured (or given) backend.
//!
//! `yui turn` prints every event as one JSON object per line (`speech`, `cue`, `tool_call`,
//! `tool_result`, `tool_status`, `turn_end`) and exits non-zero when the turn ends in error (a
//! silent turn is not an error). Ctrl-C stops the turn (it ends `stopped`, exit 130).
//! `yui chat` is the same loop as an interactive terminal conversation.

use clap::Args;
use std::io::{BufRead, Write};
use std::sync::Arc;
use yui_core::backend::Transport;
use yui_core::clock::SharedClock;
use yui_core::paths::Paths;
use yui_core::turn::{self, Backend, CancellationToken, Timeouts, TurnDeps, TurnEvent, TurnStatus};
use yui_core::{CoreError, Store, SystemClock, WindowKind};

#[derive(Debug, Args)]
pub struct TurnArgs {
    /// The user's message.
    #[arg(long, required_unless_present = "audio_in")]
    pub message: Option<String>,
    /// Realtime only: send this WAV file (16-bit PCM, any rate, mono or stereo) as the user's
    /// spoken turn instead of --message (committed at its end).
    #[arg(long, value_name = "FILE.wav")]
    pub audio_in: Option<std::path::PathBuf>,
    /// Realtime only: write the reply's audio to this WAV file (24 kHz mono) instead of playing
    /// it. With --audio-in and no --audio-out the reply plays on the default output device.
    #[arg(long, value_name = "FILE.wav")]
    pub audio_out: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Debug, Args)]
pub struct ChatArgs {
    #[command(flatten)]
    pub target: TargetArgs,
}

/// Which character, window and backend a turn uses.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Preset id (default: the main preset).
    #[arg(long)]
    pub preset: Option<String>,
    /// Window kind whose tools the turn declares: main | pet | browser_build | phone.
    #[arg(long, default_value = "main", value_parser = parse_window)]
    pub window: WindowKind,
    /// chat_completions | responses | push | realtime (default: the configured transport).
    #[arg(long, value_parser = parse_transport)]
    pub transport: Option<Transport>,
    /// The push transport's WebSocket URL, e.g. ws://127.0.0.1:8765/push (default: the
    /// configured one).
    #[arg(long)]
    pub push_url: Option<String>,
    /// The realtime transport's WebSocket URL, e.g. ws://127.0.0.1:8765/v1/realtime (default:
    /// the configured one, else the base URL's /realtime); `?model=` is added from --model.
    #[arg(long)]
    pub realtime_url: Option<String>,
    /// Base URL of the OpenAI-compatible API (default: the configured one).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Model name (default: the configured one).
    #[arg(long)]
    pub model: Option<String>,
    /// Seconds without a byte of the stream before the turn gives up (default: `yui.timeouts`
    /// stall_secs, 60).
    #[arg(long)]
    pub stall_secs: Option<u64>,
    /// Seconds to wait for the response headers (default: `yui.timeouts` headers_secs, 120).
    #[arg(long)]
    pub headers_secs: Option<u64>,
}

/// Clap's parser for `--window` (also used by `yui tool`).
pub fn parse_window(s: &str) -> Result<WindowKind, String> {
    s.parse()
}

fn parse_transport(s: &str) -> Result<Transport, String> {
    crate::backend_cmd::parse_transport(s)
}

/// The id of the preset `--preset` names (checked to exist), else of the main preset.
pub fn resolve_preset(store: &Store, preset: Option<&str>) -> Result<String, CoreError> {
    Ok(match preset {
        Some(p) => yui_core::presets::get(store, p)?.id,
        None => yui_core::presets::main_preset(store)?.id,
    })
}

/// Cancel `token` on Ctrl-C, until the returned task is aborted. Call inside the runtime.
pub fn cancel_on_ctrl_c(token: CancellationToken) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            token.cancel();
        }
    })
}

/// Everything resolved once per command.
pub struct Setup {
    pub store: Store,
    pub clock: SharedClock,
    pub preset: String,
    pub backend: Backend,
    pub timeouts: Timeouts,
    /// The built-in engine, when the backend is the built-in model (`yui model use`) and no
    /// --base-url was given: started by the first turn, stopped when the command ends.
    pub engine: Option<Arc<yui_core::model::engine::Engine>>,
}

pub fn setup(paths: &Paths, t: &TargetArgs) -> Result<Setup, CoreError> {
    let store = Store::open(paths.db_path())?;
    let preset = resolve_preset(&store, t.preset.as_deref())?;
    // The start-up check: every window kind's tools build, or nothing runs.
    yui_core::tools::registry::startup_check(&store, &preset)?;
    let overrides = yui_core::backend::Overrides {
        transport: t.transport,
        base_url: t.base_url.clone(),
        model: t.model.clone(),
        push_url: t.push_url.clone(),
        realtime_url: t.realtime_url.clone(),
        api_key: None,
    }
    .with_env_key();
    let backend = yui_core::backend::resolve(&store, paths, &overrides)?;
    if backend.transport == Transport::Push && backend.push_url.is_none() {
        return Err(CoreError::invalid(
            "the push transport needs a push URL: pass --push-url ws://… or set it with `yui backend set --push-url`",
        ));
    }
    let clock: SharedClock = Arc::new(SystemClock);
    let engine = match t.base_url {
        Some(_) => None,
        None => yui_core::model::builtin::configured(&store, paths, clock.clone())?.map(Arc::new),
    };
    Ok(Setup {
        clock,
        preset,
        backend,
        timeouts: timeouts(&store, t),
        store,
        engine,
    })
}

/// The waits in settings, with the command line's overrides.
fn timeouts(store: &Store, t: &TargetArgs) -> Timeouts {
    let mut out = Timeouts::configured(store);
    let secs = |s: u64| std::time::Duration::from_secs(s.max(1));
    if let Some(s) = t.stall_secs {
        out.stall = secs(s);
    }
    if let Some(s) = t.headers_secs {
        out.headers = secs(s);
    }
    out
}

/// The async runtime a command runs its turn, tool call or speech on.
pub fn runtime() -> Result<tokio::runtime::Runtime, CoreError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CoreError::internal(format!("cannot start the async runtime: {e}")))
}

/// The longest `yui tools` waits for the MCP servers to start before it reports the slow ones as
/// still starting.
pub const MCP_SETTLE: std::time::Duration = std::time::Duration::from_secs(60);

/// Run one turn, handing each event to `on_event`; Ctrl-C stops it.
async fn one_turn(
    s: &Setup,
    window: WindowKind,
    message: &str,
    audio: Option<&crate::turn_audio::TurnAudio>,
    mut on_event: impl FnMut(&TurnEvent),
) -> Result<turn::TurnOutcome, CoreError> {
    if yui_core::tools::registry::declares_client_tools(window) {
        // The MCP servers' tools are declared once they are listed: start them and give those
        // still starting a short grace (`yui.mcp`), never their whole start timeout.
        let grace = yui_core::settings::mcp_grace::load(&s.store).turn_grace;
        yui_core::tools::mcp::current().settle_for_turn(grace).await;
    }
    let (mut req, registry) = turn::prepare(
        &s.store,
        &s.clock,
        &s.preset,
        window,
        message,
        s.backend.clone(),
    )?;
    req.timeouts = s.timeouts;
    let mut deps = TurnDeps::new(s.store.clone(), s.clock.clone(), &s.timeouts)?;
    // The built-in engine: the turn starts it and sends to it (its crash is the turn's error).
    deps.builtin = s.engine.clone();
    if let Some(a) = audio {
        a.attach(&mut deps)?;
    }
    let mut handle = turn::start(deps, req, registry);
    let ctrl_c = cancel_on_ctrl_c(handle.stopper());
    while let Some(ev) = handle.events.recv().await {
        on_event(&ev);
    }
    ctrl_c.abort();
    handle
        .join
        .await
        .map_err(|e| CoreError::internal(format!("the turn task failed: {e}")))
}

/// `yui turn`: JSON lines on stdout; the exit code says how the turn ended.
pub fn run_turn(paths: &Paths, args: &TurnArgs) -> Result<u8, CoreError> {
    let s = setup(paths, &args.target)?;
    let rt = runtime()?;
    let message = match (&args.message, &args.audio_in) {
        (Some(m), _) => m.clone(),
        (None, Some(f)) => crate::turn_audio::spoken_message(f),
        (None, None) => String::new(),
    };
    let outcome = rt.block_on(async {
        let audio = crate::turn_audio::TurnAudio::from_args(
            s.backend.transport,
            args.audio_in.as_deref(),
            args.audio_out.as_deref(),
        )?;
        let outcome = one_turn(&s, args.target.window, &message, audio.as_ref(), |ev| {
            let mut out = std::io::stdout().lock();
            if let Ok(line) = serde_json::to_string(ev) {
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        })
        .await;
        match &audio {
            Some(a) => a.end(outcome).await,
            None => outcome,
        }
    });
    rt.block_on(yui_core::tools::mcp::shutdown());
    if let Some(e) = &s.engine {
        rt.block_on(e.stop());
    }
    let outcome = outcome?;
    Ok(match outcome.status {
        TurnStatus::Ok | TurnStatus::Silent => 0,
        TurnStatus::Error => 1,
        TurnStatus::Stopped => 130,
    })
}

/// `yui chat`: an interactive conversation. `/reset` starts a new Responses session,
/// `/quit` (or end of input) leaves.
pub fn run_chat(paths: &Paths, args: &ChatArgs) -> Result<u8, CoreError> {
    let s = setup(paths, &args.target)?;
    let rt = runtime()?;
    let name = yui_core::presets::get(&s.store, &s.preset)?.name;
    let at = match &s.engine {
        Some(_) => "YUI's built-in engine".to_string(),
        None => s.backend.base_url.clone(),
    };
    eprintln!(
        "Talking to {name} over {} at {at} ({}). /reset starts over, /quit leaves, Ctrl-C stops a reply.",
        s.backend.transport.as_str(),
        s.backend.model
    );
    // A long conversation: the built-in engine stops after the idle time without a turn.
    let _idle = s.engine.as_ref().map(|e| {
        let _rt = rt.enter();
        e.watch_idle(std::time::Duration::from_secs(5))
    });
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    loop {
        eprint!("you> ");
        let _ = std::io::stderr().flush();
        let Some(line) = lines.next() else { break };
        let line = line.map_err(|e| CoreError::internal(e.to_string()))?;
        let msg = line.trim();
        match msg {
            "" => continue,
            "/quit" | "/exit" => break,
            "/reset" => {
                turn::chain::reset(&s.store, &s.preset)?;
                eprintln!("(new session)");
                continue;
            }
            _ => {}
        }
        print!("{name}> ");
        let _ = std::io::stdout().flush();
        let outcome = rt.block_on(one_turn(&s, args.target.window, msg, None, |ev| {
            let mut out = std::io::stdout().lock();
            let _ = match ev {
                TurnEvent::Speech { delta } => write!(out, "{delta}"),
                TurnEvent::Render { text } => write!(out, "{text}"),
                TurnEvent::Cue { cue, .. } => {
                    let parts: Vec<&str> = [&cue.emotion_id, &cue.motion_id, &cue.emotion_text]
                        .into_iter()
                        .flatten()
                        .map(String::as_str)
                        .collect();
                    write!(out, " [{}] ", parts.join(" "))
                }
                TurnEvent::ToolCall {
                    name, arguments, ..
                } => {
                    write!(out, " [{name} {arguments}")
                }
                TurnEvent::ToolResult { result, .. } => {
                    write!(out, " → {}] ", short(result.as_text()))
                }
                TurnEvent::ToolStatus { name, status, .. } => {
                    write!(out, " [{name}: {status}] ")
                }
                TurnEvent::TurnEnd { .. } => Ok(()),
            };
            let _ = out.flush();
        }))?;
        match outcome.status {
            TurnStatus::Ok => println!(),
            TurnStatus::Silent => println!("(silent)"),
            TurnStatus::Stopped => println!(" (stopped)"),
            TurnStatus::Error => println!(
                "\n(error: {})",
                outcome.error.unwrap_or_else(|| "unknown".into())
            ),
        }
    }
    rt.block_on(yui_core::tools::mcp::shutdown());
    if let Some(e) = &s.engine {
        rt.block_on(e.stop());
    }
    Ok(0)
}

fn short(s: &str) -> String {
    let mut t: String = s.chars().take(80).collect();
    if s.chars().count() > 80 {
        t.push('…');
    }
    t.replace('\n', " ")
}
