//! The stage: the one coordinator of every open character's turns, playback and voice, and of
//! the exchanges between characters (`address_character` → addressed turns). The app's shell and
//! the CLI (`yui converse`) drive the same code; the shell reports which windows open and close
//! ([`Stage::window_opened`], [`Stage::window_closed`]), forwards each [`StageEvent`] to the windows
//! it names ([`StageEvent::to`]) and turns UI calls into calls here. Committed store changes
//! (presets, settings, switches, vocabulary, relations) become stage events too.
//!
//! Per open preset the stage keeps a [`seat`](Seat): its running turn (one at a time per
//! character; different characters' turns run concurrently), its speech (one character's voice
//! never cuts another's) and its push connection. Rules of an exchange (docs/characters.md):
//! - A turn that ends `ok` having spoken, with a recipient recorded by `address_character`,
//!   waits for its playback to finish (bubble shown and speech ended), then the stage emits
//!   [`StageEvent::CharacterAddressed`] and runs the recipient's addressed turn, whose client
//!   context says who spoke and what was said.
//! - At most `rate_limit.addressed_chain_max` addressed turns follow one user turn.
//! - A reply of exactly `[SILENT]` ends the exchange (the turn ends `silent`).
//! - The user starting a turn in any window interrupts the exchange: addressed turns running or
//!   waiting are stopped and no new one starts until the next reply addresses someone.
//! - A recipient closed meanwhile, or busy answering the user (a phone turn), drops the addressed
//!   turn with a log line.

mod barge;
mod desktop;
mod events;
pub mod inbox;
mod link;
mod mic;
mod model;
mod model_page;
mod proactive;
mod realtime;
mod realtime_mic;
mod realtime_voice;
mod run;
mod speech;
mod user_turn;

pub use barge::{heard_part, CHARS_PER_SECOND};
pub use events::{StageEvent, To, Window};
pub use mic::{AudioChoice, MicState, MicStatus};
pub use model::{
    hello_reason, unreachable_sentence, AfterPull, ModelPull, PullState, HELLO_MAX_TOKENS,
    HELLO_TRIGGER,
};
pub use model_page::{ModelPage, ModelRow};
pub use proactive::{
    CharacterSwitch, MannersPage, MannersView, Outcome, Proactive, Trigger, Waiting,
};
pub use realtime::UNHEARD;
pub use speech::{heard_text, Heard};
pub use user_turn::{TurnTo, UserTurn};

use crate::clock::SharedClock;
use crate::error::Result;
use crate::paths::Paths;
use crate::playback::PlaybackTracker;
use crate::store::Store;
use crate::turn::transport::push::ConnState;
use crate::turn::SeatLink;
use crate::turn::{Backend, CancellationToken, Timeouts, TurnEvent};
use crate::window::WindowKind;
use serde::Serialize;
use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// Why a turn runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// The user typed in the character's window (or the CLI's `--message`).
    User,
    /// The user typed in the character's phone window.
    Phone,
    /// Another character's reply was addressed to this one.
    Addressed {
        /// The speaking character's preset id and name.
        from: String,
        from_name: String,
    },
    /// The character speaks up on its own (`proactive.rs`): `trigger` is its id, `reason` the
    /// client context's `proactive:` line after the prefix.
    Proactive { trigger: String, reason: String },
}

/// Where a turn's backend comes from.
#[derive(Debug, Clone)]
pub enum BackendSource {
    /// The configured backend and stored API key, read when each turn starts (the app).
    Configured,
    /// A backend fixed for the run, with its waits (the CLI's flags).
    Fixed {
        backend: Backend,
        timeouts: Timeouts,
    },
}

/// How the stage plays replies.
#[derive(Clone)]
pub struct StageOptions {
    pub backend: BackendSource,
    /// Playback counts as finished when a turn ends, and nothing is spoken (the CLI: no window
    /// shows a bubble). Otherwise the window reports the bubble ([`Stage::bubble_done`]) and
    /// replies are spoken when the voice switch is on.
    pub headless: bool,
    /// How long an addressed turn waits for the playback of the reply it answers; a window that
    /// closed never reports, so the exchange ends after this.
    pub playback_wait: Duration,
    /// Where to look for `spd-say` (`None`: the process `PATH`); tests inject a fake one.
    pub voice_path: Option<OsString>,
    /// The audio devices speech plays on (`None`: the platform's, opened only when something
    /// plays).
    pub audio: Option<Arc<dyn crate::voice::audio::AudioHost>>,
    /// The microphone's audio host (`None`: the process's, `voice::hosts::host()`).
    pub mic_audio: AudioChoice,
    /// Full duplex (listening while characters speak) decided for the run; `None`: only when
    /// the sound server cancels echo (`voice::echo::detect`).
    pub duplex: Option<bool>,
    /// How long a turn the realtime server started waits for the user's transcribed words
    /// before it starts without them (later words replace the placeholder).
    pub transcript_wait: Duration,
    /// A fixed backend's built-in engine (`yui converse` after `yui model use`); the configured
    /// backend's is the process-wide one (`model::builtin::shared`).
    pub engine: Option<Arc<crate::model::engine::Engine>>,
    /// How the app's model downloads wait between tries (`stage/model.rs`).
    pub pull_backoff: crate::model::download::Backoff,
}

impl std::fmt::Debug for StageOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StageOptions")
            .field("backend", &self.backend)
            .field("headless", &self.headless)
            .field("playback_wait", &self.playback_wait)
            .field("voice_path", &self.voice_path)
            .field("audio", &self.audio.as_ref().map(|_| "injected"))
            .field("mic_audio", &self.mic_audio)
            .field("duplex", &self.duplex)
            .field("transcript_wait", &self.transcript_wait)
            .field(
                "engine",
                &self.engine.as_ref().map(|e| e.spec().model.clone()),
            )
            .finish()
    }
}

impl Default for StageOptions {
    fn default() -> Self {
        Self {
            backend: BackendSource::Configured,
            headless: false,
            playback_wait: Duration::from_secs(300),
            voice_path: None,
            audio: None,
            mic_audio: AudioChoice::default(),
            duplex: None,
            transcript_wait: realtime::TRANSCRIPT_WAIT,
            engine: None,
            pull_backoff: crate::model::download::Backoff::default(),
        }
    }
}

/// One open character.
#[derive(Default)]
struct Seat {
    /// The running turn: its id, whether it is addressed, its stop token.
    turn: Option<(String, bool, CancellationToken)>,
    /// The running speech.
    speech: Option<speech::Voice>,
    /// The window's standing link (push's connection, realtime's session), with what it was
    /// made for.
    link: Option<link::Linked>,
}

/// One character's push connection as the quick controls show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Connection {
    pub preset_id: String,
    pub state: ConnState,
}

/// The chain of addressed turns since the user last spoke.
#[derive(Debug, Default)]
struct Chain {
    /// Bumped whenever the user starts a turn: a pending addressed turn of an older epoch is
    /// dropped.
    epoch: u64,
    /// Addressed turns started in this epoch.
    count: u64,
}

pub(crate) struct Inner {
    store: Store,
    clock: SharedClock,
    paths: Paths,
    opts: StageOptions,
    tracker: PlaybackTracker,
    events: mpsc::UnboundedSender<StageEvent>,
    seats: Mutex<HashMap<String, Seat>>,
    chain: Mutex<Chain>,
    speech_gen: std::sync::atomic::AtomicU64,
    /// Held by the character speaking now (fair: first come, first heard): text-to-speech
    /// (`speech.rs`) and realtime reply audio (`realtime_voice/floor.rs`) alike.
    floor: Arc<tokio::sync::Mutex<()>>,
    /// Turns started and not yet done with (their playback and any addressed turn after them).
    active: std::sync::atomic::AtomicUsize,
    /// Long-term memory's extractions (after a pause, before lines leave the window).
    memory: Option<crate::longterm::schedule::Scheduler>,
    /// Speech generations the user spoke over, and when (barge-in).
    barged: Mutex<HashMap<u64, std::time::Instant>>,
    /// The microphone: its session and what it shows.
    mic: Mutex<mic::Slot>,
    /// The open desktop windows (main, pets) and the preset each shows.
    shown: Mutex<HashMap<Window, String>>,
    /// Proactive turns: the manners, the probes, the turns waiting.
    proactive: proactive::Slot,
    /// The built-in model's downloads under way (`model.rs`).
    pulls: model::Pulls,
}

/// Where a user turn's own events go, in order: the window that started it (the shell's IPC
/// channel). Returns `false` once no one reads any more: the stage then stops the turn.
pub type Stream = Box<dyn Fn(&TurnEvent) -> bool + Send + Sync>;

/// The coordinator. Cheap to clone (shared).
#[derive(Clone)]
pub struct Stage(Arc<Inner>);

impl Stage {
    /// A stage and the receiving end of its events (read them for as long as the stage lives:
    /// the channel is unbounded so a turn never waits on a slow reader).
    pub fn new(
        store: Store,
        clock: SharedClock,
        paths: Paths,
        opts: StageOptions,
    ) -> (Self, mpsc::UnboundedReceiver<StageEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let memory = run::memory_scheduler(&store, &clock, &paths, &opts);
        let stage = Self(Arc::new(Inner {
            store,
            clock,
            paths,
            opts,
            tracker: PlaybackTracker::new(),
            events: tx,
            seats: Mutex::new(HashMap::new()),
            chain: Mutex::new(Chain::default()),
            speech_gen: Default::default(),
            floor: Arc::new(tokio::sync::Mutex::new(())),
            active: Default::default(),
            memory,
            barged: Default::default(),
            mic: Default::default(),
            shown: Mutex::new(HashMap::new()),
            proactive: Default::default(),
            pulls: Default::default(),
        }));
        // Committed changes reach the windows as stage events (weak: the store outlives no stage).
        let weak = Arc::downgrade(&stage.0);
        stage.0.store.watch(Arc::new(move |change| {
            if let Some(inner) = weak.upgrade() {
                for ev in events::of_change(&inner.store, change) {
                    inner.emit(ev);
                }
            }
        }));
        (stage, rx)
    }

    /// The user's message (typed, or heard by the microphone or the realtime server) to a
    /// character ([`UserTurn`] says which, and where its events also go): interrupts any
    /// exchange, stops that character's running turn and speech, and starts the turn. Returns
    /// its id; its events arrive as [`StageEvent::Turn`].
    pub fn user_turn(&self, turn: UserTurn) -> Result<String> {
        let (preset_id, window) = self.resolve(turn.to)?;
        self.interrupt();
        proactive::user_spoke(&self.0);
        let origin = match window {
            WindowKind::Phone => Origin::Phone,
            _ => Origin::User,
        };
        run::start(
            &self.0,
            &preset_id,
            window,
            &turn.text,
            origin,
            self.epoch(),
            turn.stream,
            turn.started,
        )
    }

    /// The character a turn (or the microphone) is for, and the kind of window it is in.
    fn resolve(&self, to: TurnTo) -> Result<(String, WindowKind)> {
        match to {
            TurnTo::Window(w) => {
                let kind = w.kind().ok_or_else(|| {
                    crate::error::CoreError::invalid(
                        "turns run in character and phone windows only",
                    )
                })?;
                Ok((self.preset_in(&w)?, kind))
            }
            TurnTo::Preset(id, kind) => Ok((id, kind)),
        }
    }

    /// Stop the running turn of the character `window` shows; whether one was running.
    pub fn stop_in(&self, window: &Window) -> Result<bool> {
        Ok(self.stop(&self.preset_in(window)?))
    }

    /// Stop the speech of the character `window` shows; whether some was running.
    pub fn stop_voice_in(&self, window: &Window) -> Result<bool> {
        Ok(self.stop_voice(&self.preset_in(window)?))
    }

    /// The preset `window` shows: a pet's or phone's own, the main window's as it opened (else
    /// the main preset now).
    pub fn preset_in(&self, window: &Window) -> Result<String> {
        match window {
            Window::Pet(id) | Window::Phone(id) => Ok(id.clone()),
            Window::Main => match self.0.shown().get(&Window::Main) {
                Some(id) => Ok(id.clone()),
                None => crate::presets::main_preset(&self.0.store).map(|p| p.id),
            },
            Window::Settings | Window::Quick => Err(crate::error::CoreError::invalid(
                "this window shows no character",
            )),
        }
    }

    /// Stop `preset_id`'s running turn (it ends `stopped`); whether one was running.
    pub fn stop(&self, preset_id: &str) -> bool {
        let seats = self.0.seats();
        match seats.get(preset_id).and_then(|s| s.turn.as_ref()) {
            Some((_, _, stop)) => {
                stop.cancel();
                true
            }
            None => false,
        }
    }

    /// Every open character's push connection or realtime session and its state now (none on
    /// the request transports).
    pub fn connections(&self) -> Vec<Connection> {
        let mut out: Vec<Connection> = self
            .0
            .seats()
            .iter()
            .filter_map(|(id, seat)| {
                let state = seat.link.as_ref()?.link.state()?.borrow().clone();
                Some(Connection {
                    preset_id: id.clone(),
                    state,
                })
            })
            .collect();
        out.sort_by(|a, b| a.preset_id.cmp(&b.preset_id));
        out
    }

    /// Stop every running turn (Ctrl-C in the CLI, Quit).
    pub fn stop_all(&self) {
        self.interrupt();
        for seat in self.0.seats().values() {
            if let Some((_, _, stop)) = &seat.turn {
                stop.cancel();
            }
        }
    }

    /// The running turn of `preset_id`, if any.
    pub fn running(&self, preset_id: &str) -> Option<String> {
        let seats = self.0.seats();
        seats
            .get(preset_id)
            .and_then(|s| s.turn.as_ref())
            .map(|(id, _, _)| id.clone())
    }

    /// The window shows the whole reply of `turn_id` in its bubble.
    pub fn bubble_done(&self, turn_id: &str) {
        self.0.tracker.bubble_done(turn_id);
    }

    /// Stop `preset_id`'s speech and answer how much of it was heard (barge-in cuts the stored
    /// reply to it); `None` when it was not speaking.
    pub async fn stop_voice_heard(&self, preset_id: &str) -> Option<Heard> {
        speech::stop_heard(&self.0, preset_id).await
    }

    /// The characters whose voice is playing now.
    pub fn speaking(&self) -> Vec<String> {
        speech::speaking(&self.0)
    }

    /// Stop `preset_id`'s speech (Escape); whether some was running. Other characters go on.
    pub fn stop_voice(&self, preset_id: &str) -> bool {
        speech::stop(&self.0, preset_id)
    }

    /// A character window opened (or its backend changed): with the push or realtime transport, connect
    /// now, so the quick controls show the connection before the first turn.
    pub fn opened(&self, preset_id: &str, window: WindowKind) {
        // The user's MCP servers start in the background with the first window that declares them.
        if crate::tools::registry::declares_client_tools(window) {
            crate::tools::mcp::warm();
        }
        if let Ok((b, t)) = run::backend_for(&self.0) {
            link::ensure(&self.0, preset_id, window, &b, &t);
        }
    }

    /// Store `yui.realtime` (Settings → Backend's realtime panel; refused in plain words,
    /// storing nothing, when a value is not valid) and make the sessions again with it.
    pub fn realtime_settings_set(
        &self,
        value: &serde_json::Value,
    ) -> crate::error::Result<crate::backend::realtime::View> {
        use crate::backend::realtime;
        let stored = realtime::stored_value(value)?;
        crate::settings::set(&self.0.store, realtime::KEY, &stored)?;
        self.realtime_changed();
        Ok(realtime::view(&self.0.store))
    }

    /// `yui.realtime` changed: every character's realtime session is made again, so its
    /// `session.update` carries the new voice, turn detection and transcription (the new
    /// session is seeded with the history: nothing said is lost). A turn running on the old
    /// session finishes on it.
    pub fn realtime_changed(&self) {
        let windows: Vec<(String, WindowKind)> = self
            .0
            .seats()
            .iter_mut()
            .filter(|(_, seat)| {
                matches!(
                    seat.link.as_ref().map(|l| &l.link),
                    Some(SeatLink::Realtime(_))
                )
            })
            .filter_map(|(id, seat)| seat.link.take().map(|l| (id.clone(), l.window)))
            .collect();
        if let Ok((b, t)) = run::backend_for(&self.0) {
            for (id, w) in windows {
                link::ensure(&self.0, &id, w, &b, &t);
            }
        }
    }

    /// `preset_id`'s window closed: its turn, speech and microphone stop, its connection closes,
    /// and an addressed turn meant for it is dropped when its time comes.
    pub fn closed(&self, preset_id: &str) {
        // The microphone listening for that window stops with it.
        if self.mic_status().preset_id.as_deref() == Some(preset_id) {
            self.mic_stop();
        }
        let seat = self.0.seats().remove(preset_id);
        if let Some(seat) = seat {
            if let Some((_, _, stop)) = seat.turn {
                stop.cancel();
            }
            if let Some(v) = seat.speech {
                v.cancel.cancel();
            }
        }
    }

    /// The shell saw `window` open (built, or built again): the stage takes it from here. A
    /// desktop window seats its character ([`Stage::opened`]); the main window shows whichever
    /// preset is main now.
    pub fn window_opened(&self, window: Window) {
        let preset_id = match &window {
            Window::Main => match crate::presets::main_preset(&self.0.store) {
                Ok(p) => p.id,
                Err(e) => {
                    tracing::warn!(error = %e.message, "the main window opened with no main preset");
                    return;
                }
            },
            Window::Pet(id) => id.clone(),
            // A phone runs its turns through its own stream; the others run none.
            Window::Phone(_) | Window::Settings | Window::Quick => return,
        };
        let Some(kind) = window.kind() else { return };
        self.0.shown().insert(window, preset_id.clone());
        self.opened(&preset_id, kind);
        // Reminders ring from the first desktop window on; a turn waiting for this one goes.
        proactive::start_reminders(&self.0);
        self.proactive_recheck();
    }

    /// The shell saw `window` close: a desktop window's character leaves the stage
    /// ([`Stage::closed`]).
    pub fn window_closed(&self, window: Window) {
        let gone = self.0.shown().remove(&window);
        if let Some(preset_id) = gone {
            self.closed(&preset_id);
        }
    }

    /// The user spoke: the exchange in progress ends.
    fn interrupt(&self) {
        {
            let mut c = self.0.chain();
            c.epoch += 1;
            c.count = 0;
        }
        for seat in self.0.seats().values() {
            if let Some((_, true, stop)) = &seat.turn {
                stop.cancel();
            }
        }
    }

    fn epoch(&self) -> u64 {
        self.0.chain().epoch
    }
}

/// Tell the windows each state of a seat's connection (push or realtime), from the one it is in
/// now; ends when the connection is dropped (the seat closed or was replaced).
fn tell_connection(
    inner: &Arc<Inner>,
    preset_id: &str,
    mut state: tokio::sync::watch::Receiver<ConnState>,
) {
    let (weak, id) = (Arc::downgrade(inner), preset_id.to_string());
    tokio::spawn(async move {
        loop {
            let now = state.borrow_and_update().clone();
            let Some(inner) = weak.upgrade() else { return };
            inner.emit(StageEvent::Connection {
                preset_id: id.clone(),
                state: now,
            });
            drop(inner);
            if state.changed().await.is_err() {
                return;
            }
        }
    });
}

impl Inner {
    fn seats(&self) -> std::sync::MutexGuard<'_, HashMap<String, Seat>> {
        self.seats.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn chain(&self) -> std::sync::MutexGuard<'_, Chain> {
        self.chain.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn barged(&self) -> std::sync::MutexGuard<'_, HashMap<u64, std::time::Instant>> {
        self.barged.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn mic(&self) -> std::sync::MutexGuard<'_, mic::Slot> {
        self.mic.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn any_speaking(&self) -> bool {
        // A realtime reply plays from its first delta, a moment before its turn takes the seat.
        self.seats().values().any(|s| {
            s.speech.is_some()
                || s.link
                    .as_ref()
                    .and_then(|l| l.audio.as_ref())
                    .is_some_and(|a| a.is_playing())
        })
    }
    fn shown(&self) -> std::sync::MutexGuard<'_, HashMap<Window, String>> {
        self.shown.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// The desktop window that shows `preset_id` now, if one is open.
    fn desktop_of(&self, preset_id: &str) -> Option<Window> {
        self.shown()
            .iter()
            .find(|(_, id)| *id == preset_id)
            .map(|(w, _)| w.clone())
    }
    /// A turn ended (`run.rs`): a proactive one gives its budget place back when it said nothing.
    fn turn_ended(&self, turn_id: &str, status: crate::turn::TurnStatus) {
        proactive::ended(self, turn_id, status);
    }
    fn emit(&self, ev: StageEvent) {
        // No reader any more: the app is closing; nothing to tell.
        let _ = self.events.send(ev);
    }
}
