//! The bridge events the shell emits to the webviews: one enum of their exact names, the name each
//! stage event goes out as ([`BridgeEvent::of`]), and the one way to emit them to every window.

use serde::Serialize;
use tauri::{AppHandle, Emitter, Runtime};
use yui_core::stage::StageEvent;

/// Bridge events the shell emits to the webviews. The UI listens for these exact names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BridgeEvent {
    /// The presets table changed (opened, closed, renamed): payload is the full list.
    PresetsChanged,
    /// A switch changed: payload is `{browser, relations, screen}` booleans.
    SwitchesChanged,
    /// A character was addressed by another one's reply (contract: address_character).
    CharacterAddressed,
    /// The vocabulary was saved or reset in settings: payload is the new
    /// `yui_core::vocab::CharacterVocab`. Character windows re-read vocabulary and sprites.
    VocabChanged,
    /// A relation value may have changed (the slider, or a `rate_relation` call in a turn):
    /// payload is the fresh `yui_core::relations::UserBands`.
    RelationsChanged,
    /// A turn's reply has been fully played (bubble and speech): payload is `{turn_id}`.
    PlaybackFinished,
    /// A turn event of a character's turn that its own window did not start (a phone's turn,
    /// an addressed turn), sent to that character's window so the reply plays there: payload is
    /// `{preset_id, turn_id, origin, event}` (stage.rs).
    CharacterTurn,
    /// A preset's push connection changed: `{preset_id, state}` (quick controls).
    Connection,
    /// The main character's body: `{state}` (the core's `BodyState`) when it changed, or
    /// `{looking: bool}` while a screen capture runs.
    BodyChanged,
    /// The user has been away past `yui.sleep` (`{asleep: true}`) or is back (`{asleep:
    /// false}`): the characters sleep or wake (the core's presence watch, presence.rs).
    Presence,
    /// To one character window: it went off screen (`{hidden: true}`: unmapped, iconified) or
    /// came back (`{hidden: false}`) (visibility.rs).
    Visibility,
    /// A settings key other than the switches and the vocabulary was written: `{key}` (the
    /// settings window).
    SettingsChanged,
    /// A character's voice, to its own desktop window: `{type: "speaking", preset_id, turn_id,
    /// index, text, envelope}` when a clip starts (the mouth follows `envelope.levels`, one per
    /// `frame_ms`; `null` for speech-dispatcher: a plain talking animation) and `{type:
    /// "speech_ended", preset_id, turn_id, heard_ms, complete, note?}`; a realtime reply's
    /// streamed envelope as `{type: "lip_sync", preset_id, batch: {item_id, start_ms, frame_ms,
    /// levels, peak_rms, last, stopped}}` (ui/character/lipsync.js `stream`).
    Speech,
    /// The microphone changed: the core's `MicStatus` `{state, live, preset_id, mode,
    /// full_duplex, message}` (the badge, the quick controls).
    Mic,
    /// What the user said aloud, just before it starts as their turn: `{preset_id, text}`; or
    /// their words transcribed after their realtime turn had started without them: `{preset_id,
    /// turn_id, text}` (the stored `(spoken; no transcript)` became `text`).
    Heard,
    /// The proactive turns waiting for the manners: `{waiting: [{preset_id, trigger,
    /// importance, reason}]}` (a character's badge, Settings → Manners).
    Waiting,
    /// A download of the built-in model moved on, to the main window (the first run's bubble)
    /// and the settings window: the core's `ModelPull` `{name, state, done, total, percent,
    /// message?, unreachable}`.
    ModelPull,
}

impl BridgeEvent {
    pub const ALL: [BridgeEvent; 17] = [
        Self::PresetsChanged,
        Self::SwitchesChanged,
        Self::CharacterAddressed,
        Self::VocabChanged,
        Self::RelationsChanged,
        Self::PlaybackFinished,
        Self::CharacterTurn,
        Self::Connection,
        Self::BodyChanged,
        Self::Presence,
        Self::Visibility,
        Self::SettingsChanged,
        Self::Speech,
        Self::Mic,
        Self::Heard,
        Self::Waiting,
        Self::ModelPull,
    ];

    /// The bridge event a stage event goes out as (`None`: for the core's own readers).
    pub fn of(ev: &StageEvent) -> Option<Self> {
        Some(match ev {
            StageEvent::Turn { .. } => Self::CharacterTurn,
            StageEvent::PlaybackFinished { .. } => Self::PlaybackFinished,
            StageEvent::CharacterAddressed { .. } => Self::CharacterAddressed,
            StageEvent::Connection { .. } => Self::Connection,
            StageEvent::PresetsChanged { .. } => Self::PresetsChanged,
            StageEvent::SwitchesChanged { .. } => Self::SwitchesChanged,
            StageEvent::VocabChanged { .. } => Self::VocabChanged,
            StageEvent::RelationsChanged { .. } => Self::RelationsChanged,
            StageEvent::SettingsChanged { .. } => Self::SettingsChanged,
            StageEvent::Speaking { .. }
            | StageEvent::SpeechEnded { .. }
            | StageEvent::LipSync { .. } => Self::Speech,
            StageEvent::Mic { .. } => Self::Mic,
            StageEvent::Heard { .. } | StageEvent::HeardLater { .. } => Self::Heard,
            StageEvent::Presence { .. } => Self::Presence,
            StageEvent::Shown { .. } => Self::Visibility,
            StageEvent::Body { .. } | StageEvent::Looking { .. } => Self::BodyChanged,
            StageEvent::Waiting { .. } => Self::Waiting,
            StageEvent::ModelPull { .. } => Self::ModelPull,
            StageEvent::Idle => return None,
        })
    }

    pub const fn name(self) -> &'static str {
        match self {
            Self::PresetsChanged => "yui://presets-changed",
            Self::SwitchesChanged => "yui://switches-changed",
            Self::CharacterAddressed => "yui://character-addressed",
            Self::VocabChanged => "yui://vocab-changed",
            Self::RelationsChanged => "yui://relations-changed",
            Self::PlaybackFinished => "yui://playback-finished",
            Self::CharacterTurn => "yui://character-turn",
            Self::Connection => "yui://connection",
            Self::BodyChanged => "yui://body-changed",
            Self::Presence => "yui://presence",
            Self::Visibility => "yui://visibility",
            Self::SettingsChanged => "yui://settings-changed",
            Self::Speech => "yui://speech",
            Self::Mic => "yui://mic",
            Self::Heard => "yui://heard",
            Self::Waiting => "yui://waiting",
            Self::ModelPull => "yui://model-pull",
        }
    }
}

/// Emit a bridge event to every window.
pub fn emit<R: Runtime, P: Serialize + Clone>(app: &AppHandle<R>, ev: BridgeEvent, payload: P) {
    if let Err(e) = app.emit(ev.name(), payload) {
        tracing::warn!(event = ev.name(), error = %e, "emit failed");
    }
}
