//! Voice output: the voice switch (`yui.voice`, off by default) and a speaker that speaks a reply
//! through the OS speech service — on Linux speech-dispatcher — passing the cue's voice direction
//! (`caption`, `emotion_text`) as far as the engine can take it.
//!
//! **Why the `spd-say` CLI and not a binding crate.** The speech-dispatcher crates bind
//! `libspeechd` in C: every build of YUI (CI, developers, packagers) would then need the
//! `libspeechd-dev` headers and link the library, even with the voice switch off, and a machine
//! without speech-dispatcher could not start the app at all. `spd-say` ships in the
//! `speech-dispatcher` package that any machine able to speak has anyway; spawning it costs a
//! process per utterance (a few ms, negligible next to the speech itself), needs no build
//! dependency, is detected cleanly (not on `PATH` → a one-line status, never an error on screen),
//! and is cancelled by killing it and sending `spd-say --cancel`. `spd-say --wait` returns when the
//! utterance has been spoken, which is what "playback finished" needs.
//!
//! **Voice direction.** speech-dispatcher takes rate, pitch and volume (−100…100) and a voice type
//! (`male1`, `female1`, `child_female`, …), not free text. [`Direction::from_cue`] maps the words
//! of `caption` and `emotion_text` (free text, or an enum-mode tag) onto those: e.g. "whispering"
//! lowers the volume, "excited" raises rate and pitch, "sleepy" slows down. Words it does not know
//! change nothing.
//!
//! A reply is spoken as a [`Script`]: the speech of a turn cut at each cue, each piece with the
//! direction of the cue before it, so a tone change lands where the model put it.

use crate::stt::SpeechError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;
use yui_base::error::{CoreError, Result};
use yui_base::events::TurnEvent;
use yui_base::store::{kv, Store};

pub mod audio;
pub mod chunk;
pub mod config;
pub mod cpal_host;
mod direction;
pub mod echo;
pub mod feed;
pub mod heard;
pub mod hosts;
pub mod listen;
pub mod pcm;
pub mod realtime_audio;
#[cfg(target_os = "linux")]
pub mod recorders;
pub mod speak;
pub mod stream_out;
pub mod stt;
pub mod tts;
pub mod vad;
pub use direction::{Direction, VOICE_TYPES};

/// The speech engines YUI can drive: speech-dispatcher (plays by itself) and an
/// OpenAI-compatible `/audio/speech` server (`yui.voice.tts`; docs/voice.md).
pub const ENGINES: &[&str] = &[SPEECH_DISPATCHER, OPENAI];
pub const SPEECH_DISPATCHER: &str = "speech-dispatcher";
pub const OPENAI: &str = "openai";

/// The engine name as settings spell it (`speech_dispatcher` → `speech-dispatcher`).
pub fn canonical_engine(name: &str) -> Result<&'static str> {
    match name {
        SPEECH_DISPATCHER | "speech_dispatcher" | "spd" => Ok(SPEECH_DISPATCHER),
        OPENAI => Ok(OPENAI),
        other => Err(CoreError::invalid(format!(
            "unknown voice engine {other:?}; known: speech_dispatcher, openai"
        ))),
    }
}
/// The speech-dispatcher client program.
pub const SPD_SAY: &str = "spd-say";
/// The most one utterance may take before `spd-say` is stopped (a hung speech service must not
/// keep a process forever).
const SAY_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);
/// Bytes of `spd-say` output kept (only its first stderr line is reported).
const SAY_CAPTURE: usize = 16 * 1024;

/// The `yui.voice` setting: whether replies are spoken, and by which engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoiceSetting {
    pub enabled: bool,
    #[serde(default = "default_engine")]
    pub engine: String,
    /// Characters may talk at the same time (off: each waits for the one speaking).
    #[serde(default)]
    pub overlap: bool,
}

fn default_engine() -> String {
    SPEECH_DISPATCHER.to_string()
}

impl Default for VoiceSetting {
    fn default() -> Self {
        Self {
            enabled: false,
            engine: default_engine(),
            overlap: false,
        }
    }
}

/// The default `yui.voice` value: [`VoiceSetting::default`] as JSON.
pub fn default_value() -> Value {
    serde_json::to_value(VoiceSetting::default()).expect("a VoiceSetting always serializes")
}

/// Parse and check a `yui.voice` value (settings::set calls this for the key).
pub fn from_value(value: &Value) -> Result<VoiceSetting> {
    let v: VoiceSetting = serde_json::from_value(value.clone()).map_err(|e| {
        CoreError::invalid(format!(
            "yui.voice must be {{\"enabled\": true|false, \"engine\": \"{SPEECH_DISPATCHER}\"|\"{OPENAI}\", \"overlap\": true|false}}: {e}"
        ))
    })?;
    if !ENGINES.contains(&v.engine.as_str()) {
        return Err(CoreError::invalid(format!(
            "unknown voice engine {:?}; known: {}",
            v.engine,
            ENGINES.join(", ")
        )));
    }
    Ok(v)
}

/// The settings key of the voice switch (declared in `yui_core::settings`).
pub const KEY: &str = "yui.voice";

/// The voice setting now.
pub fn load(store: &Store) -> Result<VoiceSetting> {
    from_value(&kv::get(store, KEY)?.unwrap_or_else(default_value))
}

/// Store the voice setting (checked first).
pub fn save(store: &Store, v: &VoiceSetting) -> Result<()> {
    let v = serde_json::to_value(v)?;
    from_value(&v)?;
    kv::put(store, KEY, &v)
}

/// What the settings window shows: the setting, and whether the engine can speak on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VoiceStatus {
    pub enabled: bool,
    pub engine: String,
    pub engines: Vec<String>,
    /// Whether the engine's program was found.
    pub available: bool,
    /// One line for the user, e.g. "speech-dispatcher: ready (/usr/bin/spd-say)".
    pub status: String,
}

/// The voice setting and the engine's availability, looked up on the process `PATH`.
pub fn status(store: &Store) -> Result<VoiceStatus> {
    Ok(status_of(
        &load(store)?,
        std::env::var_os("PATH").as_deref(),
    ))
}

/// Store `enabled`/`engine` and answer the new status.
pub fn update(store: &Store, enabled: bool, engine: Option<String>) -> Result<VoiceStatus> {
    let mut v = load(store)?;
    v.enabled = enabled;
    if let Some(engine) = engine {
        v.engine = engine;
    }
    from_value(&serde_json::to_value(&v)?)?;
    save(store, &v)?;
    status(store)
}

/// The status of `setting` with programs looked up on `path` (a `PATH`-style list).
pub fn status_of(setting: &VoiceSetting, path: Option<&OsStr>) -> VoiceStatus {
    let found = Speaker::detect_on(path);
    let (available, status) = match &found {
        _ if setting.engine == OPENAI => (
            true,
            format!(
                "{OPENAI}: the OpenAI-compatible speech server of {} (`yui doctor` checks it)",
                config::TTS_KEY
            ),
        ),
        Ok(s) => (
            true,
            format!("{}: ready ({})", setting.engine, s.program.display()),
        ),
        Err(line) => (false, line.to_string()),
    };
    VoiceStatus {
        enabled: setting.enabled,
        engine: setting.engine.clone(),
        engines: ENGINES.iter().map(|e| e.to_string()).collect(),
        available,
        status,
    }
}

/// One piece of a reply to speak, with its direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Utterance {
    pub text: String,
    pub direction: Direction,
}

/// A turn's speech, cut at each cue that carries a voice direction. Feed it the turn's events in
/// order ([`Script::observe`]); speak it once the turn ends.
#[derive(Debug, Clone, Default)]
pub struct Script {
    pieces: Vec<Utterance>,
    current: Direction,
}

impl Script {
    pub fn new() -> Self {
        Self::default()
    }

    /// Take one turn event: speech extends the current piece; a cue with `caption` or
    /// `emotion_text` starts a new piece with its direction.
    pub fn observe(&mut self, event: &TurnEvent) {
        match event {
            TurnEvent::Speech { delta } => self.push_text(delta),
            TurnEvent::Cue { cue, .. } if cue.caption.is_some() || cue.emotion_text.is_some() => {
                self.set_direction(Direction::from_cue(
                    cue.caption.as_deref(),
                    cue.emotion_text.as_deref(),
                ));
            }
            _ => {}
        }
    }

    /// Append spoken text under the current direction.
    pub fn push_text(&mut self, text: &str) {
        match self.pieces.last_mut() {
            Some(last) if last.direction == self.current => last.text.push_str(text),
            _ => self.pieces.push(Utterance {
                text: text.to_string(),
                direction: self.current,
            }),
        }
    }

    /// Speak what follows with `direction`.
    pub fn set_direction(&mut self, direction: Direction) {
        self.current = direction;
    }

    /// The same speech in a character's own voice: `base` (the preset's voice) under every
    /// piece; a cue's direction adds to its rate and pitch and its voice type wins.
    pub fn in_voice(&self, base: Direction) -> Script {
        let mut out = self.clone();
        for u in &mut out.pieces {
            let d = u.direction;
            u.direction = Direction {
                rate: (base.rate + d.rate).clamp(-100, 100),
                pitch: (base.pitch + d.pitch).clamp(-100, 100),
                volume: d.volume,
                voice_type: d.voice_type.or(base.voice_type),
            };
        }
        out
    }

    /// The pieces with something to say, in order.
    pub fn utterances(&self) -> Vec<Utterance> {
        self.pieces
            .iter()
            .filter(|u| u.text.chars().any(char::is_alphanumeric))
            .map(|u| Utterance {
                text: u.text.trim().to_string(),
                direction: u.direction,
            })
            .collect()
    }
}

/// How speaking ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpeechOutcome {
    /// Everything was spoken.
    Spoken,
    /// Stopped by cancellation (the turn was stopped); the speech service was told to cancel.
    Cancelled,
    /// Nothing was spoken: the switch is off, or there was nothing to say.
    Skipped,
    /// The engine is not there or failed; one line saying why (logged, never shown as an error).
    Unavailable(String),
}

/// Speaks through speech-dispatcher's `spd-say`.
#[derive(Debug, Clone)]
pub struct Speaker {
    program: PathBuf,
}

impl Speaker {
    /// `spd-say` on the process `PATH`, or a one-line status saying it is not there.
    pub fn detect() -> std::result::Result<Self, SpeechError> {
        Self::detect_on(std::env::var_os("PATH").as_deref())
    }

    /// `spd-say` on the given `PATH`-style list (tests inject a folder with a fake one).
    pub fn detect_on(path: Option<&OsStr>) -> std::result::Result<Self, SpeechError> {
        yui_base::paths::find_program(SPD_SAY, path)
            .map(|program| Self { program })
            .ok_or_else(|| {
                SpeechError::Unavailable(format!(
                    "{SPEECH_DISPATCHER}: {SPD_SAY} not found; install the speech-dispatcher package to hear replies"
                ))
            })
    }

    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The full `spd-say` argument list for one utterance.
    pub fn args(text: &str, direction: &Direction) -> Vec<OsString> {
        let mut args: Vec<OsString> =
            vec!["--wait".into(), "--application-name".into(), "yui".into()];
        args.extend(direction.spd_args().into_iter().map(OsString::from));
        // `--` so a reply starting with "-" is spoken, not parsed as an option.
        args.push("--".into());
        args.push(text.into());
        args
    }

    /// Speak one utterance and wait until it has been spoken, or until `cancel` fires: then stop
    /// `spd-say` (its process group) and tell speech-dispatcher to cancel what it is still saying.
    pub async fn say(
        &self,
        text: &str,
        direction: &Direction,
        cancel: &CancellationToken,
    ) -> SpeechOutcome {
        self.say_among(text, direction, cancel, &|| true).await
    }

    /// [`Speaker::say`] among other speaking characters: on cancel, speech-dispatcher is told to
    /// cancel (which drops every client's speech) only when `alone()` says nobody else speaks;
    /// otherwise only this utterance's `spd-say` is stopped.
    pub async fn say_among(
        &self,
        text: &str,
        direction: &Direction,
        cancel: &CancellationToken,
        alone: &(dyn Fn() -> bool + Sync),
    ) -> SpeechOutcome {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(Self::args(text, direction));
        // No deadline of its own: an utterance takes as long as it takes; the turn's stop ends it.
        let spec = yui_base::process::RunSpec::new(SAY_LIMIT, SAY_CAPTURE);
        let ran = match yui_base::process::run(cmd, spec, cancel).await {
            Ok(r) => r,
            Err(e) => {
                return SpeechOutcome::Unavailable(format!(
                    "{SPEECH_DISPATCHER}: cannot run {}: {e}",
                    self.program.display()
                ))
            }
        };
        if ran.aborted {
            if alone() {
                self.cancel_all().await;
            }
            return SpeechOutcome::Cancelled;
        }
        if ran.timed_out {
            self.cancel_all().await;
            return SpeechOutcome::Unavailable(format!(
                "{SPEECH_DISPATCHER}: {SPD_SAY} did not finish within {} s",
                SAY_LIMIT.as_secs()
            ));
        }
        let err = String::from_utf8_lossy(&ran.stderr);
        match ran.status {
            Some(s) if s.success() => SpeechOutcome::Spoken,
            Some(s) => SpeechOutcome::Unavailable(format!(
                "{SPEECH_DISPATCHER}: {SPD_SAY} exited with {s}{}",
                first_line(&err)
            )),
            None => SpeechOutcome::Unavailable(format!(
                "{SPEECH_DISPATCHER}: {SPD_SAY} ended without a status"
            )),
        }
    }

    /// `spd-say --cancel`: drop what speech-dispatcher is saying or has queued. Best effort.
    pub async fn cancel_all(&self) {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.arg("--cancel");
        let spec = yui_base::process::RunSpec::new(std::time::Duration::from_secs(3), 4096);
        match yui_base::process::run(cmd, spec, &CancellationToken::new()).await {
            Ok(r) if r.timed_out => {
                tracing::warn!("voice: {SPD_SAY} --cancel did not answer within 3 s")
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("voice: {SPD_SAY} --cancel failed: {e}"),
        }
    }

    /// Speak a script piece by piece; stops at the first failure or on cancellation.
    pub async fn speak(&self, script: &Script, cancel: &CancellationToken) -> SpeechOutcome {
        self.speak_among(script, cancel, &|| true).await
    }

    /// [`Speaker::speak`] among other speaking characters (see [`Speaker::say_among`]).
    pub async fn speak_among(
        &self,
        script: &Script,
        cancel: &CancellationToken,
        alone: &(dyn Fn() -> bool + Sync),
    ) -> SpeechOutcome {
        let pieces = script.utterances();
        if pieces.is_empty() {
            return SpeechOutcome::Skipped;
        }
        for u in &pieces {
            if cancel.is_cancelled() {
                return SpeechOutcome::Cancelled;
            }
            match self.say_among(&u.text, &u.direction, cancel, alone).await {
                SpeechOutcome::Spoken => {}
                other => return other,
            }
        }
        SpeechOutcome::Spoken
    }
}

fn first_line(s: &str) -> String {
    match s.lines().map(str::trim).find(|l| !l.is_empty()) {
        Some(l) => format!(": {l}"),
        None => String::new(),
    }
}
