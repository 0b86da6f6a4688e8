//! One connect's set-up: the socket opened (`Authorization: Bearer` when a key is set),
//! `session.created` awaited, `session.update` sent (built from current state by the
//! [`SessionFn`]) and `session.updated` awaited, then the conversation so far sent as the seed.
//! The turn detection the microphone holds ([`DetectionHold`]) overrides `yui.realtime`'s in
//! every connect's `session.update` while it is held.

use super::wire::{self, ServerEvent};
use crate::backend::realtime::TurnDetection;
use crate::realtime_audio::RealtimeAudioOut;
use crate::turn::transport::push::conn::open_socket;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

/// Where and how to connect.
#[derive(Clone)]
pub struct RealtimeConfig {
    /// `ws(s)://…/realtime?model=M` (see [`super::url_with_model`]).
    pub url: String,
    pub api_key: Option<String>,
    /// TCP + WebSocket handshake.
    pub connect: Duration,
    /// `session.created`, then `session.update` → `session.updated`: the set-up's deadline
    /// ([`setup_deadline`]).
    pub ready: Duration,
    /// Plays the reply's audio; `None`: text mode.
    pub audio: Option<Arc<dyn RealtimeAudioOut>>,
}

/// What one connect sets up, built from current state: the session, then the conversation so
/// far.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// The `session` object of `session.update`.
    pub session: Value,
    /// `conversation.item.create` events sent right after `session.updated`, in order: the
    /// history a new server-side conversation starts from (empty: nothing is sent).
    pub seed: Vec<Value>,
    /// The turn whose user words are the seed's last item: a turn that stored them while this
    /// connection was being set up finds them there and does not send them again.
    pub seeded_turn: Option<String>,
}

impl Setup {
    /// A session with nothing to seed.
    pub fn new(session: Value) -> Self {
        Self {
            session,
            ..Self::default()
        }
    }
}

/// How long a connect's set-up may take (`session.created` to `session.updated`): the stall
/// setting, since a server that answers nothing for that long mid-reply is given up on too, and
/// at least [`SETUP_FLOOR`]. Not the headers wait (2 min by default, for a model still loading):
/// a realtime server confirms a session at once or never, and a turn must not hang on one that
/// never does.
pub fn setup_deadline(t: &crate::timeouts::Timeouts) -> Duration {
    t.stall.max(SETUP_FLOOR)
}

/// The shortest set-up deadline: a stall set shorter than this (a quick test of a stalled reply)
/// still leaves a loaded machine time for the handshake's three messages.
pub const SETUP_FLOOR: Duration = Duration::from_secs(2);

/// The sentence a set-up past its deadline ends with (the turn's, and the session's state).
pub fn not_confirmed(deadline: Duration) -> String {
    let secs = if deadline.subsec_millis() == 0 {
        deadline.as_secs().to_string()
    } else {
        format!("{:.1}", deadline.as_secs_f64())
    };
    format!("the realtime server did not confirm the session in {secs} s")
}

/// Builds each connect's [`Setup`] from current state.
pub type SessionFn = Arc<dyn Fn() -> Result<Setup, crate::CoreError> + Send + Sync>;

/// The turn detection the microphone asked for last, while it holds it.
#[derive(Debug, Default)]
pub(super) struct Detection {
    /// Which hold set it: a hold released late leaves a newer one alone.
    hold: u64,
    now: Option<TurnDetection>,
}

pub(super) type DetectionCell = Arc<Mutex<Detection>>;

fn lock(cell: &Mutex<Detection>) -> std::sync::MutexGuard<'_, Detection> {
    cell.lock().unwrap_or_else(|p| p.into_inner())
}

/// Hold `d` as the session's turn detection; released when the hold is dropped.
pub(super) fn hold(cell: &DetectionCell, d: TurnDetection) -> DetectionHold {
    let mut c = lock(cell);
    c.hold += 1;
    c.now = Some(d);
    DetectionHold {
        cell: Arc::downgrade(cell),
        hold: c.hold,
    }
}

/// The microphone's turn detection, held while it listens
/// ([`super::RealtimeClient::hold_turn_detection`]): every connect's `session.update` carries it
/// instead of `yui.realtime`'s, so a reconnect keeps the microphone working. Dropping it gives
/// the next connect `yui.realtime`'s again (a newer hold stays).
#[derive(Debug)]
pub struct DetectionHold {
    cell: Weak<Mutex<Detection>>,
    hold: u64,
}

impl Drop for DetectionHold {
    fn drop(&mut self) {
        if let Some(cell) = self.cell.upgrade() {
            let mut c = lock(&cell);
            if c.hold == self.hold {
                c.now = None;
            }
        }
    }
}

/// `session` with the held turn detection (if any) written over what it builds.
pub(super) fn with_detection(session: SessionFn, held: DetectionCell) -> SessionFn {
    Arc::new(move || {
        let mut setup = session()?;
        let now = lock(&held).now;
        let input = setup.session.pointer_mut("/audio/input");
        if let (Some(d), Some(input)) = (now, input.and_then(Value::as_object_mut)) {
            input.insert("turn_detection".into(), d.wire());
        }
        Ok(setup)
    })
}

pub(super) use crate::turn::transport::push::conn::Ws;

/// Connect and set the session up: `session.update`, `session.updated`, then the seed. Returns
/// the socket and the turn whose words the seed ends with.
pub(super) async fn connect(
    cfg: &RealtimeConfig,
    session: &SessionFn,
) -> Result<(Ws, Option<String>), String> {
    let url = &cfg.url;
    let mut ws = open_socket("realtime", url, cfg.api_key.as_deref(), cfg.connect).await?;
    let handshake = async {
        wait_for(&mut ws, "session.created", |e| {
            matches!(e, ServerEvent::SessionCreated)
        })
        .await?;
        let setup = session().map_err(|e| e.message)?;
        send(&mut ws, &wire::session_update(setup.session))
            .await
            .map_err(|e| {
                format!("the realtime server closed the connection at session.update: {e}")
            })?;
        wait_for(&mut ws, "session.updated", |e| {
            matches!(e, ServerEvent::SessionUpdated)
        })
        .await?;
        // The conversation so far, once per connection: the server keeps it from here on. Not
        // waited for item by item: the server applies events in order, before any turn's.
        for item in &setup.seed {
            send(&mut ws, item).await.map_err(|e| {
                format!("the realtime connection broke while the conversation so far was sent: {e}")
            })?;
        }
        Ok(setup.seeded_turn)
    };
    match tokio::time::timeout(cfg.ready, handshake).await {
        Err(_) => {
            tracing::warn!(%url, deadline_ms = cfg.ready.as_millis() as u64, "realtime: no session.updated in time");
            Err(not_confirmed(cfg.ready))
        }
        Ok(r) => r.map(|seeded| (ws, seeded)),
    }
}

/// Read until `want`; an `error` event first is the session refused, in the server's words.
async fn wait_for(
    ws: &mut Ws,
    name: &str,
    want: impl Fn(&ServerEvent) -> bool,
) -> Result<(), String> {
    loop {
        match ws.next().await {
            None | Some(Ok(Message::Close(_))) => {
                return Err(format!(
                    "the realtime server closed the connection before {name}"
                ))
            }
            Some(Err(e)) => {
                return Err(format!("the realtime connection broke before {name}: {e}"))
            }
            Some(Ok(Message::Text(t))) => match ServerEvent::parse(t.as_str()) {
                Ok(e) if want(&e) => return Ok(()),
                Ok(ServerEvent::Error { message, .. }) => {
                    return Err(format!(
                        "the realtime server refused the session: {message}"
                    ))
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, text = %t.as_str(), "realtime: malformed event skipped")
                }
            },
            Some(Ok(_)) => {}
        }
    }
}

pub(super) async fn send(ws: &mut Ws, v: &Value) -> Result<(), String> {
    ws.send(Message::text(v.to_string()))
        .await
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn built(cell: &DetectionCell) -> Value {
        let base: SessionFn = Arc::new(|| {
            Ok(Setup::new(
                json!({"audio": {"input": {"turn_detection": null}}}),
            ))
        });
        with_detection(base, cell.clone())().unwrap().session["audio"]["input"]["turn_detection"]
            .clone()
    }

    #[test]
    fn a_held_turn_detection_is_in_every_setup_until_its_hold_is_dropped() {
        let cell = DetectionCell::default();
        assert_eq!(built(&cell), Value::Null, "yui.realtime's");
        let first = hold(&cell, TurnDetection::ServerVad);
        assert_eq!(built(&cell), json!({"type": "server_vad"}));
        // A newer hold wins, and the older one released late leaves it alone.
        let second = hold(&cell, TurnDetection::SemanticVad);
        drop(first);
        assert_eq!(built(&cell), json!({"type": "semantic_vad"}));
        drop(second);
        assert_eq!(built(&cell), Value::Null);
    }
}
