//! `yui vocab`: show the expression vocabulary loaded now and the generate_express schema the
//! next turn will declare on each transport; reset it or change the motion selection. Also the
//! voice switch (`voice`), a spoken test line (`say`) and a sprite-folder check (`sprites`).

use clap::Subcommand;
use serde_json::{json, Value};
use yui_core::backend::Transport;
use yui_core::vocab::{self, Vocab};
use yui_core::voice::{self, Direction, Script, Speaker, SpeechOutcome};
use yui_core::{CoreError, Store};

#[derive(Debug, Subcommand)]
pub enum VocabCmd {
    /// Print the loaded vocabulary and the schema the next turn declares (both transports).
    Show,
    /// Put the default vocabulary back.
    Reset,
    /// Set the expression-motion selection (no ids: offer no body motion).
    Select {
        /// Motion ids to offer the model.
        ids: Vec<String>,
    },
    /// Show the voice switch and whether the engine can speak here; --on / --off flip it.
    Voice {
        #[arg(long, conflicts_with = "off")]
        on: bool,
        #[arg(long)]
        off: bool,
    },
    /// Speak a line through the voice engine now (whatever the switch), with a voice direction.
    Say {
        text: String,
        #[arg(long)]
        caption: Option<String>,
        #[arg(long)]
        emotion_text: Option<String>,
    },
    /// Check a sprite folder: which emotions and motions it gives, what is missing or skipped.
    Sprites { dir: std::path::PathBuf },
}

/// Run a `yui vocab` subcommand; the text to print on success.
pub fn run(store: &Store, cmd: &VocabCmd) -> Result<String, CoreError> {
    match cmd {
        VocabCmd::Show => show(store),
        VocabCmd::Reset => {
            vocab::save(store, &Vocab::default())?;
            show(store)
        }
        VocabCmd::Select { ids } => {
            let mut v = vocab::load(store)?;
            if let Some(unknown) = ids
                .iter()
                .find(|id| !v.motions.iter().any(|m| &m.id == *id))
            {
                return Err(CoreError::invalid(format!("unknown motion id {unknown}")));
            }
            v.motion_selection = ids.clone();
            vocab::save(store, &v)?;
            show(store)
        }
        VocabCmd::Voice { on, off } => {
            let status = if *on || *off {
                voice::update(store, *on, None)?
            } else {
                voice::status(store)?
            };
            Ok(serde_json::to_string_pretty(&status)?)
        }
        VocabCmd::Say {
            text,
            caption,
            emotion_text,
        } => say(text, caption.as_deref(), emotion_text.as_deref()),
        VocabCmd::Sprites { dir } => {
            let set = yui_core::sprites::load_sprite_set(dir, &vocab::load(store)?)?;
            // Sizes, not the data URLs: this is for a person checking a folder.
            let sizes =
                |m: &std::collections::BTreeMap<String, String>| -> serde_json::Map<String, Value> {
                    m.iter().map(|(k, v)| (k.clone(), json!(v.len()))).collect()
                };
            // The mapping made: each emotion id and the file it took (`happy` ← `joy.png`).
            Ok(serde_json::to_string_pretty(&json!({
                "emotions": sizes(&set.emotions),
                "mapping": set.sources,
                "extra": set.extra,
                "motions": sizes(&set.motions),
                "missing": set.missing,
                "skipped": set.skipped,
            }))?)
        }
    }
}

fn say(text: &str, caption: Option<&str>, emotion_text: Option<&str>) -> Result<String, CoreError> {
    let speaker =
        Speaker::detect().map_err(|e| CoreError::not_found(e.to_string()).with_source(e))?;
    let direction = Direction::from_cue(caption, emotion_text);
    let mut script = Script::new();
    script.set_direction(direction);
    script.push_text(text);
    let rt = crate::turn_cmd::runtime()?;
    let cancel = yui_core::turn::CancellationToken::new();
    let outcome = rt.block_on(async {
        // Ctrl-C stops the speech (and tells speech-dispatcher to cancel) rather than leaving it talking.
        let ctrl_c = crate::turn_cmd::cancel_on_ctrl_c(cancel.clone());
        let outcome = speaker.speak(&script, &cancel).await;
        ctrl_c.abort();
        outcome
    });
    match outcome {
        SpeechOutcome::Spoken => Ok(serde_json::to_string_pretty(&json!({
            "spoken": text,
            "args": Speaker::args(text, &direction)
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>(),
        }))?),
        SpeechOutcome::Cancelled => Err(CoreError::internal("stopped")),
        SpeechOutcome::Skipped => Err(CoreError::invalid("nothing to say")),
        SpeechOutcome::Unavailable(line) => Err(CoreError::internal(line)),
    }
}

/// The loaded vocabulary and the declared tool per transport (`null`: no tool is declared).
pub fn show_value(store: &Store) -> Result<Value, CoreError> {
    let v = vocab::load(store)?;
    let offered: Vec<&str> = v.offered_motions().iter().map(|m| m.id.as_str()).collect();
    Ok(json!({
        "vocabulary": v,
        "offered_motions": offered,
        "declared": {
            "chat_completions": vocab::declared_tool(&v, Transport::ChatCompletions),
            "responses": vocab::declared_tool(&v, Transport::Responses),
        }
    }))
}

fn show(store: &Store) -> Result<String, CoreError> {
    Ok(serde_json::to_string_pretty(&show_value(store)?)?)
}
