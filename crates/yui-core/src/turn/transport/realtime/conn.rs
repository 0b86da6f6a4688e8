//! One realtime session per character window: connect and set up (`setup.rs`: the session
//! built from current state at every connect, then the conversation so far as the seed, before
//! any turn can send); then route the server's events to the turn in flight (one at a time), play
//! output audio through the window's [`RealtimeAudioOut`] and handle barge-in (the user speaking
//! over a reply that plays: stop, `conversation.item.truncate` with the milliseconds heard).
//! Reconnects with push's backoff and exposes push's [`ConnState`].
//!
//! A malformed event is logged with its text and skipped. When the socket is lost the turn in
//! flight learns it at once (its event channel closes).

use super::setup::{connect, send, DetectionCell, Ws};
pub use super::setup::{DetectionHold, RealtimeConfig, SessionFn, Setup};
use super::wire::{self, ServerEvent, BYTES_PER_MS};
pub use crate::backend::realtime::url_with_model;
use crate::backend::realtime::TurnDetection;
use crate::realtime_audio::RealtimeAudioOut;
pub use crate::turn::transport::push::conn::ConnState;
use crate::turn::transport::push::conn::{retry_after, Refuse};
use base64::Engine as _;
use futures_util::StreamExt;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_tungstenite::tungstenite::Message;

enum Cmd {
    Send(Value),
    Register {
        events: mpsc::UnboundedSender<ServerEvent>,
        ack: oneshot::Sender<Result<(u64, Option<String>), String>>,
    },
    Unregister(u64),
    /// The user stopped the turn: stop the audio, cancel the response in flight.
    Cancel,
    /// The reply's audio was stopped outside a turn (its turn had ended; the user pressed
    /// push-to-talk or Escape): tell the server what was heard.
    StopAudio,
}

/// A running session. Dropping it (and every [`RealtimeLink`]) closes the socket.
pub struct RealtimeClient {
    cmd: mpsc::Sender<Cmd>,
    state: watch::Receiver<ConnState>,
    /// The microphone's turn detection, applied at every connect while held.
    detection: DetectionCell,
}

/// One turn's end of the session.
pub struct RealtimeLink {
    id: u64,
    events: mpsc::UnboundedReceiver<ServerEvent>,
    cmd: mpsc::Sender<Cmd>,
    seeded_turn: Option<String>,
    user_item: Option<String>,
}

impl RealtimeLink {
    /// A server-started response's user audio item (the last `speech_started` or `committed`
    /// before it), which that utterance's transcribed words name.
    pub fn user_item(&self) -> Option<&str> {
        self.user_item.as_deref()
    }
    /// Whether this connection's seed already ends with `turn_id`'s user words.
    pub fn seeded(&self, turn_id: &str) -> bool {
        self.seeded_turn.as_deref() == Some(turn_id)
    }
    /// The next event for this turn; `None` when the connection was lost.
    pub async fn recv(&mut self) -> Option<ServerEvent> {
        self.events.recv().await
    }
    /// The next event if one is there already.
    pub fn try_recv(&mut self) -> Result<ServerEvent, mpsc::error::TryRecvError> {
        self.events.try_recv()
    }
    /// Send a client event; `false` when the connection is gone.
    pub async fn send(&self, v: Value) -> bool {
        self.cmd.send(Cmd::Send(v)).await.is_ok()
    }
    /// Stop the audio and cancel the response in flight (the user stopped the turn).
    pub async fn cancel(&self) {
        let _ = self.cmd.send(Cmd::Cancel).await;
    }
}

/// What a session hands to whoever takes the turns the server starts
/// ([`RealtimeClient::spawn_with`]).
pub enum FromServer {
    /// A response the server started by itself, as a link of its own (see
    /// [`RealtimeLink::user_item`]).
    Started(RealtimeLink),
    /// The user's transcribed words for their audio item `item_id`, whenever they come (every
    /// `conversation.item.input_audio_transcription.completed` with an item and words): words
    /// that come after their turn started without them replace its placeholder.
    Words { item_id: String, text: String },
}

impl Drop for RealtimeLink {
    fn drop(&mut self) {
        let _ = self.cmd.try_send(Cmd::Unregister(self.id));
    }
}

const CLOSED: &str = "the realtime session is closed";

impl RealtimeClient {
    /// Start connecting (on the current tokio runtime) and keep the session up.
    pub fn spawn(cfg: RealtimeConfig, session: SessionFn) -> Self {
        Self::spawn_with(cfg, session, None)
    }

    /// [`RealtimeClient::spawn`], with the responses the server starts by itself (server voice
    /// activity, or a commit and `response.create` sent outside a turn) handed to `server_turns`
    /// as links of their own ([`FromServer::Started`]), instead of being dropped. A link is made
    /// at `response.created` with no turn running and gets that response's events from there
    /// on, led by the user's transcribed words if they came first
    /// (`conversation.item.input_audio_transcription.completed`). Every transcript with an item
    /// goes there too, whenever it comes ([`FromServer::Words`]).
    pub fn spawn_with(
        cfg: RealtimeConfig,
        session: SessionFn,
        server_turns: Option<mpsc::UnboundedSender<FromServer>>,
    ) -> Self {
        let (cmd_tx, cmd_rx) = mpsc::channel(256);
        let (state_tx, state_rx) = watch::channel(ConnState::Connecting);
        // Weak: the session still ends when the client and every link are dropped.
        let adopt = server_turns.map(|t| (t, cmd_tx.downgrade()));
        let detection = DetectionCell::default();
        let session = super::setup::with_detection(session, detection.clone());
        tokio::spawn(run(cfg, session, cmd_rx, state_tx, adopt));
        Self {
            cmd: cmd_tx,
            state: state_rx,
            detection,
        }
    }

    /// The microphone's turn detection (`null` for push-to-talk, the server's voice activity
    /// for hands-free): sent now as a `session.update`, and carried by every reconnect's
    /// `session.update` until the returned hold is dropped. `None` when the session is gone.
    pub async fn hold_turn_detection(&self, d: TurnDetection) -> Option<DetectionHold> {
        let held = super::setup::hold(&self.detection, d);
        let update = serde_json::json!({"type": "realtime", "audio": {"input": {"turn_detection": d.wire()}}});
        self.send(wire::session_update(update))
            .await
            .then_some(held)
    }

    pub fn state(&self) -> watch::Receiver<ConnState> {
        self.state.clone()
    }

    /// Wait (at most `wait`) for the session, then take the events of one turn. A connect that
    /// fails while the turn waits fails the turn at once with its problem, in plain words (a
    /// session already reconnecting gets its next attempt).
    pub(crate) async fn open_turn(&self, wait: Duration) -> Result<RealtimeLink, String> {
        let mut st = self.state.clone();
        let ready = async {
            if *st.borrow_and_update() == ConnState::Connected {
                return Ok(());
            }
            loop {
                st.changed().await.map_err(|_| CLOSED.to_string())?;
                match &*st.borrow_and_update() {
                    ConnState::Connected => return Ok(()),
                    ConnState::Reconnecting { error, .. } => return Err(error.clone()),
                    ConnState::Closed => return Err(CLOSED.to_string()),
                    ConnState::Connecting => {}
                }
            }
        };
        match tokio::time::timeout(wait, ready).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(match &*self.state.borrow() {
                    ConnState::Reconnecting { error, .. } => error.clone(),
                    _ => format!("no realtime session within {} s", wait.as_secs()),
                })
            }
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let (ack, ack_rx) = oneshot::channel();
        let reg = Cmd::Register { events: tx, ack };
        if self.cmd.send(reg).await.is_err() {
            return Err(CLOSED.into());
        }
        let (id, seeded_turn) = ack_rx.await.unwrap_or_else(|_| Err(CLOSED.into()))?;
        Ok(RealtimeLink {
            id,
            events: rx,
            cmd: self.cmd.clone(),
            seeded_turn,
            user_item: None,
        })
    }

    /// Microphone audio (pcm16 mono 24 kHz) as one `input_audio_buffer.append`; `false` when the
    /// session is gone or its queue is full (the frame is dropped, never waited for).
    pub fn append(&self, pcm16: &[u8]) -> bool {
        let b64 = base64::engine::general_purpose::STANDARD.encode(pcm16);
        self.cmd.try_send(Cmd::Send(wire::append(&b64))).is_ok()
    }

    /// End the user's utterance (push-to-talk, no server VAD): `input_audio_buffer.commit`.
    pub async fn commit(&self) -> bool {
        self.cmd.send(Cmd::Send(wire::commit())).await.is_ok()
    }

    /// Drop the audio appended since the last commit.
    pub async fn clear(&self) -> bool {
        self.cmd.send(Cmd::Send(wire::clear())).await.is_ok()
    }

    /// The reply's audio stops here (the stage stopped it after its turn ended): stop the
    /// player and, if some of it was not heard, `conversation.item.truncate` with the
    /// milliseconds heard (and `response.cancel` while a response runs).
    pub async fn stop_audio(&self) -> bool {
        self.cmd.send(Cmd::StopAudio).await.is_ok()
    }

    /// Send any client event (the doctor's probes, `response.create` after a commit).
    pub async fn send(&self, v: Value) -> bool {
        self.cmd.send(Cmd::Send(v)).await.is_ok()
    }
}

impl Refuse for Cmd {
    fn refuse(self, why: &str) {
        if let Cmd::Register { ack, .. } = self {
            let _ = ack.send(Err(why.to_string()));
        }
    }
}

async fn run(
    cfg: RealtimeConfig,
    session: SessionFn,
    mut cmd: mpsc::Receiver<Cmd>,
    state: watch::Sender<ConnState>,
    adopt: Option<Adopt>,
) {
    let mut attempt: u32 = 0;
    let mut next_id = 0;
    loop {
        let error = match connect(&cfg, &session).await {
            Ok((ws, seeded_turn)) => {
                attempt = 0;
                let _ = state.send(ConnState::Connected);
                tracing::info!(url = %cfg.url, "realtime: session ready");
                let mut serve = Serve::new(cfg.audio.clone(), adopt.clone(), next_id);
                serve.seeded_turn = seeded_turn;
                let lost = serve.run(ws, &mut cmd).await;
                next_id = serve.next_id;
                match lost {
                    None => {
                        let _ = state.send(ConnState::Closed);
                        return;
                    }
                    Some(e) => e,
                }
            }
            Err(e) => e,
        };
        if !retry_after("realtime", &cfg.url, &mut attempt, &error, &state, &mut cmd).await {
            return;
        }
    }
}

/// Where the server's own responses go, and the session's commands (for their links).
type Adopt = (mpsc::UnboundedSender<FromServer>, mpsc::WeakSender<Cmd>);

/// A live connection's routing state.
struct Serve {
    audio: Option<Arc<dyn RealtimeAudioOut>>,
    adopt: Option<Adopt>,
    turn: Option<(u64, mpsc::UnboundedSender<ServerEvent>)>,
    next_id: u64,
    /// The assistant audio item last received and how many bytes of it came.
    playing: Option<(String, u64)>,
    /// The audio item stopped last: its late deltas are neither played nor counted, so a later
    /// barge-in cannot truncate it again (at 0 ms, wiping what was heard).
    cut: Option<String>,
    /// A response runs (between `response.created` and `response.done`).
    responding: bool,
    /// The user's transcribed words that came with no turn running, for the response the
    /// server starts next (dropped when the user starts speaking again).
    words: Option<ServerEvent>,
    /// See [`Setup::seeded_turn`].
    seeded_turn: Option<String>,
    /// The user's audio item heard last (`speech_started`, `committed`): the one the response
    /// the server starts next answers.
    utterance: Option<String>,
}

impl Serve {
    fn new(audio: Option<Arc<dyn RealtimeAudioOut>>, adopt: Option<Adopt>, next_id: u64) -> Self {
        Self {
            audio,
            adopt,
            turn: None,
            next_id,
            playing: None,
            cut: None,
            responding: false,
            words: None,
            seeded_turn: None,
            utterance: None,
        }
    }

    /// Serve until the socket is lost (`Some(why)`) or the client is dropped (`None`).
    async fn run(&mut self, mut ws: Ws, cmd: &mut mpsc::Receiver<Cmd>) -> Option<String> {
        let broke = |e: String| Some(format!("the realtime connection broke: {e}"));
        loop {
            tokio::select! {
                msg = ws.next() => {
                    let text = match msg {
                        None | Some(Ok(Message::Close(_))) => return Some("the realtime server closed the connection".into()),
                        Some(Err(e)) => return broke(e.to_string()),
                        Some(Ok(Message::Text(t))) => t,
                        Some(Ok(_)) => continue,
                    };
                    let ev = match ServerEvent::parse(text.as_str()) {
                        Ok(e) => e,
                        Err(e) => {
                            tracing::warn!(error = %e, text = %text.as_str(), "realtime: malformed event skipped");
                            continue;
                        }
                    };
                    for out in self.event(ev) {
                        if let Err(e) = send(&mut ws, &out).await {
                            return broke(e);
                        }
                    }
                }
                c = cmd.recv() => match c {
                    None => {
                        let _ = ws.close(None).await;
                        return None;
                    }
                    Some(Cmd::Send(v)) => {
                        if v["type"] == "input_audio_buffer.clear" {
                            self.words = None; // push-to-talk: a new utterance
                        }
                        if let Err(e) = send(&mut ws, &v).await {
                            return broke(e);
                        }
                    }
                    Some(Cmd::Register { events, ack }) => {
                        let busy = self.turn.as_ref().is_some_and(|(_, t)| !t.is_closed());
                        if busy {
                            let _ = ack.send(Err("another turn is running on this realtime session".into()));
                        } else {
                            self.next_id += 1;
                            self.turn = Some((self.next_id, events));
                            let _ = ack.send(Ok((self.next_id, self.seeded_turn.clone())));
                        }
                    }
                    Some(Cmd::Unregister(id)) => {
                        if self.turn.as_ref().is_some_and(|(t, _)| *t == id) {
                            self.turn = None;
                        }
                    }
                    Some(Cmd::StopAudio) => {
                        for out in self.barge_in() {
                            if let Err(e) = send(&mut ws, &out).await {
                                return broke(e);
                            }
                        }
                    }
                    Some(Cmd::Cancel) => {
                        // A reply still being heard is cut where the user stopped hearing it.
                        for out in self.barge_in() {
                            if let Err(e) = send(&mut ws, &out).await {
                                return broke(e);
                            }
                        }
                        if let Some(a) = &self.audio {
                            a.stop();
                        }
                        if let Some((id, _)) = self.playing.take() {
                            self.cut = Some(id);
                        }
                        if self.responding {
                            self.responding = false;
                            if let Err(e) = send(&mut ws, &wire::response_cancel()).await {
                                return broke(e);
                            }
                        }
                    }
                },
            }
        }
    }

    /// Handle one server event: audio to the player, barge-in, the rest to the turn. Returns
    /// the client events to send.
    fn event(&mut self, ev: ServerEvent) -> Vec<Value> {
        match ev {
            ServerEvent::AudioDelta { item_id, delta } => {
                self.audio_delta(item_id, &delta);
                Vec::new()
            }
            ServerEvent::SpeechStarted { item_id } => {
                self.words = None; // a new utterance: earlier words are not its
                self.utterance = item_id;
                self.barge_in()
            }
            ServerEvent::Committed { item_id } => {
                self.utterance = item_id.or(self.utterance.take());
                Vec::new()
            }
            ServerEvent::Unknown(kind) => {
                tracing::info!(%kind, "realtime: unknown event ignored");
                Vec::new()
            }
            ServerEvent::Other(_) | ServerEvent::SessionCreated | ServerEvent::SessionUpdated => {
                Vec::new()
            }
            // Our own cancel raced the server's (it cancels on speech by itself): not the turn's.
            ServerEvent::Error { code: Some(c), .. } if c == "response_cancel_not_active" => {
                Vec::new()
            }
            ev => {
                match &ev {
                    ServerEvent::ResponseCreated { .. } => self.responding = true,
                    ServerEvent::ResponseDone { .. } => {
                        self.responding = false;
                        if let Some(a) = &self.audio {
                            a.finish();
                        }
                    }
                    ServerEvent::Error { message, .. } => {
                        tracing::warn!(%message, "realtime: server error")
                    }
                    ServerEvent::InputTranscript {
                        item_id: Some(item_id),
                        transcript,
                    } if !transcript.trim().is_empty() => {
                        if let Some((to, _)) = &self.adopt {
                            let (item_id, text) = (item_id.clone(), transcript.trim().to_string());
                            let _ = to.send(FromServer::Words { item_id, text });
                        }
                    }
                    _ => {}
                }
                self.forward(ev);
                Vec::new()
            }
        }
    }

    fn forward(&mut self, ev: ServerEvent) {
        if self.turn.as_ref().is_none_or(|(_, t)| t.is_closed()) {
            self.turn = None;
            match ev {
                // Kept for the response it belongs to (the server may transcribe before or
                // after it starts answering); a turn is only made for a response.
                ServerEvent::InputTranscript { .. } if self.adopt.is_some() => {
                    self.words = Some(ev);
                    return;
                }
                ServerEvent::ResponseCreated { .. } => {
                    self.adopt_turn();
                    if let (Some(w), Some((_, t))) = (self.words.take(), &self.turn) {
                        let _ = t.send(w);
                    }
                }
                _ => {}
            }
        }
        match &self.turn {
            Some((_, t)) => {
                let _ = t.send(ev);
            }
            None => tracing::debug!(event = ?ev, "realtime: event for no running turn ignored"),
        }
    }

    /// The server started a response by itself: a link of its own for whoever takes such turns.
    fn adopt_turn(&mut self) {
        let Some((to, cmd)) = &self.adopt else { return };
        let Some(cmd) = cmd.upgrade() else { return };
        self.next_id += 1;
        let (tx, rx) = mpsc::unbounded_channel();
        let link = RealtimeLink {
            id: self.next_id,
            events: rx,
            cmd,
            // The server started it from the microphone: no seed holds its words.
            seeded_turn: None,
            user_item: self.utterance.take(),
        };
        if to.send(FromServer::Started(link)).is_ok() {
            self.turn = Some((self.next_id, tx));
        }
    }

    fn audio_delta(&mut self, item_id: Option<String>, delta: &str) {
        let Some(audio) = &self.audio else { return };
        let pcm = match base64::engine::general_purpose::STANDARD.decode(delta) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(error = %e, "realtime: audio that is not base64 skipped");
                return;
            }
        };
        let id = item_id.unwrap_or_default();
        if self.cut.as_deref() == Some(id.as_str()) {
            return; // the rest of a reply already stopped
        }
        audio.on_audio(&id, &pcm);
        match &mut self.playing {
            Some((p, n)) if *p == id => *n += pcm.len() as u64,
            _ => self.playing = Some((id, pcm.len() as u64)),
        }
    }

    /// The user started speaking: if a reply is still being heard, stop it and cut the item to
    /// what was heard.
    fn barge_in(&mut self) -> Vec<Value> {
        let Some(audio) = &self.audio else {
            return Vec::new();
        };
        let Some((item_id, bytes)) = self.playing.take() else {
            return Vec::new();
        };
        self.cut = Some(item_id.clone());
        let total_ms = bytes / BYTES_PER_MS;
        let played_ms = audio.played_ms(&item_id).min(total_ms);
        if played_ms >= total_ms && !self.responding {
            return Vec::new(); // the reply was heard whole
        }
        audio.stop();
        let mut out = vec![wire::truncate(&item_id, played_ms)];
        if self.responding {
            self.responding = false;
            out.push(wire::response_cancel());
        }
        self.forward(ServerEvent::Interrupted {
            item_id,
            played_ms,
            total_ms,
        });
        out
    }
}
