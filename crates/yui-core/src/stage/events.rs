//! What the stage tells the windows: one enum of events, each naming the windows it goes to
//! ([`StageEvent::to`]) and the payload they get ([`StageEvent::payload`]). The shell only turns a
//! [`Window`] into its label and a variant into its bridge event name; it decides nothing.
//!
//! To add an event: add a variant here (its fields are its payload), say where it goes in
//! [`StageEvent::to`] (the match is exhaustive, so the compiler asks), emit it from the stage,
//! give it a bridge name in `src-tauri/src/bridge.rs` (`BridgeEvent::of`) and list that name in
//! `ui/js/ipc.js`'s `EVENTS`.

use super::Origin;
use crate::presets::Preset;
use crate::relations::UserBands;
use crate::settings::Switches;
use crate::turn::transport::push::ConnState;
use crate::turn::TurnEvent;
use crate::vocab::CharacterVocab;
use crate::window::WindowKind;
use serde::Serialize;

/// A window as the core names it; the shell turns it into its label.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", content = "preset_id", rename_all = "snake_case")]
pub enum Window {
    /// The main character's window (whichever preset is main).
    Main,
    /// The desktop window of another open character.
    Pet(String),
    /// A character's phone.
    Phone(String),
    /// The settings window.
    Settings,
    /// The quick-controls popover.
    Quick,
}

impl Window {
    /// The desktop window of a preset: main or pet.
    pub fn desktop(preset_id: &str, is_main: bool) -> Self {
        if is_main {
            Self::Main
        } else {
            Self::Pet(preset_id.to_string())
        }
    }

    /// The contract's window kind, for the windows that run turns.
    pub fn kind(&self) -> Option<WindowKind> {
        match self {
            Self::Main => Some(WindowKind::Main),
            Self::Pet(_) => Some(WindowKind::Pet),
            Self::Phone(_) => Some(WindowKind::Phone),
            Self::Settings | Self::Quick => None,
        }
    }
}

/// Where an event goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum To {
    /// Every open window.
    Every,
    /// These windows only (none: the event is for the core's own readers, such as the CLI).
    Only(Vec<Window>),
}

/// What the stage tells the shell (or the CLI).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StageEvent {
    /// One event of a character's turn, in stream order; the last of a turn is `turn_end`. The
    /// window that started a user turn gets the events on its own stream
    /// ([`super::UserTurn::streamed`]); `to` names the other windows that play it: the
    /// character's desktop window for a phone's turn and for an addressed turn.
    Turn {
        #[serde(skip)]
        to: Vec<Window>,
        preset_id: String,
        turn_id: String,
        window: WindowKind,
        origin: Origin,
        event: TurnEvent,
    },
    /// A turn's reply has been fully played (bubble shown, speech ended).
    PlaybackFinished { preset_id: String, turn_id: String },
    /// The proactive turns waiting for the manners changed (a character shows a small badge
    /// while one of its own waits; Settings → Manners lists them).
    Waiting { waiting: Vec<super::Waiting> },
    /// `from`'s reply (`text`, of turn `turn_id`) was addressed to `to`: its addressed turn
    /// starts now.
    CharacterAddressed {
        from: String,
        from_name: String,
        to: String,
        to_name: String,
        text: String,
        turn_id: String,
    },
    /// A clip of `preset_id`'s reply starts playing now: sentence `index` of the turn, with its
    /// loudness per 20 ms (`None` for speech-dispatcher, which plays by itself: a plain talking
    /// animation). One event per clip, to the character's desktop window; the window moves the
    /// mouth from its own clock.
    Speaking {
        #[serde(skip)]
        to: Vec<Window>,
        preset_id: String,
        turn_id: String,
        index: usize,
        text: String,
        envelope: Option<crate::voice::pcm::Envelope>,
    },
    /// `preset_id`'s speech of `turn_id` ended: all said (`complete`), stopped, or failed, then
    /// with a note in plain words (the reply's text is shown all the same).
    SpeechEnded {
        #[serde(skip)]
        to: Vec<Window>,
        preset_id: String,
        turn_id: String,
        heard_ms: u64,
        complete: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// Lip sync of `preset_id`'s realtime reply, to its desktop window: some levels of the
    /// envelope of the audio as it arrives (`batch`: item, start, 20 ms levels, last, stopped);
    /// the window appends them to what its mouth plays on its own clock.
    LipSync {
        #[serde(skip)]
        to: Vec<Window>,
        preset_id: String,
        batch: crate::voice::realtime_audio::EnvelopeBatch,
    },
    /// A preset's push connection changed state (quick controls show it).
    Connection { preset_id: String, state: ConnState },
    /// The presets table changed: the full list.
    PresetsChanged { presets: Vec<Preset> },
    /// A device-wide switch changed: every switch now.
    SwitchesChanged { switches: Switches },
    /// The vocabulary was saved or reset: what character windows draw from it.
    VocabChanged { vocab: CharacterVocab },
    /// A relation value (or the Relations switch) may have changed: the fresh bands.
    RelationsChanged { bands: UserBands },
    /// Another settings key was written (the settings window re-reads what it shows).
    SettingsChanged { key: String },
    /// No turn runs or waits any more: every exchange has ended (the CLI's `yui converse`
    /// exits on it).
    Idle,
    /// The microphone changed: live or not, for which character, and why it stopped (the
    /// badge, the quick controls, the tray; the payload is the status itself).
    Mic { status: super::MicStatus },
    /// What the user said aloud in `preset_id`'s window, just before it starts as their turn.
    Heard { preset_id: String, text: String },
    /// The user's words of `turn_id`, spoken to a realtime session and transcribed after their
    /// turn had started without them (it was shown and stored as `(spoken; no transcript)`):
    /// stored now in its place. Goes out as `yui://heard` with the `turn_id`.
    HeardLater {
        preset_id: String,
        turn_id: String,
        text: String,
    },
    /// The user has been away past `yui.sleep` (`asleep`) or is back: the characters sleep or
    /// wake.
    Presence { asleep: bool },
    /// A character window went off screen (`hidden`: unmapped by Show/Hide all, iconified by the
    /// window manager, a capture) or came back: to that window, which stops or restarts its
    /// ambient motions.
    Shown {
        #[serde(skip)]
        window: Window,
        hidden: bool,
    },
    /// The main character's body changed (where it is, what it does).
    Body { state: crate::avatar::BodyState },
    /// A screen capture started (`looking`) or ended: the character shows it looks.
    Looking { looking: bool },
    /// A download of the built-in model moved on (`model.rs`): to the main window (the first
    /// run's bubble) and Settings → Backend → Built-in model. The payload is the pull itself.
    ModelPull { pull: super::ModelPull },
}

impl StageEvent {
    /// The windows this event goes to.
    pub fn to(&self) -> To {
        match self {
            Self::Turn { to, .. }
            | Self::Speaking { to, .. }
            | Self::SpeechEnded { to, .. }
            | Self::LipSync { to, .. } => To::Only(to.clone()),
            Self::PlaybackFinished { .. }
            | Self::Waiting { .. }
            | Self::CharacterAddressed { .. }
            | Self::Connection { .. }
            | Self::PresetsChanged { .. }
            | Self::SwitchesChanged { .. }
            | Self::VocabChanged { .. }
            | Self::RelationsChanged { .. }
            | Self::Mic { .. }
            | Self::Heard { .. }
            | Self::HeardLater { .. }
            | Self::Presence { .. }
            | Self::Body { .. }
            | Self::Looking { .. } => To::Every,
            Self::Shown { window, .. } => To::Only(vec![window.clone()]),
            Self::SettingsChanged { .. } => To::Only(vec![Window::Settings]),
            Self::ModelPull { .. } => To::Only(vec![Window::Main, Window::Settings]),
            Self::Idle => To::Only(Vec::new()),
        }
    }

    /// What the windows get: the changes' fresh state itself, else the event's fields without
    /// its `type` tag.
    pub fn payload(&self) -> serde_json::Value {
        let v = match self {
            Self::PresetsChanged { presets } => serde_json::to_value(presets),
            Self::SwitchesChanged { switches } => serde_json::to_value(switches),
            Self::VocabChanged { vocab } => serde_json::to_value(vocab),
            Self::RelationsChanged { bands } => serde_json::to_value(bands),
            // The voice's three kinds share one bridge event: `type` tells them apart.
            Self::Speaking { .. } | Self::SpeechEnded { .. } | Self::LipSync { .. } => {
                serde_json::to_value(self)
            }
            Self::Mic { status } => serde_json::to_value(status),
            Self::ModelPull { pull } => serde_json::to_value(pull),
            other => serde_json::to_value(other).map(|mut v| {
                if let Some(m) = v.as_object_mut() {
                    m.remove("type");
                }
                v
            }),
        };
        v.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "a stage event did not serialize");
            serde_json::Value::Null
        })
    }
}

/// The events a committed store change means for the windows (read fresh from the store).
pub(super) fn of_change(
    store: &crate::store::Store,
    change: &crate::store::changes::Change,
) -> Vec<StageEvent> {
    use crate::store::changes::Change;
    let mut out = Vec::new();
    let read = |what: &str, r: crate::error::Result<StageEvent>| match r {
        Ok(ev) => Some(ev),
        Err(e) => {
            tracing::warn!(what, error = %e.message, "reading after a change failed");
            None
        }
    };
    let bands = || {
        read(
            "bands",
            crate::relations::user_bands(store).map(|bands| StageEvent::RelationsChanged { bands }),
        )
    };
    match change {
        Change::Presets => out.extend(read(
            "presets",
            crate::presets::list(store).map(|presets| StageEvent::PresetsChanged { presets }),
        )),
        Change::Relations => out.extend(bands()),
        // The stage's reminder timer watches this itself (`stage/reminders.rs`).
        Change::Reminders => {}
        Change::Setting(key) if key == crate::vocab::KEY => out.extend(read(
            "vocabulary",
            crate::vocab::for_character(store).map(|vocab| StageEvent::VocabChanged { vocab }),
        )),
        Change::Setting(key) if crate::settings::SWITCHES.contains(&key.as_str()) => {
            out.extend(read(
                "switches",
                crate::settings::switches(store)
                    .map(|switches| StageEvent::SwitchesChanged { switches }),
            ));
            // The bands show only while relations are on.
            if key == crate::settings::RELATIONS {
                out.extend(bands());
            }
        }
        Change::Setting(key) => out.push(StageEvent::SettingsChanged { key: key.clone() }),
    }
    out
}
