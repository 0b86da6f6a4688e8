//! The realtime transport (docs/realtime-transport.md): the OpenAI Realtime protocol over one
//! WebSocket per character window. The session declares the window's tools (generate_express
//! included) in `session.update`; a turn sends the user's words as a `conversation.item.create`
//! and a `response.create`, shows the transcript (or text) as it streams, runs each call once
//! under the same rules and strings as the other transports, answers the calls of a response
//! with `function_call_output` items and exactly one `response.create` when the round-trip rules
//! say results go back (at most three continuations per user turn).
//!
//! - [`wire`]: server events (GA names and beta aliases) and client events;
//! - [`map`]: one response's events → model events (pure, table-tested);
//! - [`conn`]: the session (set-up, routing, audio out, barge-in, reconnect with backoff);
//! - [`started`]: a response the server started by itself, for the turn that plays it;
//! - this module: the session built from current state (seeded with the history), and a turn
//!   run over it.

pub(crate) mod conn;
pub(crate) mod map;
pub(crate) mod setup;
pub(crate) mod started;
pub mod wire;

pub use crate::backend::realtime::{RealtimeSettings, TurnDetection};
pub use crate::realtime_audio::RealtimeAudioOut;
pub use conn::{
    url_with_model, ConnState, DetectionHold, FromServer, RealtimeClient, RealtimeConfig,
    RealtimeLink, SessionFn, Setup,
};
pub use started::ServerStarted;

use crate::backend::{Backend, Transport};
use crate::clock::SharedClock;
use crate::context::ClientContext;
use crate::error::Result;
use crate::store::Store;
use crate::timeouts::Timeouts;
use crate::tools::registry::{RegistryEnv, ToolRegistry};
use crate::tools::ToolOutput;
use crate::transcript::{Entry, Role};
use crate::turn::dispatch::{Answered, Dispatch, End};
use crate::turn::error::BackendError;
use crate::turn::model::StopReason;
use crate::turn::read::{read, FrameSource};
use crate::turn::request::{SeatLink, TurnDeps, TurnInput, TurnRequest};
use crate::turn::rounds::results_go_back;
use crate::turn::MAX_TOOL_ROUND_TRIPS;
use crate::window::WindowKind;
use map::RealtimeMapper;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use wire::ServerEvent;

/// The `session` object of `session.update`: `type: "realtime"`, the instructions, text or
/// audio out, pcm16 24 kHz in and out, turn detection, input transcription, the voice, and the
/// window's declared tools in the flat shape (generate_express included, the same set in every
/// switch state).
pub fn session_from(
    registry: &ToolRegistry,
    instructions: Option<&str>,
    settings: &RealtimeSettings,
    audio: bool,
) -> Value {
    let tools: Vec<Value> = registry
        .tools()
        .iter()
        .map(|t| crate::schema::realtime(t.name(), &t.description(), &t.parameters()))
        .collect();
    session_with(tools, instructions, settings, audio)
}

/// [`session_from`] with the tools already written (the doctor declares its ping tool).
pub fn session_with(
    tools: Vec<Value>,
    instructions: Option<&str>,
    settings: &RealtimeSettings,
    audio: bool,
) -> Value {
    let pcm = json!({"type": "audio/pcm", "rate": wire::SAMPLE_RATE});
    let transcription = settings
        .transcription_model
        .as_ref()
        .map(|m| json!({"model": m}))
        .unwrap_or(Value::Null);
    let mut s = json!({
        "type": "realtime",
        "output_modalities": [if audio { "audio" } else { "text" }],
        "audio": {
            "input": {
                "format": pcm,
                "turn_detection": settings.turn_detection.wire(),
                "transcription": transcription,
            },
            "output": {"format": pcm, "voice": settings.voice},
        },
        "tools": tools,
        "tool_choice": "auto",
    });
    if let Some(i) = instructions {
        s["instructions"] = json!(i);
    }
    s
}

/// The session's instructions: the persona, then the client context block.
pub fn instructions(persona: Option<&str>, context: Option<&ClientContext>) -> Option<String> {
    let persona = persona.map(str::trim).filter(|p| !p.is_empty());
    match (persona, context.map(|c| c.render())) {
        (Some(p), Some(c)) => Some(format!("{p}\n\n{c}")),
        (Some(p), None) => Some(p.to_string()),
        (None, c) => c,
    }
}

/// The conversation so far (`history`, oldest first, as the other transports send it) as the
/// `conversation.item.create` events that seed a new session: messages only, user lines as
/// `input_text` (another character's named, `Kai: …`), the character's as `output_text`, a reply
/// the user spoke over with its marker as stored. The transcript holds no tool calls, so none
/// are replayed (as on the other transports).
pub fn seed(history: &[Entry]) -> Vec<Value> {
    history
        .iter()
        .map(|e| wire::history_message(e.role == Role::Assistant, &e.history_text()))
        .collect()
}

/// A [`Setup`] seeded with `history`; the seed's last line names its turn when it is a user's.
pub fn setup_with(session: Value, history: &[Entry]) -> Setup {
    let seeded_turn = history
        .last()
        .filter(|e| e.role == Role::User)
        .and_then(|e| e.turn_id.clone());
    Setup {
        session,
        seed: seed(history),
        seeded_turn,
    }
}

/// A [`SessionFn`] that builds the window's session from the store at every connect (the open
/// presets, the vocabulary, the client context now) and seeds it with the history window now
/// (`longterm::recall::history_now`, the budget every turn's history has).
pub fn session_fn(
    store: Store,
    clock: SharedClock,
    preset_id: String,
    window: WindowKind,
    audio: bool,
) -> SessionFn {
    Arc::new(move || {
        let build = || -> Result<Setup> {
            let preset = crate::presets::get(&store, &preset_id)?;
            let env = RegistryEnv::load(&store, &preset_id, window)?;
            let registry = ToolRegistry::for_window(&env)?;
            let context = ClientContext::build(clock.as_ref(), &store, &preset_id, &registry);
            let i = instructions(Some(&preset.persona), Some(&context));
            let settings = crate::backend::realtime::load(&store);
            let session = session_from(&registry, i.as_deref(), &settings, audio);
            // A history that cannot be read starts the session empty rather than not at all.
            let history = crate::longterm::recall::history_now(&store, &preset_id)
                .inspect_err(|e| tracing::warn!(error = %e, "realtime: no history to seed"))
                .unwrap_or_default();
            Ok(setup_with(session, &history))
        };
        build()
    })
}

/// The session settings of a turn's backend (no audio: text mode).
pub fn config(req: &TurnRequest, audio: Option<Arc<dyn RealtimeAudioOut>>) -> RealtimeConfig {
    RealtimeConfig {
        audio,
        ..made(&req.backend, &req.timeouts)
    }
}

/// A window's session's configuration for `backend` (text mode; the seat adds its audio):
/// `None` when the backend is not realtime.
pub fn config_for(backend: &Backend, timeouts: &Timeouts) -> Option<RealtimeConfig> {
    (backend.transport == Transport::Realtime).then(|| made(backend, timeouts))
}

fn made(backend: &Backend, timeouts: &Timeouts) -> RealtimeConfig {
    RealtimeConfig {
        url: backend.realtime_endpoint(),
        api_key: backend.api_key.clone(),
        connect: timeouts.connect,
        ready: setup::setup_deadline(timeouts),
        audio: None,
    }
}

/// Realtime, as the engine sees it: a window's session keeps the conversation; the session
/// declares every tool of the window, so any other name is answered as refused.
pub(crate) const DESCRIPTOR: super::descriptor::Descriptor = super::descriptor::Descriptor {
    link: super::descriptor::Link::Session,
    unregistered: crate::turn::dispatch::Unregistered::Answer,
    history: super::descriptor::History::InTheWindowsSession,
    sse_mapper: None,
    not_found: None,
    probe: None,
};

/// Run one turn over the window's session (or, without one, over a text session made for it and
/// seeded with `history`, the turn's history window read before its message was stored).
pub(crate) async fn realtime_turn(
    d: &mut Dispatch<'_>,
    deps: &TurnDeps,
    req: &TurnRequest,
    registry: &ToolRegistry,
    history: &[Entry],
) -> std::result::Result<(), End> {
    let own;
    let instructions = instructions(req.instructions.as_deref(), req.context.as_ref());
    let seat = match &deps.link {
        SeatLink::Realtime(c) => Some(c),
        _ => None,
    };
    let client: &RealtimeClient = match seat {
        Some(c) => c,
        None => {
            let mut settings = crate::backend::realtime::load(&deps.store);
            if matches!(deps.input, TurnInput::Audio(_)) {
                // The whole utterance is there: committed at its end, not cut by voice activity.
                settings.turn_detection = TurnDetection::PushToTalk;
            }
            let audio = deps.audio_out.is_some();
            let s = session_from(registry, instructions.as_deref(), &settings, audio);
            let cfg = config(req, deps.audio_out.clone());
            let setup = setup_with(s, history);
            own = RealtimeClient::spawn(cfg, Arc::new(move || Ok(setup.clone())));
            &own
        }
    };
    let started = match &deps.input {
        TurnInput::Started(s) => s.take(),
        _ => None,
    };
    if let Some((link, read_already)) = started {
        // The server is answering already: nothing to send before reading.
        let mut source = RealtimeSource::new(link, req.timeouts.stall);
        source.pending = read_already.into();
        return read_rounds(d, source).await;
    }
    let url = req.backend.realtime_endpoint();
    // Past the set-up's own deadline, so the turn ends with the set-up's sentence.
    let wait = req.timeouts.connect + setup::setup_deadline(&req.timeouts);
    let link = tokio::select! {
        biased;
        _ = d.cancel.cancelled() => return Err(End::Stopped),
        l = client.open_turn(wait) => l.map_err(|message| BackendError::Connect { url, message })?,
    };
    let mut first = Vec::with_capacity(3);
    if let (Some(_), Some(i)) = (seat, &instructions) {
        // A long-lived session: this turn's client context (time, memory, addressed lines).
        first.push(wire::session_update(
            json!({"type": "realtime", "instructions": i}),
        ));
    }
    // An addressed turn's words carry the speaker's name, as on push.
    let text = match &req.addressed_by {
        Some(speaker) => format!("{speaker}: {}", req.message),
        None => req.message.clone(),
    };
    match &deps.input {
        // Spoken: the audio, its end, and the response (the server's transcription of it
        // reaches the transcript through `audio.input.transcription`).
        TurnInput::Audio(chunks) => {
            for c in chunks.iter() {
                use base64::Engine as _;
                let b64 = base64::engine::general_purpose::STANDARD.encode(c);
                if !link.send(wire::append(&b64)).await {
                    return Err(lost().into());
                }
            }
            first.push(wire::commit());
        }
        // Already the seed's last line (stored while the session was being set up).
        _ if link.seeded(&req.turn_id) => {}
        _ => first.push(wire::user_text(&text)),
    }
    first.push(wire::response_create());
    for e in first {
        if !link.send(e).await {
            return Err(lost().into());
        }
    }
    read_rounds(d, RealtimeSource::new(link, req.timeouts.stall)).await
}

/// Read the turn's responses: each one, its calls answered and one `response.create` when the
/// round-trip rules say results go back (at most three continuations); a barge-in ends the turn
/// with what was heard.
async fn read_rounds(
    d: &mut Dispatch<'_>,
    mut source: RealtimeSource,
) -> std::result::Result<(), End> {
    let cancel = d.cancel;
    let mut continuations = 0;
    loop {
        let round = read(d, cancel, &mut source, &mut RealtimeMapper::new()).await?;
        if let Some((played, total)) = source.interrupted.take() {
            let earlier = d.text.len().saturating_sub(round.text.len());
            let mut heard = d.text[..earlier].to_string();
            heard.push_str(&heard_part(&round.text, played, total));
            d.heard = Some(heard);
            return Err(End::Stopped);
        }
        match round.stop {
            Some(StopReason::Stopped) => return Err(End::Stopped),
            Some(StopReason::Error(body)) => return Err(BackendError::Server { body }.into()),
            _ => {}
        }
        // No finish reason on this wire: a response with no text waited for its results.
        if !results_go_back(&round.answered, &round.text, true)
            || continuations >= MAX_TOOL_ROUND_TRIPS
        {
            return Ok(());
        }
        continuations += 1;
        for e in answers(&round.answered) {
            if !source.link.send(e).await {
                return Err(lost().into());
            }
        }
    }
}

/// What answers the calls of one response: a `function_call_output` per call (its text), one
/// user message with the images of every result that has some, then exactly one
/// `response.create`.
pub(crate) fn answers(answered: &[Answered]) -> Vec<Value> {
    let mut out = Vec::with_capacity(answered.len() + 2);
    let mut images = Vec::new();
    for a in answered {
        let text = match &a.result {
            ToolOutput::Text(t) => t,
            ToolOutput::Images { text, images: i } => {
                images.extend(i.iter().cloned());
                text
            }
        };
        out.push(wire::call_output(&a.call_id, text));
    }
    if !images.is_empty() {
        out.push(wire::user_images(&images));
    }
    out.push(wire::response_create());
    out
}

/// The first part of `text` heard when `played_ms` of `total_ms` of its audio played: the same
/// share of its characters, cut back to a whole word (a text without spaces is cut at the
/// character).
pub fn heard_part(text: &str, played_ms: u64, total_ms: u64) -> String {
    if total_ms == 0 || played_ms >= total_ms {
        return text.trim().to_string();
    }
    let chars = text.chars().count();
    let want = (chars as u128 * played_ms as u128 / total_ms as u128) as usize;
    crate::voice::heard::first_words(text, want)
}

/// One realtime turn's link as a frame source: the session's events for this turn,
/// `response.cancel` (and the audio stopped) when the turn is stopped, and the barge-in noted.
pub(crate) struct RealtimeSource {
    pub link: RealtimeLink,
    stall: Duration,
    /// The user spoke over the reply: played and total milliseconds of its audio.
    interrupted: Option<(u64, u64)>,
    /// Events read from the link before the turn started (a server-started response).
    pending: VecDeque<ServerEvent>,
}

impl RealtimeSource {
    pub fn new(link: RealtimeLink, stall: Duration) -> Self {
        Self {
            link,
            stall,
            interrupted: None,
            pending: VecDeque::new(),
        }
    }
}

impl FrameSource for RealtimeSource {
    type Frame = ServerEvent;

    async fn next(&mut self) -> Option<std::result::Result<ServerEvent, BackendError>> {
        let ev = match self.pending.pop_front() {
            Some(e) => e,
            None => self.link.recv().await?,
        };
        if let ServerEvent::Interrupted {
            played_ms,
            total_ms,
            ..
        } = &ev
        {
            self.interrupted = Some((*played_ms, *total_ms));
        }
        Some(Ok(ev))
    }

    fn stall(&self) -> Option<Duration> {
        Some(self.stall)
    }

    async fn cancelled(&mut self) {
        self.link.cancel().await;
    }
}

fn lost() -> BackendError {
    BackendError::Stream {
        message: map::LOST.into(),
    }
}

/// The names of a session's declared tools, in order (tests and `yui` diagnostics).
pub fn tool_names(session: &Value) -> Vec<String> {
    session["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Run event texts (as the session reads them) through one response's mapping and dispatch,
/// with no socket: parse, map, dispatch, events out. Returns how many events parsed. For the
/// benchmark (`benches/realtime_stream.rs`) and the fuzz target (`realtime_events`).
#[doc(hidden)]
pub async fn replay_events(
    deps: &TurnDeps,
    req: &TurnRequest,
    registry: &ToolRegistry,
    events: &[String],
    tx: &tokio::sync::mpsc::Sender<crate::turn::TurnEvent>,
) -> usize {
    let unregistered = DESCRIPTOR.unregistered;
    super::socket::replay::<map::RealtimeMap>(deps, req, registry, events, unregistered, tx).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heard_is_the_played_share_in_whole_words() {
        assert_eq!(heard_part("one two three four", 500, 1000), "one two");
        assert_eq!(heard_part("one two three four", 0, 1000), "");
        assert_eq!(
            heard_part("one two three four", 1000, 1000),
            "one two three four"
        );
        assert_eq!(heard_part("こんにちは世界", 500, 1000), "こんに");
        assert_eq!(heard_part("abc", 5, 0), "abc");
    }
}
