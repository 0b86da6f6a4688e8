//! A response the realtime server started by itself (the user spoke: server voice activity or
//! a push-to-talk commit), as the stage hands it to the turn that plays it
//! (`TurnDeps::realtime_started`).

use super::conn::RealtimeLink;
use super::wire::ServerEvent;
use std::sync::{Arc, Mutex};

/// A response the server started by itself, handed to the turn that plays it: its link and the
/// events already read from it (the stage reads up to the user's transcribed words first). Taken
/// once; a clone shares it.
#[derive(Clone, Default)]
pub struct ServerStarted(Arc<Mutex<Option<Started>>>);

/// A server-started response's link and the events already read from it.
type Started = (RealtimeLink, Vec<ServerEvent>);

impl ServerStarted {
    pub fn new(link: RealtimeLink, read: Vec<ServerEvent>) -> Self {
        Self(Arc::new(Mutex::new(Some((link, read)))))
    }
    pub(crate) fn take(&self) -> Option<Started> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl std::fmt::Debug for ServerStarted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerStarted")
    }
}
