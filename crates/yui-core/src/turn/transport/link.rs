//! A window's standing link to its backend, made in one place from the backend and the window:
//! push's connection or realtime's session (the request transports keep none). The stage keeps
//! one per seated character (`stage/link.rs`) and forwards its one state stream.

use super::push::{self, ConnState, PushClient, PushConfig};
use super::realtime::{self, FromServer, RealtimeAudioOut, RealtimeClient, RealtimeConfig};
use crate::backend::{Backend, Transport};
use crate::clock::SharedClock;
use crate::store::Store;
use crate::turn::request::SeatLink;
use crate::turn::Timeouts;
use crate::window::WindowKind;
use std::sync::Arc;
use tokio::sync::{mpsc, watch};

/// The link a backend keeps for a window, before it is started.
pub(crate) enum LinkConfig {
    Push(PushConfig),
    Realtime(RealtimeConfig),
}

/// What a started link takes from its seat.
pub(crate) struct LinkParts {
    pub store: Store,
    pub clock: SharedClock,
    pub preset_id: String,
    pub window: WindowKind,
    /// Where a session's reply audio plays (`None`: text mode).
    pub audio: Option<Arc<dyn RealtimeAudioOut>>,
    /// Where a session sends the responses it starts by itself (the user spoke).
    pub server_turns: Option<mpsc::UnboundedSender<FromServer>>,
}

impl LinkConfig {
    /// The link `backend` keeps for `window`: none for the request transports, for a backend
    /// without the link's URL, and for a phone window (it declares other tools than the
    /// character's window, so it never shares the seat's link).
    pub(crate) fn of(backend: &Backend, timeouts: &Timeouts, window: WindowKind) -> Option<Self> {
        if window == WindowKind::Phone {
            return None;
        }
        match backend.transport {
            Transport::Push => push::config_for(backend, timeouts).map(Self::Push),
            Transport::Realtime => realtime::config_for(backend, timeouts).map(Self::Realtime),
            Transport::ChatCompletions | Transport::Responses => None,
        }
    }

    /// Where it connects.
    pub(crate) fn url(&self) -> &str {
        match self {
            Self::Push(c) => &c.url,
            Self::Realtime(c) => &c.url,
        }
    }

    /// A voice session: its replies can be heard, and it starts turns by itself when the user
    /// speaks.
    pub(crate) fn is_session(&self) -> bool {
        matches!(self, Self::Realtime(_))
    }

    /// Start it: it connects, and reconnects, by itself until dropped.
    pub(crate) fn start(self, parts: LinkParts) -> SeatLink {
        match self {
            Self::Push(cfg) => {
                let hello = push::hello_fn(parts.store, parts.preset_id, parts.window);
                SeatLink::Push(Arc::new(PushClient::spawn(cfg, hello)))
            }
            Self::Realtime(mut cfg) => {
                let heard = parts.audio.is_some();
                cfg.audio = parts.audio;
                let session = realtime::session_fn(
                    parts.store,
                    parts.clock,
                    parts.preset_id,
                    parts.window,
                    heard,
                );
                SeatLink::Realtime(Arc::new(RealtimeClient::spawn_with(
                    cfg,
                    session,
                    parts.server_turns,
                )))
            }
        }
    }
}

impl SeatLink {
    /// The link's connection state, as it changes (`None` when there is no link).
    pub fn state(&self) -> Option<watch::Receiver<ConnState>> {
        match self {
            SeatLink::None => None,
            SeatLink::Push(c) => Some(c.state()),
            SeatLink::Realtime(c) => Some(c.state()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BackendConfig;

    fn backend(transport: Transport, push: Option<&str>, realtime: Option<&str>) -> Backend {
        let cfg = BackendConfig {
            transport,
            push_url: push.map(str::to_string),
            realtime_url: realtime.map(str::to_string),
            ..BackendConfig::default()
        };
        Backend::from_config(&cfg, None)
    }

    #[test]
    fn each_transport_keeps_its_own_link_and_the_phone_none() {
        let t = Timeouts::default();
        let push = backend(Transport::Push, Some("ws://127.0.0.1:9/push"), None);
        let cfg = LinkConfig::of(&push, &t, WindowKind::Main).expect("push keeps a connection");
        assert_eq!(cfg.url(), "ws://127.0.0.1:9/push");
        assert!(!cfg.is_session());
        assert!(LinkConfig::of(&push, &t, WindowKind::Phone).is_none());
        assert!(
            LinkConfig::of(&backend(Transport::Push, None, None), &t, WindowKind::Pet).is_none()
        );

        let rt = backend(
            Transport::Realtime,
            None,
            Some("ws://127.0.0.1:9/v1/realtime"),
        );
        let cfg = LinkConfig::of(&rt, &t, WindowKind::Pet).expect("realtime keeps a session");
        assert!(
            cfg.url().starts_with("ws://127.0.0.1:9/v1/realtime"),
            "{}",
            cfg.url()
        );
        assert!(cfg.is_session());
        assert!(LinkConfig::of(&rt, &t, WindowKind::Phone).is_none());

        for request in [Transport::ChatCompletions, Transport::Responses] {
            let b = backend(request, Some("ws://x"), Some("ws://y"));
            assert!(
                LinkConfig::of(&b, &t, WindowKind::Main).is_none(),
                "{request:?}"
            );
        }
        assert!(SeatLink::None.state().is_none());
    }
}
