//! Speaking a whole reply with the engine `yui.voice` names: speech-dispatcher (yui-voice's
//! [`Speaker`]) or the OpenAI-compatible speech server, whose URL and key may be the chat
//! backend's (hence here, not in yui-voice).

use super::{chunk, config, engine_for, load, speak, tts, EngineChoice, Script, Speaker};
use super::{SpeechOutcome, OPENAI};
use crate::store::Store;
use std::ffi::OsStr;
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// Speak a turn's reply if the voice switch is on: the one call the shell makes once a turn has
/// ended. Off → `Skipped` at once; no `spd-say` → `Unavailable` with the one-line status (logged
/// at info, never an error on screen). `path` is where to look for `spd-say` (`None`: the
/// process `PATH`).
pub async fn speak_reply(
    store: &Store,
    script: &Script,
    path: Option<&OsStr>,
    cancel: &CancellationToken,
) -> SpeechOutcome {
    speak_reply_among(store, script, path, cancel, &|| true).await
}

/// [`speak_reply`] for one of several characters: a cancel stops only this one's speech unless
/// `alone()` (see [`Speaker::say_among`]).
pub async fn speak_reply_among(
    store: &Store,
    script: &Script,
    path: Option<&OsStr>,
    cancel: &CancellationToken,
    alone: &(dyn Fn() -> bool + Sync),
) -> SpeechOutcome {
    let setting = match load(store) {
        Ok(s) => s,
        Err(e) => return SpeechOutcome::Unavailable(format!("voice setting unusable: {e}")),
    };
    if !setting.enabled {
        return SpeechOutcome::Skipped;
    }
    if setting.engine == OPENAI {
        let outcome = speak_openai(store, script, cancel).await;
        if let SpeechOutcome::Unavailable(line) = &outcome {
            tracing::info!("voice: {line}");
        }
        return outcome;
    }
    let found = match path {
        Some(p) => Speaker::detect_on(Some(p)),
        None => Speaker::detect(),
    };
    let outcome = match found {
        Ok(speaker) => speaker.speak_among(script, cancel, alone).await,
        Err(line) => SpeechOutcome::Unavailable(line.to_string()),
    };
    if let SpeechOutcome::Unavailable(line) = &outcome {
        tracing::info!("voice: {line}");
    }
    outcome
}

/// A reply through the OpenAI-compatible speech server of `yui.voice.tts`, sentence by sentence
/// on the configured output device (`yui.voice.listen`), each piece in its direction's speed.
async fn speak_openai(store: &Store, script: &Script, cancel: &CancellationToken) -> SpeechOutcome {
    let data_dir = store
        .path()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let paths = crate::paths::Paths {
        log_dir: data_dir.clone(),
        data_dir,
    };
    let engine = match engine_for(store, &paths, &EngineChoice::default(), None) {
        Ok(e) => e,
        Err(e) => return SpeechOutcome::Unavailable(e.message),
    };
    let device = config::load_listen(store)
        .ok()
        .and_then(|l| l.output_device);
    let lines: Vec<tts::Line> = script
        .utterances()
        .into_iter()
        .flat_map(|u| {
            chunk::sentences(&u.text)
                .into_iter()
                .map(move |text| tts::Line {
                    text,
                    direction: u.direction,
                    ..Default::default()
                })
        })
        .collect();
    speak::speak_lines(engine, None, device, lines, cancel, &|_| {})
        .await
        .outcome
}
