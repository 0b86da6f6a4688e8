//! Each seated character window's standing link to its backend (push's connection, realtime's
//! session), made by `turn::transport::LinkConfig` from the backend and the window and kept
//! while its URL, its window and voice output stay; its state changes go out as
//! [`StageEvent::Connection`](super::StageEvent::Connection) (the quick controls show them). A
//! session's own parts live beside it: its reply audio (`stage/realtime_voice.rs`) and the turns
//! it starts when the user speaks (`stage/realtime.rs`).

use super::realtime_voice::SeatAudio;
use super::Inner;
use crate::backend::Backend;
use crate::turn::transport::realtime::RealtimeAudioOut;
use crate::turn::transport::{LinkConfig, LinkParts};
use crate::turn::{SeatLink, Timeouts};
use crate::window::WindowKind;
use std::sync::Arc;
use tokio::sync::mpsc;

/// A seat's link, with what it was made for.
pub(super) struct Linked {
    pub url: String,
    pub window: WindowKind,
    /// Made with voice output on (a session's replies heard).
    pub voice: bool,
    pub link: SeatLink,
    /// A session's reply audio (`None`: text mode, or not a session).
    pub audio: Option<Arc<SeatAudio>>,
}

/// The seat's link for `window` on `backend`: the one it has for this URL, window and voice
/// output, or a new one. [`SeatLink::None`] on the request transports and for a phone window;
/// a character window whose backend keeps no link any more drops the one it had.
pub(super) fn ensure(
    inner: &Arc<Inner>,
    preset_id: &str,
    window: WindowKind,
    backend: &Backend,
    timeouts: &Timeouts,
) -> SeatLink {
    let Some(cfg) = LinkConfig::of(backend, timeouts, window) else {
        if window != WindowKind::Phone {
            if let Some(seat) = inner.seats().get_mut(preset_id) {
                seat.link = None;
            }
        }
        return SeatLink::None;
    };
    let voice = cfg.is_session() && super::realtime::voice_on(inner);
    if let Some(l) = inner.seats().get(preset_id).and_then(|s| s.link.as_ref()) {
        if l.url == cfg.url() && l.window == window && l.voice == voice {
            return l.link.clone();
        }
    }
    let audio = if voice {
        super::realtime_voice::seat_audio(inner, preset_id)
    } else {
        None
    };
    let (server_turns, turns) = match cfg.is_session() {
        true => {
            let (tx, rx) = mpsc::unbounded_channel();
            (Some(tx), Some(rx))
        }
        false => (None, None),
    };
    let url = cfg.url().to_string();
    let link = cfg.start(LinkParts {
        store: inner.store.clone(),
        clock: inner.clock.clone(),
        preset_id: preset_id.to_string(),
        window,
        audio: audio.clone().map(|a| a as Arc<dyn RealtimeAudioOut>),
        server_turns,
    });
    if let Some(state) = link.state() {
        super::tell_connection(inner, preset_id, state);
    }
    if let Some(rx) = turns {
        let weak = Arc::downgrade(inner);
        tokio::spawn(super::realtime::server_turns(
            weak,
            preset_id.to_string(),
            window,
            rx,
        ));
    }
    let mut seats = inner.seats();
    seats.entry(preset_id.to_string()).or_default().link = Some(Linked {
        url,
        window,
        voice,
        link: link.clone(),
        audio,
    });
    link
}
