//! One turn on the stage: building it (backend, addressed context, the seat's link),
//! pumping its events out tagged with the preset, playing it, and the addressed turn that may
//! follow.

use super::{BackendSource, Inner, Origin, StageEvent, Stream, Window};
use crate::error::Result;
use crate::store::Store;
use crate::turn::{
    self, Backend, SeatLink, Timeouts, TurnDeps, TurnEvent, TurnHandle, TurnInput, TurnStatus,
};
use crate::window::WindowKind;
use std::sync::Arc;

/// The `addressed:` lines of an addressed turn's client context (docs/client-context.md).
pub fn addressed_lines(from_name: &str, text: &str) -> Vec<String> {
    vec![
        format!(
            "addressed: {from_name} spoke to you: {}",
            serde_json::Value::from(text.trim())
        ),
        format!(
            "addressed: answer {from_name}, or reply exactly {} to let the exchange end",
            turn::SILENT
        ),
    ]
}

/// The speaker a proactive turn's stored line is marked with (history shows `proactive: …`).
pub const PROACTIVE_SPEAKER: &str = "proactive";

/// The `proactive:` lines of a proactive turn's client context (docs/client-context.md): why,
/// and that it may say nothing.
pub fn proactive_lines(reason: &str) -> Vec<String> {
    vec![
        format!("proactive: {reason}"),
        format!(
            "proactive: nobody asked you; say something short that fits, or reply exactly {} to say nothing",
            turn::SILENT
        ),
    ]
}

pub(super) fn backend_for(inner: &Inner) -> Result<(Backend, Timeouts)> {
    backend_of(&inner.store, &inner.paths, &inner.opts.backend)
}

fn backend_of(
    store: &Store,
    paths: &crate::paths::Paths,
    source: &BackendSource,
) -> Result<(Backend, Timeouts)> {
    Ok(match source {
        BackendSource::Configured => (
            Backend::configured(store, paths)?,
            Timeouts::configured(store),
        ),
        BackendSource::Fixed { backend, timeouts } => (backend.clone(), *timeouts),
    })
}

/// The stage's extraction scheduler: each character's extraction goes to the backend its turns
/// use (docs/memory.md). `None` when no HTTP client can be made (memory then only recalls).
pub(super) fn memory_scheduler(
    store: &Store,
    clock: &crate::clock::SharedClock,
    paths: &crate::paths::Paths,
    opts: &super::StageOptions,
) -> Option<crate::longterm::schedule::Scheduler> {
    let http = turn::sse::http_client(&Timeouts::configured(store)).ok()?;
    let (s, p, source) = (store.clone(), paths.clone(), opts.backend.clone());
    let backend: crate::longterm::schedule::BackendFn =
        Arc::new(move |_preset: &str| backend_of(&s, &p, &source).map(|(b, _)| b));
    Some(crate::longterm::schedule::Scheduler::new(
        store.clone(),
        clock.clone(),
        http,
        backend,
    ))
}

/// Build and start a turn of `preset_id`, taking the character's turn slot (a turn still running
/// there and its speech stop), and pump it. `started`: a response the realtime server started
/// (the user spoke), which the turn plays instead of sending `text`.
#[allow(clippy::too_many_arguments)]
pub(super) fn start(
    inner: &Arc<Inner>,
    preset_id: &str,
    window: WindowKind,
    text: &str,
    origin: Origin,
    epoch: u64,
    stream: Option<Stream>,
    started: Option<crate::turn::transport::realtime::ServerStarted>,
) -> Result<String> {
    let (backend, timeouts) = backend_for(inner)?;
    if let Some(m) = &inner.memory {
        m.turn_started(preset_id);
    }
    let link = super::link::ensure(inner, preset_id, window, &backend, &timeouts);
    let (mut req, registry) =
        turn::prepare(&inner.store, &inner.clock, preset_id, window, text, backend)?;
    req.timeouts = timeouts;
    if let Some(c) = req.context.as_mut() {
        c.aware = super::proactive::aware::lines(inner);
    }
    if let Origin::Addressed { from_name, .. } = &origin {
        req.addressed_by = Some(from_name.clone());
        if let Some(c) = req.context.as_mut() {
            c.addressed = addressed_lines(from_name, text);
        }
    }
    if let Origin::Proactive { reason, .. } = &origin {
        req.addressed_by = Some(PROACTIVE_SPEAKER.to_string());
        if let Some(c) = req.context.as_mut() {
            c.proactive = proactive_lines(reason);
        }
    }
    // The first run's hello is a greeting: its reply is kept short (stage/model.rs).
    if matches!(&origin, Origin::Proactive { trigger, .. } if trigger == super::HELLO_TRIGGER) {
        let cap = super::HELLO_MAX_TOKENS;
        let own = req.backend.max_output_tokens;
        req.backend.max_output_tokens = Some(own.map_or(cap, |m| m.min(cap)));
    }
    let mut deps = TurnDeps::new(inner.store.clone(), inner.clock.clone(), &req.timeouts)?;
    // The built-in model's engine, when the backend is it (docs/built-in-model.md).
    deps.builtin = match inner.opts.backend {
        BackendSource::Configured => {
            crate::model::builtin::shared(&inner.store, &inner.paths, inner.clock.clone())?
        }
        BackendSource::Fixed { .. } => inner.opts.engine.clone(),
    };
    // The session's audio is the character's voice (no text-to-speech) while it has one.
    let rt_audio = match &link {
        SeatLink::Realtime(c) => {
            super::realtime_voice::audio_of(inner, preset_id).map(|a| (a, c.clone()))
        }
        _ => None,
    };
    deps.link = link;
    if let Some(s) = started {
        deps.input = TurnInput::Started(s);
    }
    let handle = turn::start(deps, req, registry);
    let turn_id = handle.turn_id.clone();
    let addressed = matches!(origin, Origin::Addressed { .. });
    {
        let mut seats = inner.seats();
        let seat = seats.entry(preset_id.to_string()).or_default();
        if let Some((_, _, old)) = seat
            .turn
            .replace((turn_id.clone(), addressed, handle.stopper()))
        {
            old.cancel();
        }
        if let Some(old) = seat.speech.take() {
            old.cancel.cancel();
        }
    }
    let speech = rt_audio.is_some()
        || (!inner.opts.headless && crate::voice::load(&inner.store).is_ok_and(|v| v.enabled));
    inner.tracker.begin(&turn_id, speech);
    // The window that started a user turn has its stream; a phone's turn and an addressed turn
    // also play on the character's desktop window, if it is open.
    // A user turn said aloud (the microphone: no stream) plays there too.
    let to = match origin {
        Origin::User if stream.is_some() => Vec::new(),
        _ => inner.desktop_of(preset_id).into_iter().collect(),
    };
    let pump = Pump {
        stream,
        to,
        inner: inner.clone(),
        preset_id: preset_id.to_string(),
        window,
        origin,
        epoch,
        speech,
        rt_audio,
    };
    inner
        .active
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    tokio::spawn(async move {
        let inner = pump.inner.clone();
        pump.run(handle).await;
        // After any addressed turn it started has counted itself in.
        if inner
            .active
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst)
            == 1
        {
            inner.emit(StageEvent::Idle);
        }
    });
    Ok(turn_id)
}

struct Pump {
    stream: Option<Stream>,
    to: Vec<Window>,
    inner: Arc<Inner>,
    preset_id: String,
    window: WindowKind,
    origin: Origin,
    epoch: u64,
    speech: bool,
    rt_audio: Option<(
        Arc<super::realtime_voice::SeatAudio>,
        Arc<crate::turn::transport::realtime::RealtimeClient>,
    )>,
}

/// A turn's voice: text-to-speech of its words, or its realtime session's own audio.
enum Voicing {
    Tts(super::speech::Speaking),
    Rt(super::realtime_voice::RtSpeaking),
}

impl Voicing {
    fn observe(&mut self, event: &TurnEvent) {
        match self {
            Self::Tts(s) => s.observe(event),
            Self::Rt(s) => s.observe(event),
        }
    }
    async fn finish(self, status: TurnStatus) {
        match self {
            Self::Tts(s) => s.finish(status).await,
            Self::Rt(s) => s.finish(status).await,
        }
    }
}

impl Pump {
    async fn run(mut self, mut handle: TurnHandle) {
        let inner = &self.inner;
        let turn_id = handle.turn_id.clone();
        // Speaking starts with the first complete sentence, while the turn still streams.
        let mut speaking = match self.rt_audio.take() {
            Some((a, c)) => Some(Voicing::Rt(super::realtime_voice::begin(
                inner,
                &self.preset_id,
                &turn_id,
                a,
                c,
            ))),
            None => self
                .speech
                .then(|| Voicing::Tts(super::speech::begin(inner, &self.preset_id, &turn_id))),
        };
        let mut end = None;
        while let Some(event) = handle.events.recv().await {
            if let Some(s) = speaking.as_mut() {
                s.observe(&event);
            }
            if let Some(stream) = &self.stream {
                if !stream(&event) {
                    // The window went away: stop the turn rather than talk to no one.
                    tracing::info!(turn = %turn_id, "the turn's window stopped reading; stopping");
                    handle.stopper().cancel();
                    self.stream = None;
                }
            }
            if let TurnEvent::TurnEnd {
                status,
                text,
                addressed,
                ..
            } = &event
            {
                end = Some((*status, text.clone(), addressed.clone()));
            }
            inner.emit(StageEvent::Turn {
                to: self.to.clone(),
                preset_id: self.preset_id.clone(),
                turn_id: turn_id.clone(),
                window: self.window,
                origin: self.origin.clone(),
                event,
            });
        }
        self.free_slot(&turn_id);
        if let Some(m) = &inner.memory {
            m.turn_ended(&self.preset_id);
        }
        let (status, text, addressed) = end.unwrap_or((TurnStatus::Error, String::new(), None));
        inner.turn_ended(&turn_id, status);
        if inner.opts.headless {
            inner.tracker.bubble_done(&turn_id);
        }
        if let Some(s) = speaking {
            s.finish(status).await;
            inner.tracker.speech_done(&turn_id);
        }
        if !self.played(&turn_id).await {
            return;
        }
        let Some(to) = addressed.filter(|_| status == TurnStatus::Ok) else {
            return;
        };
        self.address(&turn_id, &to.preset_id, &to.name, &text);
    }

    fn free_slot(&self, turn_id: &str) {
        let mut seats = self.inner.seats();
        if let Some(seat) = seats.get_mut(&self.preset_id) {
            if seat.turn.as_ref().is_some_and(|(id, _, _)| id == turn_id) {
                seat.turn = None;
            }
        }
    }

    /// Wait for the turn's playback (bounded: a closed window never reports) and announce it.
    async fn played(&self, turn_id: &str) -> bool {
        let tracker = &self.inner.tracker;
        let finished =
            tokio::time::timeout(self.inner.opts.playback_wait, tracker.finished(turn_id)).await;
        if finished.is_err() {
            tracing::info!(turn = turn_id, "playback never finished; forgotten");
            tracker.forget(turn_id);
            return false;
        }
        self.inner.emit(StageEvent::PlaybackFinished {
            preset_id: self.preset_id.clone(),
            turn_id: turn_id.to_string(),
        });
        true
    }

    /// The reply was addressed to `to`: its addressed turn, if the exchange may go on.
    fn address(&self, turn_id: &str, to: &str, to_name: &str, text: &str) {
        let inner = &self.inner;
        let store: &Store = &inner.store;
        let open = crate::presets::list_open(store).map(|l| l.into_iter().find(|p| p.id == to));
        let recipient = match open {
            Ok(Some(p)) => p,
            Ok(None) => {
                tracing::info!(to, "the addressed character is closed; its turn is dropped");
                return;
            }
            Err(e) => {
                tracing::warn!(to, error = %e, "open characters unreadable; addressed turn dropped");
                return;
            }
        };
        // A character answering the user is not interrupted by another character.
        let busy = inner
            .seats()
            .get(to)
            .and_then(|s| s.turn.as_ref())
            .is_some_and(|(_, addressed, _)| !addressed);
        if busy {
            tracing::info!(
                to,
                "the addressed character is answering the user; the exchange ends"
            );
            return;
        }
        let cap = crate::settings::addressed_chain_max(store);
        {
            let mut chain = inner.chain();
            if chain.epoch != self.epoch {
                tracing::info!(to, "the user spoke meanwhile; the exchange ends");
                return;
            }
            if chain.count >= cap {
                tracing::info!(to, cap, "addressed chain cap reached; the exchange ends");
                return;
            }
            chain.count += 1;
        }
        let from_name = crate::presets::get(store, &self.preset_id)
            .map(|p| p.name)
            .unwrap_or_else(|_| self.preset_id.clone());
        inner.emit(StageEvent::CharacterAddressed {
            from: self.preset_id.clone(),
            from_name: from_name.clone(),
            to: to.to_string(),
            to_name: to_name.to_string(),
            text: text.to_string(),
            turn_id: turn_id.to_string(),
        });
        let window = if recipient.is_main {
            WindowKind::Main
        } else {
            WindowKind::Pet
        };
        let origin = Origin::Addressed {
            from: self.preset_id.clone(),
            from_name,
        };
        if let Err(e) = start(inner, to, window, text, origin, self.epoch, None, None) {
            tracing::warn!(to, error = %e.message, "the addressed turn could not start");
        }
    }
}
