//! `yui doctor`'s speech checks, when voice is configured (`yui.voice` engine `openai`, or a
//! stored `yui.voice.tts` / `yui.voice.stt`): one sentence synthesised, and that audio (or, with
//! no speech server, a second of quiet) transcribed, each timed. And the listening half of
//! Settings → Voice's Test ([`test_listen`]): a few seconds from the microphone, or a sentence
//! the speech server says, sent to the transcription server, and what it heard.

use super::audio::AudioHost;
use super::config;
use super::pcm::{Pcm, STT_RATE};
use super::stt::transcribe;
use super::tts::{Line, Rendered};
use super::{vad, EngineChoice, OPENAI};
use crate::error::{CoreError, Result};
use crate::paths::Paths;
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;
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
                    detail: e.to_string(),
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
    let req = config::stt_request(store, paths);
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
                    detail: e.to_string(),
                    ms,
                },
            }
        }
    };
    out.push(check);
    out
}

/// Where the listening test's audio comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListenSource {
    /// The configured microphone, for [`LISTEN_TEST_MS`].
    Microphone,
    /// [`CHECK_SENTENCE`] made by the configured `/audio/speech` server (no microphone needed).
    Sample,
}

/// How long the microphone test records.
pub const LISTEN_TEST_MS: u64 = 4_000;

/// What the listening test heard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListenTest {
    /// `the microphone "X"` or `the speech server's "Testing one two three."`.
    pub source: String,
    /// Milliseconds of speech sent.
    pub speech_ms: u64,
    /// What the transcription server heard.
    pub text: String,
    /// Milliseconds the transcription server took.
    pub transcribe_ms: u64,
}

/// The listening half of the Test button: record [`LISTEN_TEST_MS`] from the configured
/// microphone (keeping only its speech, as hands-free listening does) or have the speech server
/// say [`CHECK_SENTENCE`], send it to the configured transcription server, and say what came
/// back. Every failure is one sentence in plain words; nothing is stored.
pub async fn test_listen(
    store: &Store,
    paths: &Paths,
    host: Arc<dyn AudioHost>,
    source: ListenSource,
    cancel: &CancellationToken,
) -> Result<ListenTest> {
    let req = config::stt_request(store, paths)?;
    let (speech, source) = match source {
        ListenSource::Microphone => microphone_speech(store, host, cancel).await?,
        ListenSource::Sample => (
            spoken_sample(store, paths, cancel).await?,
            format!("the speech server's {CHECK_SENTENCE:?}"),
        ),
    };
    let speech_ms = speech.duration_ms();
    let t = Instant::now();
    let text = tokio::select! {
        _ = cancel.cancelled() => return Err(CoreError::invalid("the listening test was stopped")),
        r = transcribe(&req, &speech) => r,
    }
    .map_err(|e| CoreError::new(crate::ErrorCode::Backend, e.to_string()))?;
    let transcribe_ms = t.elapsed().as_millis() as u64;
    let text = text.trim().to_string();
    if text.is_empty() {
        return Err(CoreError::new(
            crate::ErrorCode::Backend,
            format!(
                "the speech-to-text server at {} heard no words in {:.1} s of speech from {source}",
                req.base_url,
                speech_ms as f64 / 1000.0
            ),
        ));
    }
    Ok(ListenTest {
        source,
        speech_ms,
        text,
        transcribe_ms,
    })
}

/// [`LISTEN_TEST_MS`] from the configured microphone, cut to its speech (16 kHz).
async fn microphone_speech(
    store: &Store,
    host: Arc<dyn AudioHost>,
    cancel: &CancellationToken,
) -> Result<(Pcm, String)> {
    let listen = config::load_listen(store)?;
    let mut cap = host.capture(listen.input_device.as_deref()).await?;
    let source = format!("the microphone \"{}\"", cap.device);
    let heard = cap.record(LISTEN_TEST_MS, cancel).await?;
    drop(cap); // the device closes before the request goes out
    if cancel.is_cancelled() {
        return Err(CoreError::invalid("the listening test was stopped"));
    }
    let heard = heard
        .resampled(STT_RATE)
        .map_err(|e| CoreError::invalid(e.to_string()).with_source(e))?;
    let segments = vad::split(&heard.samples, listen.vad());
    let (Some(first), Some(last)) = (segments.first(), segments.last()) else {
        return Err(CoreError::not_found(format!(
            "nothing was heard from {source} in {} s: speak right after pressing the button (is the microphone muted, or the sensitivity too low?)",
            LISTEN_TEST_MS / 1000
        )));
    };
    let at = |ms: u64| ((ms * STT_RATE as u64 / 1000) as usize).min(heard.samples.len());
    let speech = heard.samples[at(first.start_ms)..at(last.end_ms)].to_vec();
    Ok((Pcm::new(STT_RATE, speech), source))
}

/// [`CHECK_SENTENCE`] from the configured `/audio/speech` server.
async fn spoken_sample(store: &Store, paths: &Paths, cancel: &CancellationToken) -> Result<Pcm> {
    let choice = EngineChoice {
        engine: Some(OPENAI.into()),
        ..Default::default()
    };
    let engine = super::engine_for(store, paths, &choice, None)?;
    match engine.render(&Line::plain(CHECK_SENTENCE), cancel).await {
        Ok(Rendered::Audio(a)) => Ok(a.pcm),
        Ok(Rendered::PlayedItself(_)) => Err(CoreError::invalid(
            "the speech engine plays by itself and gives no sample: use the microphone",
        )),
        Err(e) => Err(CoreError::new(
            crate::ErrorCode::Backend,
            format!("no sample to send: {e}"),
        )),
    }
}
