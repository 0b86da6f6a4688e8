//! `yui turn --audio-in FILE.wav --audio-out FILE.wav` (realtime transport): the WAV file is the
//! user's spoken turn (pcm16 24 kHz chunks appended, then committed: the session's turn
//! detection is push-to-talk for it), and the reply's audio is written to a WAV file, or played
//! on the default output device when no --audio-out is given. The JSON lines on stdout are the
//! turn's events, as with every transport.

use std::path::Path;
use std::sync::Arc;
use yui_core::backend::Transport;
use yui_core::turn::{TurnDeps, TurnInput, TurnOutcome};
use yui_core::voice::realtime_audio::{wav_chunks, ReplyPlayer, ReplyRecorder};
use yui_core::CoreError;

/// The longest the command waits for a played reply to be heard after the turn ended.
const PLAYED_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Where the reply's audio goes.
enum Out {
    File(Arc<ReplyRecorder>),
    Device(Arc<ReplyPlayer>),
}

/// One turn's audio in and out.
pub struct TurnAudio {
    chunks: Option<Arc<Vec<Vec<u8>>>>,
    out: Out,
}

/// What the transcript keeps as the user's message of a spoken turn.
pub fn spoken_message(file: &Path) -> String {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.display().to_string());
    format!("(spoken: {name})")
}

impl TurnAudio {
    /// The audio of --audio-in and --audio-out, if any; `None` without both. Call inside the
    /// runtime (the player opens its device on it).
    pub fn from_args(
        transport: Transport,
        audio_in: Option<&Path>,
        audio_out: Option<&Path>,
    ) -> Result<Option<TurnAudio>, CoreError> {
        if audio_in.is_none() && audio_out.is_none() {
            return Ok(None);
        }
        if transport != Transport::Realtime {
            return Err(CoreError::invalid(
                "--audio-in and --audio-out need the realtime transport (--transport realtime)",
            ));
        }
        let chunks = match audio_in {
            Some(f) => {
                let bytes = std::fs::read(f)
                    .map_err(|e| CoreError::invalid(format!("cannot read {}: {e}", f.display())))?;
                let what = f.display().to_string();
                Some(Arc::new(wav_chunks(&bytes, &what).map_err(|e| {
                    CoreError::invalid(e.to_string()).with_source(e)
                })?))
            }
            None => None,
        };
        let out = match audio_out {
            Some(f) => Out::File(Arc::new(ReplyRecorder::new(f))),
            None => Out::Device(Arc::new(
                ReplyPlayer::new(yui_core::voice::hosts::host(), None, None)
                    .map_err(CoreError::from)?,
            )),
        };
        Ok(Some(TurnAudio { chunks, out }))
    }

    /// Hand the turn its audio.
    pub fn attach(&self, deps: &mut TurnDeps) -> Result<(), CoreError> {
        if let Some(c) = &self.chunks {
            deps.input = TurnInput::Audio(c.clone());
        }
        deps.audio_out = Some(match &self.out {
            Out::File(r) => r.clone(),
            Out::Device(p) => p.clone(),
        });
        Ok(())
    }

    /// The turn ended: write the file, or wait until the reply has been heard.
    pub async fn end(
        &self,
        outcome: Result<TurnOutcome, CoreError>,
    ) -> Result<TurnOutcome, CoreError> {
        match &self.out {
            Out::File(r) => r.finish().map_err(CoreError::from)?,
            Out::Device(p) => {
                let _ = p.finish();
                let _ = tokio::time::timeout(PLAYED_WAIT, p.drained()).await;
            }
        }
        outcome
    }
}
