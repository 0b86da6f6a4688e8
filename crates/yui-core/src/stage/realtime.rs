//! Each seated character's realtime session, when the backend is realtime: one per character
//! window (not the phone's, which declares other tools), made when the window opens or its first
//! turn starts, kept while the URL and window stay, its state changes sent as
//! [`StageEvent::Connection`] (the quick controls show it as push's). Text mode until the voice
//! gives the stage a player ([`RealtimeAudioOut`]) and the microphone's appends.

use super::{Inner, StageEvent};
use crate::backend::{Backend, Transport};
use crate::turn::transport::realtime::{self, RealtimeClient, RealtimeConfig};
use crate::turn::Timeouts;
use crate::window::WindowKind;
use std::sync::Arc;

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

/// The seat's realtime session for `window` when the backend is realtime: the one it has for
/// this URL and window, or a new one.
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
    let cfg = config(backend, timeouts)?;
    let mut seats = inner.seats();
    let seat = seats.entry(preset_id.to_string()).or_default();
    if let Some((url, w, client)) = &seat.realtime {
        if *url == cfg.url && *w == window {
            return Some(client.clone());
        }
    }
    let url = cfg.url.clone();
    let session = realtime::session_fn(
        inner.store.clone(),
        inner.clock.clone(),
        preset_id.to_string(),
        window,
        cfg.audio.is_some(),
    );
    let client = Arc::new(RealtimeClient::spawn(cfg, session));
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
    seat.realtime = Some((url, window, client.clone()));
    Some(client)
}
