//! `yui say` and `yui listen`: speech out and in without the app.
//!
//! `yui say --text TEXT` speaks through the configured (or given) engine, sentence by sentence,
//! printing a JSON line as each sentence starts (with its lip-sync envelope) and ends, then
//! `{"type":"done",…}`; `--out FILE.wav` writes the audio instead of playing it. `yui listen
//! --wav FILE` or `--mic --seconds N` prints `{"type":"utterance","start_ms","end_ms","text"}`
//! per utterance. Errors: `{code, message}` on stderr, exit 1 (docs/voice.md).

use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use yui_core::paths::Paths;
use yui_core::voice::chunk::sentences;
use yui_core::voice::config::{self, SttSettings};
use yui_core::voice::hosts;
use yui_core::voice::listen::{listen_clip, listen_mic, Utterance};
use yui_core::voice::pcm::Pcm;
use yui_core::voice::speak::{speak_lines, SpeakEvent};
use yui_core::voice::stt::SttRequest;
use yui_core::voice::tts::{Line, Rendered};
use yui_core::voice::{Direction, EngineChoice, SpeechOutcome};
use yui_core::{CoreError, ErrorCode, Store};

/// The most of a WAV file `yui listen` reads (about 50 minutes of 48 kHz stereo).
const MAX_WAV_BYTES: u64 = 1 << 30;

#[derive(Debug, Args)]
pub struct SayArgs {
    /// What to say.
    #[arg(long, required_unless_present = "devices")]
    pub text: Option<String>,
    /// Speak in this character's voice (its preset's voice name, rate, pitch, voice type).
    #[arg(long)]
    pub preset: Option<String>,
    /// Write a 16-bit WAV instead of playing (engines that return audio only).
    #[arg(long, value_name = "FILE.wav")]
    pub out: Option<PathBuf>,
    /// speech_dispatcher | openai (default: yui.voice's engine).
    #[arg(long)]
    pub engine: Option<String>,
    /// The OpenAI-compatible speech server (default: yui.voice.tts, else the chat backend's).
    #[arg(long)]
    pub base_url: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long)]
    pub voice: Option<String>,
    /// The output device (default: yui.voice.listen's, else the system's).
    #[arg(long)]
    pub device: Option<String>,
    /// List the audio devices and exit.
    #[arg(long)]
    pub devices: bool,
}

#[derive(Debug, Args)]
pub struct ListenArgs {
    /// A 16-bit PCM WAV file to transcribe.
    #[arg(
        long,
        value_name = "FILE.wav",
        conflicts_with = "mic",
        required_unless_present = "mic"
    )]
    pub wav: Option<PathBuf>,
    /// Listen on the microphone (with --seconds).
    #[arg(long, requires = "seconds")]
    pub mic: bool,
    /// How long to listen on the microphone.
    #[arg(long)]
    pub seconds: Option<f64>,
    /// The speech-to-text server (default: yui.voice.stt, else the chat backend's).
    #[arg(long)]
    pub base_url: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    /// The spoken language (ISO-639-1), e.g. en.
    #[arg(long)]
    pub language: Option<String>,
    /// The microphone (default: yui.voice.listen's, else the system's).
    #[arg(long)]
    pub device: Option<String>,
}

fn line(v: serde_json::Value) {
    println!("{v}");
}

/// The lines of `text` in `preset`'s voice.
fn lines_for(store: &Store, text: &str, preset: Option<&str>) -> Result<Vec<Line>, CoreError> {
    let (direction, voice) = match preset {
        Some(id) => {
            let p = yui_core::presets::get(store, id)?;
            let name = p
                .voice
                .get("name")
                .and_then(|n| n.as_str())
                .map(str::to_string);
            (Direction::of_preset(&p.voice), name)
        }
        None => (Direction::default(), None),
    };
    Ok(sentences(text)
        .into_iter()
        .map(|t| Line {
            text: t,
            direction,
            instructions: None,
            voice: voice.clone(),
        })
        .collect())
}

pub fn say(paths: &Paths, args: &SayArgs) -> Result<u8, CoreError> {
    let rt = crate::turn_cmd::runtime()?;
    if args.devices {
        let list = rt
            .block_on(async { tokio::task::spawn_blocking(|| hosts::host().devices()).await })
            .map_err(|e| CoreError::internal(e.to_string()))??;
        line(serde_json::to_value(list)?);
        return Ok(0);
    }
    let store = Store::open(paths.db_path())?;
    let text = args.text.clone().unwrap_or_default();
    let lines = lines_for(&store, &text, args.preset.as_deref())?;
    if lines.is_empty() {
        return Err(CoreError::invalid(
            "--text has nothing to say (no letters or digits)",
        ));
    }
    let choice = EngineChoice {
        engine: args.engine.clone(),
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        voice: args.voice.clone(),
    };
    let engine = yui_core::voice::engine_for(&store, paths, &choice, None)?;
    rt.block_on(async {
        let cancel = yui_core::turn::CancellationToken::new();
        let ctrl_c = crate::turn_cmd::cancel_on_ctrl_c(cancel.clone());
        let out =
            if let Some(out) = &args.out {
                write_wav(engine.as_ref(), &lines, out, &cancel).await
            } else {
                let device = args
                    .device
                    .clone()
                    .or(config::load_listen(&store)?.output_device);
                let started = std::time::Instant::now();
                let report = speak_lines(engine.clone(), None, device, lines, &cancel, &|ev| {
                    match ev {
                        SpeakEvent::Started {
                            index,
                            text,
                            envelope,
                        } => line(json!({
                            "type": "sentence", "index": index, "text": text, "envelope": envelope,
                        })),
                        SpeakEvent::Finished { index, ms } => {
                            line(json!({"type": "played", "index": index, "ms": ms}))
                        }
                    }
                })
                .await;
                match report.outcome {
                    SpeechOutcome::Unavailable(why) => Err(CoreError::new(ErrorCode::Backend, why)),
                    o => {
                        line(json!({
                            "type": "done",
                            "engine": engine.name(),
                            "outcome": format!("{o:?}").to_lowercase(),
                            "played_ms": report.played_ms,
                            "elapsed_ms": started.elapsed().as_millis() as u64,
                        }));
                        Ok(0)
                    }
                }
            };
        ctrl_c.abort();
        out
    })
}

async fn write_wav(
    engine: &dyn yui_core::voice::tts::TtsEngine,
    lines: &[Line],
    out: &std::path::Path,
    cancel: &yui_core::turn::CancellationToken,
) -> Result<u8, CoreError> {
    if !engine.makes_audio() {
        return Err(CoreError::invalid(format!(
            "{} plays by itself and cannot write a WAV; use --engine openai with a speech server",
            engine.name()
        )));
    }
    let mut all = Pcm::default();
    let started = std::time::Instant::now();
    let mut first_ms = None;
    for l in lines {
        match engine.render(l, cancel).await? {
            Rendered::Audio(a) => {
                first_ms.get_or_insert(started.elapsed().as_millis() as u64);
                if all.samples.is_empty() {
                    all.rate = a.pcm.rate;
                }
                let pcm = a
                    .pcm
                    .resampled(all.rate)
                    .map_err(|e| CoreError::internal(e.to_string()).with_source(e))?;
                all.samples.extend(pcm.samples);
            }
            Rendered::PlayedItself(_) => return Err(CoreError::internal("stopped")),
        }
    }
    std::fs::write(out, all.to_wav())
        .map_err(|e| CoreError::invalid(format!("cannot write {}: {e}", out.display())))?;
    line(json!({
        "type": "done",
        "engine": engine.name(),
        "out": out,
        "sentences": lines.len(),
        "rate": all.rate,
        "ms": all.duration_ms(),
        "first_audio_ms": first_ms,
        "elapsed_ms": started.elapsed().as_millis() as u64,
        "envelope": all.envelope(),
    }));
    Ok(0)
}

fn stt_request(store: &Store, paths: &Paths, args: &ListenArgs) -> Result<SttRequest, CoreError> {
    let mut s: SttSettings = config::load_stt(store)?;
    if let Some(b) = &args.base_url {
        s.base_url = Some(b.clone());
    }
    if let Some(m) = &args.model {
        s.model = m.clone();
    }
    if let Some(l) = &args.language {
        s.language = Some(l.clone());
    }
    let s = SttSettings::from_value(&serde_json::to_value(&s)?)?;
    Ok(SttRequest {
        base_url: config::base_url_or_backend(store, &s.base_url)?,
        model: s.model,
        language: s.language,
        prompt: s.prompt,
        api_key: config::speech_key(paths, s.use_backend_key),
        timeout: std::time::Duration::from_secs(s.timeout_secs),
    })
}

pub fn listen(paths: &Paths, args: &ListenArgs) -> Result<u8, CoreError> {
    let store = Store::open(paths.db_path())?;
    let req = std::sync::Arc::new(stt_request(&store, paths, args)?);
    let listen_cfg = config::load_listen(&store)?;
    let vad = listen_cfg.vad();
    let mut print = |h: Utterance| {
        line(
            json!({"type": "utterance", "start_ms": h.start_ms, "end_ms": h.end_ms, "text": h.text}),
        )
    };
    let rt = crate::turn_cmd::runtime()?;
    let (count, source) = if let Some(wav) = &args.wav {
        let size = std::fs::metadata(wav)
            .map_err(|e| CoreError::not_found(format!("cannot read {}: {e}", wav.display())))?
            .len();
        if size > MAX_WAV_BYTES {
            return Err(CoreError::invalid(format!(
                "{} is {} MiB; yui listen reads WAV files up to {} MiB",
                wav.display(),
                size >> 20,
                MAX_WAV_BYTES >> 20
            )));
        }
        let bytes = std::fs::read(wav)
            .map_err(|e| CoreError::not_found(format!("cannot read {}: {e}", wav.display())))?;
        let name = wav.display().to_string();
        let clip = Pcm::from_wav(&bytes, &name)
            .map_err(|e| CoreError::invalid(e.to_string()).with_source(e))?;
        let n = rt
            .block_on(listen_clip(&clip, vad, req, &mut print))
            .map_err(|e| CoreError::new(ErrorCode::Backend, e.to_string()).with_source(e))?;
        (n, name)
    } else {
        let secs = args.seconds.unwrap_or(0.0);
        if !(0.1..=3600.0).contains(&secs) {
            return Err(CoreError::invalid("--seconds must be 0.1-3600"));
        }
        let device = args.device.clone().or(listen_cfg.input_device);
        let n = rt.block_on(async {
            let cancel = yui_core::turn::CancellationToken::new();
            let ctrl_c = crate::turn_cmd::cancel_on_ctrl_c(cancel.clone());
            let r = listen_mic(
                hosts::host(),
                device.as_deref(),
                (secs * 1000.0) as u64,
                vad,
                req,
                &cancel,
                &mut print,
            )
            .await;
            ctrl_c.abort();
            r
        });
        let n = n.map_err(|e| CoreError::new(ErrorCode::Backend, e.to_string()).with_source(e))?;
        (n, "the microphone".to_string())
    };
    if count == 0 {
        return Err(CoreError::not_found(format!(
            "no speech heard in {source}: only silence or sound below the voice-activity threshold (yui.voice.listen sensitivity {})",
            listen_cfg.sensitivity
        )));
    }
    Ok(0)
}
