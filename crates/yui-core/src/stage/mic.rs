//! The microphone on the stage (docs/voice.md, "Listening in the app"): push-to-talk and
//! hands-free listening for one character's window. What is heard goes through speech-to-text
//! (`yui.voice.stt`) and becomes the user's message in that window through [`Stage::user_turn`],
//! exactly as if typed, so conversations, addressed turns and relations work the same.
//!
//! - Off by default (`yui.voice.listen` `mode`): while off nothing opens a device or starts a
//!   task. A session is one task holding the capture; stopping it drops the capture (the device
//!   closes).
//! - Push-to-talk: [`Stage::mic_press`] opens the microphone (and is a barge-in: the user starts
//!   speaking), [`Stage::mic_release`] closes it; the held audio's speech is transcribed.
//! - Hands-free: [`Stage::mic_listen`] listens until [`Stage::mic_stop`]; voice activity
//!   (sensitivity, hang-over) cuts utterances, each transcribed as soon as it ends. Half duplex
//!   unless the sound server cancels echo: while a character speaks the audio is dropped. In
//!   full duplex the user starting to speak over a character is a barge-in.
//! - A character whose backend is realtime hears the audio itself (`stage/realtime_mic.rs`): the
//!   microphone's chunks go to its session as appends instead of through speech-to-text.
//! - A device that fails or vanishes ends the session with one sentence in [`MicStatus`];
//!   text chat is not touched. Audio stays in memory; only the recognised text is stored.

use super::{Inner, Stage, StageEvent};
use crate::error::{CoreError, Result};
use crate::stage::{TurnTo, UserTurn};
use crate::voice::audio::{AudioHost, Capture};
use crate::voice::config::{self, ListenSettings, MicMode};
use crate::voice::listen::{
    listen, Cut, EndReason, ListenEvent, ListenPhase, ListenSpec, Transcriber,
};
use crate::voice::pcm::Pcm;
use crate::voice::stt::SpeechError;
use crate::window::WindowKind;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The longest push-to-talk hold kept (a stuck key must not grow memory for ever).
const PTT_MAX_MS: u64 = 60_000;

/// The audio host the microphone uses (`None`: the process's). Tests give one in memory.
#[derive(Clone, Default)]
pub struct AudioChoice(pub Option<Arc<dyn AudioHost>>);

impl std::fmt::Debug for AudioChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "given" } else { "process" })
    }
}

/// What the microphone is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MicState {
    /// Closed: no device open.
    #[default]
    Off,
    /// Open and listening.
    Listening,
    /// Open, and the user is speaking.
    Hearing,
    /// Open, but dropping audio while a character speaks (half duplex).
    Paused,
    /// Closed (push-to-talk) or still listening (hands-free); the last utterance is at the
    /// speech-to-text server.
    Transcribing,
}

/// The microphone as the badge, the quick controls and the tray show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct MicStatus {
    pub state: MicState,
    /// Whether a device is open now (the badge shows; one click stops it).
    pub live: bool,
    /// The character whose window hears the user.
    pub preset_id: Option<String>,
    /// The session's mode (`off` when none runs).
    pub mode: MicMode,
    /// Listening while characters speak (echo cancellation found).
    pub full_duplex: bool,
    /// Why the last session ended or what it missed, in plain words ("the microphone … went
    /// away; text chat goes on", "nothing was heard").
    pub message: Option<String>,
}

struct Session {
    id: u64,
    stop: CancellationToken,
    /// Push-to-talk: fired on release.
    release: CancellationToken,
}

#[derive(Default)]
pub(super) struct Slot {
    session: Option<Session>,
    next: u64,
    status: MicStatus,
}

fn off_error(mode: MicMode) -> CoreError {
    CoreError::invalid(match mode {
        MicMode::Off => {
            "the microphone is off: choose push-to-talk or hands-free in Settings → Voice"
        }
        MicMode::PushToTalk => {
            "the microphone is set to push-to-talk: hold the key or the mouse on the character"
        }
        MicMode::HandsFree => "the microphone is set to hands-free: it listens without a key",
    })
}

impl Stage {
    /// The microphone now.
    pub fn mic_status(&self) -> MicStatus {
        self.0.mic().status.clone()
    }

    /// Push-to-talk pressed in a character's window (or for a preset, as in a kind of window): characters stop speaking (barge-in) and
    /// the microphone opens until [`Stage::mic_release`].
    pub fn mic_press(&self, to: impl Into<TurnTo>) -> Result<MicStatus> {
        let (preset_id, window) = self.mic_for(to.into())?;
        let listen = config::load_listen(&self.0.store)?;
        if listen.mode != MicMode::PushToTalk {
            return Err(off_error(listen.mode));
        }
        self.barge_in();
        Ok(start(
            &self.0,
            &preset_id,
            window,
            MicMode::PushToTalk,
            listen,
        ))
    }

    /// Push-to-talk released: what was held is transcribed and sent. Whether a hold was open.
    pub fn mic_release(&self) -> bool {
        let slot = self.0.mic();
        match &slot.session {
            Some(s) if slot.status.mode == MicMode::PushToTalk => {
                s.release.cancel();
                true
            }
            _ => false,
        }
    }

    /// Hands-free listening for a character's window, until [`Stage::mic_stop`].
    pub fn mic_listen(&self, to: impl Into<TurnTo>) -> Result<MicStatus> {
        let (preset_id, window) = self.mic_for(to.into())?;
        let listen = config::load_listen(&self.0.store)?;
        if listen.mode != MicMode::HandsFree {
            return Err(off_error(listen.mode));
        }
        Ok(start(
            &self.0,
            &preset_id,
            window,
            MicMode::HandsFree,
            listen,
        ))
    }

    /// The character the microphone hears the user for: a desktop character's window only.
    fn mic_for(&self, to: TurnTo) -> Result<(String, WindowKind)> {
        match self.resolve(to) {
            Ok((_, WindowKind::Phone)) | Err(_) => Err(CoreError::invalid(
                "the microphone listens for character windows only",
            )),
            ok => ok,
        }
    }

    /// Stop the microphone (one click on the badge, the quick controls or the tray): the device
    /// closes and nothing more is heard. Whether it was live.
    pub fn mic_stop(&self) -> bool {
        let session = self.0.mic().session.take();
        let was = session.is_some();
        if let Some(s) = session {
            s.stop.cancel();
        }
        set(&self.0, None, |st| {
            *st = MicStatus {
                full_duplex: st.full_duplex,
                ..MicStatus::default()
            }
        });
        was
    }

    /// Follow `yui.voice.listen`'s mode (at start and after it changed): hands-free starts
    /// listening for `to`'s window if it is not already; any other mode stops a
    /// hands-free session.
    pub fn mic_follow_settings(&self, to: impl Into<TurnTo>) -> Result<MicStatus> {
        let mode = config::load_listen(&self.0.store)?.mode;
        let current = self.mic_status();
        match mode {
            MicMode::HandsFree if current.live && current.mode == MicMode::HandsFree => Ok(current),
            MicMode::HandsFree => self.mic_listen(to),
            _ => {
                if current.live && current.mode != mode {
                    self.mic_stop();
                }
                Ok(self.mic_status())
            }
        }
    }
}

/// Change the status with `f` (only if session `id` is still the live one, when given) and tell.
fn set(inner: &Inner, id: Option<u64>, f: impl FnOnce(&mut MicStatus)) {
    let status = {
        let mut slot = inner.mic();
        if id.is_some() && slot.session.as_ref().map(|s| s.id) != id {
            return;
        }
        let before = slot.status.clone();
        f(&mut slot.status);
        if slot.status == before {
            return;
        }
        slot.status.clone()
    };
    inner.emit(StageEvent::Mic { status });
}

/// Session `id` ended (its capture dropped): off, with `message`.
fn ended(inner: &Inner, id: u64, message: Option<String>) {
    let status = {
        let mut slot = inner.mic();
        if slot.session.as_ref().map(|s| s.id) != Some(id) {
            return;
        }
        slot.session = None;
        slot.status = MicStatus {
            full_duplex: slot.status.full_duplex,
            message,
            ..MicStatus::default()
        };
        slot.status.clone()
    };
    inner.emit(StageEvent::Mic { status });
}

fn start(
    inner: &Arc<Inner>,
    preset_id: &str,
    window: WindowKind,
    mode: MicMode,
    listen: ListenSettings,
) -> MicStatus {
    let (stop, release) = (CancellationToken::new(), CancellationToken::new());
    let id = {
        let mut slot = inner.mic();
        if let Some(old) = slot.session.take() {
            old.stop.cancel();
        }
        slot.next += 1;
        let id = slot.next;
        slot.session = Some(Session {
            id,
            stop: stop.clone(),
            release: release.clone(),
        });
        id
    };
    set(inner, Some(id), |st| {
        *st = MicStatus {
            state: MicState::Listening,
            live: true,
            preset_id: Some(preset_id.to_string()),
            mode,
            full_duplex: inner.opts.duplex.unwrap_or(st.full_duplex),
            message: None,
        }
    });
    let job = Job {
        inner: inner.clone(),
        id,
        preset_id: preset_id.to_string(),
        window,
        listen,
        stop,
    };
    tokio::spawn(async move {
        match mode {
            MicMode::PushToTalk => job.push_to_talk(release).await,
            _ => job.hands_free().await,
        }
    });
    inner.mic().status.clone()
}

struct Job {
    inner: Arc<Inner>,
    id: u64,
    preset_id: String,
    window: WindowKind,
    listen: ListenSettings,
    stop: CancellationToken,
}

impl Job {
    /// The character's realtime session if its backend is realtime now (made if needed).
    fn realtime(&self) -> Option<Arc<crate::turn::transport::realtime::RealtimeClient>> {
        let (b, t) = super::run::backend_for(&self.inner).ok()?;
        match super::link::ensure(&self.inner, &self.preset_id, self.window, &b, &t) {
            crate::turn::SeatLink::Realtime(client) => Some(client),
            _ => None,
        }
    }

    /// This session as the realtime microphone sees it.
    fn rt(self) -> super::realtime_mic::RtJob {
        let host = self.host();
        super::realtime_mic::RtJob {
            inner: self.inner,
            id: self.id,
            preset_id: self.preset_id,
            input_device: self.listen.input_device,
            stop: self.stop,
            host,
        }
    }

    fn host(&self) -> Arc<dyn AudioHost> {
        self.inner
            .opts
            .mic_audio
            .0
            .clone()
            .unwrap_or_else(crate::voice::hosts::host)
    }

    async fn open(&self) -> Option<Capture> {
        let device = self.listen.input_device.as_deref();
        let host = self.host();
        let cap = tokio::select! {
            _ = self.stop.cancelled() => return None,
            c = host.capture(device) => c,
        };
        match cap {
            Ok(c) => Some(c),
            Err(e) => {
                ended(
                    &self.inner,
                    self.id,
                    Some(format!("{e}; text chat goes on")),
                );
                None
            }
        }
    }

    fn state(&self, state: MicState) {
        set(&self.inner, Some(self.id), |st| st.state = state);
    }

    async fn push_to_talk(self, release: CancellationToken) {
        // A realtime character hears the audio itself: it goes to the session, not to STT.
        if let Some(client) = self.realtime() {
            return super::realtime_mic::push_to_talk(self.rt(), client, release).await;
        }
        let cut = Cut::Hold {
            release,
            max_ms: PTT_MAX_MS,
        };
        self.run(cut, None).await;
    }

    async fn hands_free(self) {
        let full = match self.inner.opts.duplex {
            Some(d) => d,
            None => crate::voice::echo::detect().await.found,
        };
        set(&self.inner, Some(self.id), |st| st.full_duplex = full);
        if let Some(client) = self.realtime() {
            return super::realtime_mic::hands_free(self.rt(), client, full).await;
        }
        // Half duplex: a character's own voice must not become the user's turn.
        let pause: Option<Arc<dyn Fn() -> bool + Send + Sync>> = match full {
            true => None,
            false => {
                let inner = self.inner.clone();
                Some(Arc::new(move || inner.any_speaking()))
            }
        };
        self.run(Cut::Utterances, pause).await;
    }

    /// The one listening pipeline (`voice/listen`) for this session: what it hears becomes the
    /// user's turn in the session's window.
    async fn run(self, cut: Cut, pause_while: Option<Arc<dyn Fn() -> bool + Send + Sync>>) {
        let hold = matches!(cut, Cut::Hold { .. });
        let Some(cap) = self.open().await else {
            return;
        };
        let spec = ListenSpec {
            vad: self.listen.vad(),
            cut,
            max_ms: None,
            pause_while,
        };
        let stt = Arc::new(SettingsStt(self.inner.clone()));
        let mut l = listen(cap, spec, stt, self.stop.clone());
        let mut message = None;
        loop {
            let ev = tokio::select! {
                // Stopped: nothing more is heard or turned into a turn.
                _ = self.stop.cancelled() => return,
                ev = l.next() => ev,
            };
            match ev {
                Some(ListenEvent::Phase(p)) => self.state(match p {
                    ListenPhase::Listening => MicState::Listening,
                    ListenPhase::Hearing => MicState::Hearing,
                    ListenPhase::Paused => MicState::Paused,
                }),
                // Barge-in acts on the onset (40 ms of speech), a frame before the utterance
                // opens: the character's audio must stop within 200 ms of the user's first word.
                Some(ListenEvent::Onset) => {
                    if self.inner.any_speaking() {
                        self.inner.emit_barge();
                    }
                }
                // The device is closed already: the badge goes while the text is being made.
                Some(ListenEvent::Closed) => set(&self.inner, Some(self.id), |st| {
                    st.state = MicState::Transcribing;
                    st.live = false;
                }),
                Some(ListenEvent::Silence) => message = Some(NOTHING_HEARD.to_string()),
                Some(ListenEvent::Heard(u)) => message = self.heard(u.text).err(),
                Some(ListenEvent::Missed(e)) => message = Some(format!("{e}; text chat goes on")),
                Some(ListenEvent::Ended(end)) => {
                    let why = match end {
                        EndReason::Failed(e) => Some(format!("{e}; text chat goes on")),
                        EndReason::SourceEnded if !hold => {
                            Some("the microphone closed; text chat goes on".into())
                        }
                        _ if hold => message,
                        _ => None,
                    };
                    if hold || why.is_some() {
                        ended(&self.inner, self.id, why);
                    }
                    return;
                }
                None => return,
            }
            // Hands-free goes on: what one utterance missed shows until the next.
            if !hold {
                if let Some(m) = message.take() {
                    set(&self.inner, Some(self.id), |st| st.message = Some(m));
                }
            }
        }
    }

    /// The words of one utterance become the user's turn in the session's window.
    fn heard(&self, text: String) -> std::result::Result<(), String> {
        let text = text.trim().to_string();
        if text.is_empty() {
            return Err(NOTHING_HEARD.into());
        }
        self.inner.emit(StageEvent::Heard {
            preset_id: self.preset_id.clone(),
            text: text.clone(),
        });
        Stage(self.inner.clone())
            .user_turn(UserTurn::to(&self.preset_id, self.window, &text))
            .map(drop)
            .map_err(|e| e.message)
    }
}

const NOTHING_HEARD: &str = "nothing was heard";

/// Speech-to-text as `yui.voice.stt` says now (read for each utterance, so a change in
/// Settings → Voice applies to the next one).
struct SettingsStt(Arc<Inner>);

#[async_trait::async_trait]
impl Transcriber for SettingsStt {
    async fn transcribe(&self, clip: &Pcm) -> std::result::Result<String, SpeechError> {
        let req = config::stt_request(&self.0.store, &self.0.paths)
            .map_err(|e| SpeechError::Unavailable(e.message))?;
        crate::voice::stt::transcribe(&req, clip).await
    }
}

impl Inner {
    fn emit_barge(&self) {
        super::barge::barge_in(self);
    }

    /// Change microphone session `id`'s status with `f` (if it is still the live one) and tell.
    pub(super) fn mic_set(&self, id: u64, f: impl FnOnce(&mut MicStatus)) {
        set(self, Some(id), f);
    }

    /// Microphone session `id` ended (its capture dropped): off, with `message`.
    pub(super) fn mic_ended(&self, id: u64, message: Option<String>) {
        ended(self, id, message);
    }
}
