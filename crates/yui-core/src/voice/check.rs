//! `yui doctor`'s speech checks, when voice is configured (`yui.voice` engine `openai`, or a
//! stored `yui.voice.tts` / `yui.voice.stt`): one sentence synthesised, and that audio (or, with
//! no speech server, a second of quiet) transcribed, each timed.

use super::config;
use super::pcm::{Pcm, STT_RATE};
use super::stt::{transcribe, SttRequest};
use super::tts::{Line, Rendered};
use super::{EngineChoice, OPENAI};
use crate::error::Result;
use crate::paths::Paths;
use crate::store::Store;
use serde::Serialize;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The sentence the check synthesises (and expects back).
pub const CHECK_SENTENCE: &str = "Testing one two three.";

/// One speech check's finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpeechCheck {
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
    pub ms: u64,
}

/// Whether the doctor should run speech checks.
pub fn configured(store: &Store) -> Result<bool> {
    Ok(super::load(store)?.engine == OPENAI || config::servers_configured(store)?)
}

/// Synthesise, then transcribe; never fails (a failure is a finding).
pub async fn run(store: &Store, paths: &Paths) -> Vec<SpeechCheck> {
    let mut out = Vec::new();
    let mut clip: Option<Pcm> = None;
    let choice = EngineChoice {
        engine: Some(OPENAI.into()),
        ..Default::default()
    };
    match super::engine_for(store, paths, &choice, None) {
        Ok(engine) => {
            let t = Instant::now();
            let r = engine
                .render(&Line::plain(CHECK_SENTENCE), &CancellationToken::new())
                .await;
            let ms = t.elapsed().as_millis() as u64;
            out.push(match r {
                Ok(Rendered::Audio(a)) => {
                    let detail = format!(
                        "{} ms of audio at {} Hz in {ms} ms",
                        a.pcm.duration_ms(),
                        a.pcm.rate
                    );
                    clip = Some(a.pcm);
                    SpeechCheck {
                        name: "text_to_speech",
                        ok: true,
                        detail,
                        ms,
                    }
                }
                Ok(Rendered::PlayedItself(o)) => SpeechCheck {
                    name: "text_to_speech",
                    ok: false,
                    detail: format!("{o:?}"),
                    ms,
                },
                Err(e) => SpeechCheck {
                    name: "text_to_speech",
                    ok: false,
                    detail: e.0,
                    ms,
                },
            });
        }
        Err(e) => out.push(SpeechCheck {
            name: "text_to_speech",
            ok: false,
            detail: e.message,
            ms: 0,
        }),
    }
    let req = config::load_stt(store).and_then(|s| {
        Ok(SttRequest {
            base_url: config::base_url_or_backend(store, &s.base_url)?,
            model: s.model,
            language: s.language,
            prompt: s.prompt,
            api_key: config::speech_key(paths, s.use_backend_key),
            timeout: Duration::from_secs(s.timeout_secs),
        })
    });
    let (audio, what) = match clip {
        Some(c) => (c, "the synthesised sentence"),
        None => (
            Pcm::new(STT_RATE, vec![0.0; STT_RATE as usize]),
            "a second of quiet",
        ),
    };
    let check = match req {
        Err(e) => SpeechCheck {
            name: "speech_to_text",
            ok: false,
            detail: e.message,
            ms: 0,
        },
        Ok(req) => {
            let t = Instant::now();
            let r = transcribe(&req, &audio).await;
            let ms = t.elapsed().as_millis() as u64;
            match r {
                Ok(text) => SpeechCheck {
                    name: "speech_to_text",
                    ok: true,
                    detail: format!("{what} heard as {text:?} in {ms} ms"),
                    ms,
                },
                Err(e) => SpeechCheck {
                    name: "speech_to_text",
                    ok: false,
                    detail: e.0,
                    ms,
                },
            }
        }
    };
    out.push(check);
    out
}
