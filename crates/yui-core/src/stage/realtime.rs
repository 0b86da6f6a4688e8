//! Each seated character's realtime session, when the backend is realtime: one per character
//! window (not the phone's, which declares other tools), made when the window opens or its first
//! turn starts, kept while the URL, the window and voice output stay, its state changes sent as
//! [`StageEvent::Connection`] (the quick controls show it as push's).
//!
//! - With voice output on (and a window to show it), the session is an audio one: its reply
//!   audio plays through the seat's [`SeatAudio`] on the voice's output device
//!   (`stage/rtvoice.rs`); otherwise text mode.
//! - Responses the server starts by itself (the user spoke: server voice activity, or the
//!   microphone's commit at a push-to-talk release) become the user's turns ([`server_turns`]):
//!   the user's transcribed words are stored and shown ([`StageEvent::Heard`]) and the reply
//!   runs, is stored and plays exactly as a typed turn's.

use super::rtvoice::SeatAudio;
use super::{Inner, Stage, StageEvent};
use crate::backend::{Backend, Transport};
use crate::turn::transport::realtime::wire::ServerEvent;
use crate::turn::transport::realtime::{
    self, RealtimeClient, RealtimeConfig, RealtimeLink, ServerStarted,
};
use crate::turn::Timeouts;
use crate::window::WindowKind;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a server-started turn waits for the user's transcribed words before it starts
/// without them (the reply's audio plays meanwhile; only the bubble and the tools wait).
const TRANSCRIPT_WAIT: Duration = Duration::from_millis(2500);

/// What a spoken turn stores as the user's words when the server gave none.
pub const UNHEARD: &str = "(spoken; no transcript)";

/// A seat's realtime session.
pub(super) struct RtSeat {
    pub url: String,
    pub window: WindowKind,
    pub client: Arc<RealtimeClient>,
    /// The reply's audio (`None`: text mode).
    pub audio: Option<Arc<SeatAudio>>,
    /// Made with voice output on.
    pub voice: bool,
}

fn config(backend: &Backend, timeouts: &Timeouts) -> Option<RealtimeConfig> {
    if backend.transport != Transport::Realtime {
        return None;
    }
    Some(RealtimeConfig {
        url: backend.realtime_endpoint(),
        api_key: backend.api_key.clone(),
        connect: timeouts.connect,
        ready: timeouts.headers,
        audio: None,
    })
}

/// Whether the character's replies are heard: voice output on, and a window to show them.
fn voice_on(inner: &Inner) -> bool {
    !inner.opts.headless && crate::voice::load(&inner.store).is_ok_and(|v| v.enabled)
}

/// The seat's realtime session for `window` when the backend is realtime: the one it has for
/// this URL, window and voice output, or a new one.
pub(super) fn ensure(
    inner: &Arc<Inner>,
    preset_id: &str,
    window: WindowKind,
    backend: &Backend,
    timeouts: &Timeouts,
) -> Option<Arc<RealtimeClient>> {
    if window == WindowKind::Phone {
        return None;
    }
    let mut cfg = config(backend, timeouts)?;
    let voice = voice_on(inner);
    {
        let seats = inner.seats();
        if let Some(r) = seats.get(preset_id).and_then(|s| s.realtime.as_ref()) {
            if r.url == cfg.url && r.window == window && r.voice == voice {
                return Some(r.client.clone());
            }
        }
    }
    let audio = if voice {
        let host = inner
            .opts
            .audio
            .clone()
            .unwrap_or_else(crate::voice::hosts::host);
        let device = crate::voice::config::load_listen(&inner.store)
            .ok()
            .and_then(|l| l.output_device);
        SeatAudio::new(inner, preset_id, host, device)
    } else {
        None
    };
    cfg.audio = audio
        .clone()
        .map(|a| a as Arc<dyn crate::shared::realtime_audio::RealtimeAudioOut>);
    let url = cfg.url.clone();
    let session = realtime::session_fn(
        inner.store.clone(),
        inner.clock.clone(),
        preset_id.to_string(),
        window,
        cfg.audio.is_some(),
    );
    let (turns_tx, turns_rx) = mpsc::unbounded_channel();
    let client = Arc::new(RealtimeClient::spawn_with(cfg, session, Some(turns_tx)));
    let mut state = client.state();
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
            // Ends when the session is dropped (the seat closed or was replaced).
            if state.changed().await.is_err() {
                return;
            }
        }
    });
    tokio::spawn(server_turns(
        Arc::downgrade(inner),
        preset_id.to_string(),
        window,
        turns_rx,
    ));
    let mut seats = inner.seats();
    let seat = seats.entry(preset_id.to_string()).or_default();
    seat.realtime = Some(RtSeat {
        url,
        window,
        client: client.clone(),
        audio,
        voice,
    });
    Some(client)
}

/// The responses `preset_id`'s session started by itself, each made the user's turn. Ends when
/// the session is dropped.
async fn server_turns(
    weak: std::sync::Weak<Inner>,
    preset_id: String,
    window: WindowKind,
    mut links: mpsc::UnboundedReceiver<RealtimeLink>,
) {
    while let Some(mut link) = links.recv().await {
        let Some(inner) = weak.upgrade() else { return };
        let transcribed = crate::backend::realtime::load(&inner.store)
            .transcription_model
            .is_some();
        drop(inner);
        let (words, read) = user_words(&mut link, transcribed).await;
        let Some(inner) = weak.upgrade() else { return };
        let text = words.unwrap_or_else(|| UNHEARD.to_string());
        tracing::info!(preset = %preset_id, "realtime: the server started a turn (the user spoke)");
        inner.emit(StageEvent::Heard {
            preset_id: preset_id.clone(),
            text: text.clone(),
        });
        let started = ServerStarted::new(link, read);
        if let Err(e) = Stage(inner).spoken_turn(&preset_id, window, &text, started) {
            tracing::warn!(preset = %preset_id, error = %e.message, "realtime: the spoken turn could not start");
        }
    }
}

/// Read a server-started response up to the user's transcribed words (at most
/// [`TRANSCRIPT_WAIT`]; not at all when the session transcribes nothing): the words, and every
/// event read, for the turn to replay.
async fn user_words(
    link: &mut RealtimeLink,
    transcribed: bool,
) -> (Option<String>, Vec<ServerEvent>) {
    let mut read = Vec::new();
    let mut words = None;
    let until = tokio::time::Instant::now() + TRANSCRIPT_WAIT;
    let mut take = |ev: ServerEvent, read: &mut Vec<ServerEvent>| {
        if let ServerEvent::InputTranscript { transcript, .. } = &ev {
            let t = transcript.trim();
            if !t.is_empty() {
                words = Some(t.to_string());
            }
        }
        read.push(ev);
    };
    // What is already there (the first event at least) is always read.
    while let Ok(ev) = link.try_recv() {
        take(ev, &mut read);
    }
    while transcribed && words_missing(&read) {
        match tokio::time::timeout_at(until, link.recv()).await {
            Ok(Some(ev)) => take(ev, &mut read),
            // Lost, or no words in time: the turn starts with what came.
            Ok(None) | Err(_) => break,
        }
    }
    (words, read)
}

fn words_missing(read: &[ServerEvent]) -> bool {
    !read
        .iter()
        .any(|e| matches!(e, ServerEvent::InputTranscript { transcript, .. } if !transcript.trim().is_empty()))
}
