//! Text-to-speech engines behind one trait ([`TtsEngine`]): speech-dispatcher (`spd-say`, the
//! zero-set-up default, which plays by itself) and an OpenAI-compatible `POST {base}/audio/speech`
//! (JSON `{model, input, voice, response_format: wav|pcm, speed, instructions?}` → audio bytes),
//! whose audio YUI plays and whose envelope it computes.
//!
//! Voice direction: speech-dispatcher takes rate/pitch/volume/voice type ([`Direction`]); an
//! OpenAI-compatible server takes `speed` (from the rate: ±100 → ×2 / ×½) and the character's
//! voice name, and `instructions` (the cue's caption and emotion text, as free words) only when
//! the user marked the server as honouring it (`yui.voice.tts.instructions`): local servers
//! ignore or refuse it.

use super::pcm::{Pcm, SpokenAudio};
use super::stt::{client, status_error, transport_error, SpeechError};
use super::{Direction, Speaker, SpeechOutcome};
use async_trait::async_trait;
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// One sentence to say, and how.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Line {
    pub text: String,
    pub direction: Direction,
    /// Free-words direction (the cue's caption and emotion text), for engines that take it.
    pub instructions: Option<String>,
    /// The character's voice name on an OpenAI-compatible server (`None`: the configured one).
    pub voice: Option<String>,
}

impl Line {
    pub fn plain(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Default::default()
        }
    }
}

/// What an engine made of a line.
#[derive(Debug, Clone, PartialEq)]
pub enum Rendered {
    /// Audio to play, with its lip-sync envelope.
    Audio(SpokenAudio),
    /// The engine spoke the line itself (speech-dispatcher); no audio, no envelope.
    PlayedItself(SpeechOutcome),
}

/// A text-to-speech engine.
#[async_trait]
pub trait TtsEngine: Send + Sync {
    /// The engine's name as settings and the CLI spell it.
    fn name(&self) -> &'static str;
    /// Whether it returns audio (and so can write a WAV and drive lip sync).
    fn makes_audio(&self) -> bool;
    /// Make (or, for an engine that plays by itself, speak) one line.
    async fn render(
        &self,
        line: &Line,
        cancel: &CancellationToken,
    ) -> Result<Rendered, SpeechError>;
}

/// Whether no other character is speaking (see [`Speaker::say_among`]).
pub type Alone = std::sync::Arc<dyn Fn() -> bool + Send + Sync>;

/// speech-dispatcher through `spd-say --wait`.
pub struct SpeechDispatcher {
    pub speaker: Speaker,
    /// Among other characters: a stop cancels speech-dispatcher's speech only when this says
    /// nobody else speaks (`None`: always).
    pub alone: Option<Alone>,
}

#[async_trait]
impl TtsEngine for SpeechDispatcher {
    fn name(&self) -> &'static str {
        super::SPEECH_DISPATCHER
    }
    fn makes_audio(&self) -> bool {
        false
    }
    async fn render(
        &self,
        line: &Line,
        cancel: &CancellationToken,
    ) -> Result<Rendered, SpeechError> {
        let alone = self.alone.clone();
        let alone = move || alone.as_ref().is_none_or(|f| f());
        match self
            .speaker
            .say_among(&line.text, &line.direction, cancel, &alone)
            .await
        {
            SpeechOutcome::Unavailable(why) => Err(SpeechError::Unavailable(why)),
            other => Ok(Rendered::PlayedItself(other)),
        }
    }
}

/// An OpenAI-compatible speech server.
#[derive(Debug, Clone)]
pub struct OpenAiTts {
    pub base_url: String,
    pub model: String,
    pub voice: String,
    /// `wav` or `pcm`.
    pub response_format: String,
    pub pcm_rate: u32,
    pub speed: f32,
    pub instructions: bool,
    pub api_key: Option<String>,
    pub timeout: Duration,
}

impl OpenAiTts {
    pub fn from_settings(
        s: &super::config::TtsSettings,
        base_url: String,
        api_key: Option<String>,
    ) -> Self {
        Self {
            base_url,
            model: s.model.clone(),
            voice: s.voice.clone(),
            response_format: s.response_format.clone(),
            pcm_rate: s.pcm_rate,
            speed: s.speed,
            instructions: s.instructions,
            api_key,
            timeout: Duration::from_secs(s.timeout_secs),
        }
    }

    /// The request body for a line (exactly what goes on the wire).
    pub fn body(&self, line: &Line) -> serde_json::Value {
        // rate −100…100 → speed ×½…×2 on top of the configured speed.
        // In f64, so the JSON says 1.19, not 1.190000057.
        let speed =
            (self.speed as f64 * 2f64.powf(line.direction.rate as f64 / 100.0)).clamp(0.25, 4.0);
        let mut body = json!({
            "model": self.model,
            "input": line.text,
            "voice": line.voice.as_deref().unwrap_or(&self.voice),
            "response_format": self.response_format,
            "speed": (speed * 100.0).round() / 100.0,
        });
        if self.instructions {
            if let Some(i) = line
                .instructions
                .as_deref()
                .filter(|i| !i.trim().is_empty())
            {
                body["instructions"] = json!(i.trim());
            }
        }
        body
    }
}

#[async_trait]
impl TtsEngine for OpenAiTts {
    fn name(&self) -> &'static str {
        super::OPENAI
    }
    fn makes_audio(&self) -> bool {
        true
    }
    async fn render(
        &self,
        line: &Line,
        cancel: &CancellationToken,
    ) -> Result<Rendered, SpeechError> {
        let url = format!("{}/audio/speech", self.base_url.trim_end_matches('/'));
        let what = "speech server";
        let client = client(self.timeout)?;
        let mut rb = client.post(&url).json(&self.body(line));
        if let Some(k) = &self.api_key {
            rb = rb.bearer_auth(k);
        }
        let exchange = async {
            let resp = rb
                .send()
                .await
                .map_err(|e| transport_error(what, &url, e, self.timeout))?;
            let status = resp.status();
            let ctype = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let body = resp
                .bytes()
                .await
                .map_err(|e| transport_error(what, &url, e, self.timeout))?;
            if !status.is_success() {
                return Err(status_error(what, &url, status, &body));
            }
            if ctype.starts_with("application/json") || ctype.starts_with("text/") {
                let start: String = String::from_utf8_lossy(&body).chars().take(120).collect();
                return Err(SpeechError::BadAnswer(format!(
                    "the {what} at {url} answered {ctype} instead of audio: {start}"
                )));
            }
            let reply = format!("the {what}'s reply");
            let pcm = match self.response_format.as_str() {
                "pcm" => {
                    if body.starts_with(b"RIFF") {
                        // Some servers send WAV whatever was asked; take it as such.
                        Pcm::from_wav(&body, &reply)
                            .map_err(|e| SpeechError::BadAnswer(e.to_string()))?
                    } else {
                        Pcm::from_s16le(&body, self.pcm_rate)
                    }
                }
                _ => Pcm::from_wav(&body, &reply)
                    .map_err(|e| SpeechError::BadAnswer(e.to_string()))?,
            };
            if pcm.samples.is_empty() {
                return Err(SpeechError::BadAnswer(format!(
                    "the {what} at {url} sent no audio"
                )));
            }
            Ok(Rendered::Audio(SpokenAudio::new(pcm)))
        };
        tokio::select! {
            r = exchange => r,
            _ = cancel.cancelled() => Ok(Rendered::PlayedItself(SpeechOutcome::Cancelled)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(instructions: bool) -> OpenAiTts {
        OpenAiTts::from_settings(
            &crate::config::TtsSettings {
                instructions,
                ..Default::default()
            },
            "http://127.0.0.1:1/v1".into(),
            None,
        )
    }

    #[test]
    fn direction_becomes_speed_and_voice_and_instructions_only_where_honoured() {
        let line = Line {
            text: "Hi.".into(),
            direction: Direction {
                rate: 100,
                ..Default::default()
            },
            instructions: Some(" whispering, sleepy ".into()),
            voice: Some("nova".into()),
        };
        assert_eq!(
            server(false).body(&line),
            json!({"model": "tts-1", "input": "Hi.", "voice": "nova", "response_format": "wav", "speed": 2.0})
        );
        let b = server(true).body(&line);
        assert_eq!(b["instructions"], "whispering, sleepy");
        let slow = Line {
            direction: Direction {
                rate: -100,
                ..Default::default()
            },
            ..Line::plain("x")
        };
        assert_eq!(server(true).body(&slow)["speed"], 0.5);
        assert_eq!(server(true).body(&slow)["voice"], "alloy");
        assert!(server(true).body(&slow).get("instructions").is_none());
    }
}
