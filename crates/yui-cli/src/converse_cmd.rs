//! `yui converse`: the user's turn and every addressed turn that follows, run by the core's stage
//! exactly as the app runs them, except that playback counts as finished when a turn ends and
//! nothing is spoken. Prints the same JSON lines as `yui turn`, each with a `"preset"` field
//! naming the character whose turn it is; a `{"type":"character_addressed",…}` line shows each
//! hand-over. Exits when the exchange ends (nobody addressed, `[SILENT]`, the chain cap): 0, or
//! 1 when the user's turn ended in error, 130 when stopped (Ctrl-C).

use crate::turn_cmd::{runtime, setup, TargetArgs};
use clap::Args;
use serde_json::Value;
use std::io::Write;
use yui_core::paths::Paths;
use yui_core::stage::UserTurn;
use yui_core::stage::{BackendSource, Origin, Stage, StageEvent, StageOptions};
use yui_core::turn::{TurnEvent, TurnStatus};
use yui_core::CoreError;

#[derive(Debug, Args)]
pub struct ConverseArgs {
    /// The user's message.
    #[arg(long)]
    pub message: String,
    #[command(flatten)]
    pub target: TargetArgs,
}

fn print(v: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

pub fn run(paths: &Paths, args: &ConverseArgs) -> Result<u8, CoreError> {
    let s = setup(paths, &args.target)?;
    let rt = runtime()?;
    rt.block_on(async {
        let opts = StageOptions {
            backend: BackendSource::Fixed {
                backend: s.backend.clone(),
                timeouts: s.timeouts,
            },
            headless: true,
            engine: s.engine.clone(),
            ..StageOptions::default()
        };
        let (stage, mut rx) = Stage::new(s.store.clone(), s.clock.clone(), paths.clone(), opts);
        let first = stage.user_turn(UserTurn::to(&s.preset, args.target.window, &args.message))?;
        let stopper = stage.clone();
        let ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stopper.stop_all();
            }
        });
        let mut code = 0;
        while let Some(ev) = rx.recv().await {
            match ev {
                StageEvent::Turn {
                    preset_id,
                    turn_id,
                    origin,
                    event,
                    ..
                } => {
                    if let (true, TurnEvent::TurnEnd { status, .. }) = (turn_id == first, &event) {
                        code = match status {
                            TurnStatus::Error => 1,
                            TurnStatus::Stopped => 130,
                            TurnStatus::Ok | TurnStatus::Silent => 0,
                        };
                    }
                    let mut v = serde_json::to_value(&event).unwrap_or_default();
                    if let Some(m) = v.as_object_mut() {
                        m.insert("preset".into(), preset_id.into());
                        if let Origin::Addressed { from, .. } = origin {
                            m.insert("addressed_by".into(), from.into());
                        }
                    }
                    print(&v);
                }
                ev @ StageEvent::CharacterAddressed { .. } => {
                    print(&serde_json::to_value(&ev).unwrap_or_default())
                }
                StageEvent::Idle => break,
                _ => {}
            }
        }
        ctrl_c.abort();
        if let Some(e) = &s.engine {
            e.stop().await;
        }
        Ok(code)
    })
}
