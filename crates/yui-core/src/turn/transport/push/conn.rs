//! One push connection per character window: connect, `hello` → `welcome`, answer pings, route
//! each server frame to the turn it names, and reconnect with exponential backoff and jitter
//! (capped at 30 s), sending a fresh `hello` (built from current state) on every connect. The
//! state is watched by the window (connected / reconnecting / error, in plain words).
//!
//! A malformed frame is logged with its text and skipped. When the socket is lost every turn in
//! flight learns it at once (its frame channel closes).

use super::wire::{ClientFrame, ServerFrame, PROTOCOL};
use futures_util::{SinkExt, StreamExt};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

/// The longest wait between reconnects.
pub const BACKOFF_CAP: Duration = Duration::from_secs(30);
const BACKOFF_BASE: Duration = Duration::from_millis(500);

/// Where and how to connect.
#[derive(Debug, Clone)]
pub struct PushConfig {
    pub url: String,
    pub api_key: Option<String>,
    /// TCP + WebSocket handshake.
    pub connect: Duration,
    /// `hello` → `welcome`.
    pub welcome: Duration,
}

/// Builds the `hello` of each connect from current state (open presets, vocabulary, tools).
pub type HelloFn = Arc<dyn Fn() -> Result<ClientFrame, crate::CoreError> + Send + Sync>;

/// The connection's state, as the quick controls show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ConnState {
    Connecting,
    Connected,
    Reconnecting {
        attempt: u32,
        retry_in_ms: u64,
        /// What went wrong, in plain words.
        error: String,
    },
    Closed,
}

enum Cmd {
    Send(ClientFrame),
    Register {
        turn_id: String,
        frames: mpsc::UnboundedSender<ServerFrame>,
        ack: oneshot::Sender<Result<(), String>>,
    },
    Unregister(String),
}

/// A running connection. Dropping it (and every [`TurnLink`]) closes the socket once the frames
/// already handed over are sent (a last `cancel` still goes out).
pub struct PushClient {
    cmd: mpsc::Sender<Cmd>,
    state: watch::Receiver<ConnState>,
}

/// One turn's end of the connection.
pub struct TurnLink {
    turn_id: String,
    frames: mpsc::UnboundedReceiver<ServerFrame>,
    cmd: mpsc::Sender<Cmd>,
}

impl TurnLink {
    /// The next frame of this turn; `None` when the connection was lost.
    pub async fn recv(&mut self) -> Option<ServerFrame> {
        self.frames.recv().await
    }
    /// Send a frame; `false` when the connection is gone.
    pub async fn send(&self, f: ClientFrame) -> bool {
        self.cmd.send(Cmd::Send(f)).await.is_ok()
    }
}

impl Drop for TurnLink {
    fn drop(&mut self) {
        let _ = self
            .cmd
            .try_send(Cmd::Unregister(std::mem::take(&mut self.turn_id)));
    }
}

impl PushClient {
    /// Start connecting (on the current tokio runtime) and keep the connection up.
    pub fn spawn(cfg: PushConfig, hello: HelloFn) -> Self {
        let (cmd_tx, cmd_rx) = mpsc::channel(64);
        let (state_tx, state_rx) = watch::channel(ConnState::Connecting);
        tokio::spawn(run(cfg, hello, cmd_rx, state_tx));
        Self {
            cmd: cmd_tx,
            state: state_rx,
        }
    }

    pub fn state(&self) -> watch::Receiver<ConnState> {
        self.state.clone()
    }

    /// Wait (at most `wait`) for the connection, then take this turn's frames. The error is the
    /// connection's last problem, in plain words.
    pub(crate) async fn open_turn(
        &self,
        turn_id: &str,
        wait: Duration,
    ) -> Result<TurnLink, String> {
        let mut st = self.state.clone();
        let connected = tokio::time::timeout(wait, st.wait_for(|s| *s == ConnState::Connected));
        match connected.await {
            Ok(Ok(_)) => {}
            Ok(Err(_)) => return Err("the push connection is closed".into()),
            Err(_) => {
                return Err(match &*self.state.borrow() {
                    ConnState::Reconnecting { error, .. } => error.clone(),
                    _ => format!("no push connection within {} s", wait.as_secs()),
                })
            }
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let (ack_tx, ack_rx) = oneshot::channel();
        let reg = Cmd::Register {
            turn_id: turn_id.to_string(),
            frames: tx,
            ack: ack_tx,
        };
        if self.cmd.send(reg).await.is_err() {
            return Err("the push connection is closed".into());
        }
        ack_rx
            .await
            .unwrap_or_else(|_| Err("the push connection is closed".into()))?;
        Ok(TurnLink {
            turn_id: turn_id.to_string(),
            frames: rx,
            cmd: self.cmd.clone(),
        })
    }
}

/// The wait before reconnect `attempt` (1-based): 0.5 s doubling, capped, ±20 % jitter.
pub fn backoff(attempt: u32, jitter_seed: u64) -> Duration {
    let base = BACKOFF_BASE.saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    let base = base.min(BACKOFF_CAP);
    // A factor in [0.8, 1.2] from the seed.
    let f = 0.8 + (jitter_seed % 401) as f64 / 1000.0;
    base.mul_f64(f).min(BACKOFF_CAP)
}

fn jitter_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    h.finish()
}

/// A connection task's command, as the wait between attempts answers it.
pub(crate) trait Refuse {
    /// Answer a turn that asks to register while there is no connection: `why`.
    fn refuse(self, why: &str);
}

impl Refuse for Cmd {
    fn refuse(self, why: &str) {
        if let Cmd::Register { ack, .. } = self {
            let _ = ack.send(Err(why.to_string()));
        }
    }
}

/// Between two connection attempts (push's and the realtime session's): count the attempt, say
/// so (the log and the state), then wait out the backoff while the commands that arrive are
/// refused with `error` (a turn that asks is told what is wrong). False when the client is gone
/// (its command channel closed, the state set to closed): the connection's task ends.
pub(crate) async fn retry_after<C: Refuse>(
    what: &str,
    url: &str,
    attempt: &mut u32,
    error: &str,
    state: &watch::Sender<ConnState>,
    cmd: &mut mpsc::Receiver<C>,
) -> bool {
    *attempt = attempt.saturating_add(1);
    let wait = backoff(*attempt, jitter_seed());
    let wait_ms = wait.as_millis() as u64;
    tracing::warn!(%url, %error, attempt = *attempt, wait_ms, "{what}: reconnecting");
    let _ = state.send(ConnState::Reconnecting {
        attempt: *attempt,
        retry_in_ms: wait_ms,
        error: error.to_string(),
    });
    let sleep = tokio::time::sleep(wait);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            _ = &mut sleep => return true,
            c = cmd.recv() => match c {
                None => {
                    let _ = state.send(ConnState::Closed);
                    return false;
                }
                Some(c) => c.refuse(error),
            },
        }
    }
}

pub(crate) type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Why a live connection ended.
enum Ended {
    Lost(String),
    Shutdown,
}

async fn run(
    cfg: PushConfig,
    hello: HelloFn,
    mut cmd: mpsc::Receiver<Cmd>,
    state: watch::Sender<ConnState>,
) {
    let mut attempt: u32 = 0;
    loop {
        let error = match connect(&cfg, &hello).await {
            Ok(ws) => {
                attempt = 0;
                let _ = state.send(ConnState::Connected);
                tracing::info!(url = %cfg.url, "push: connected");
                match serve(ws, &mut cmd).await {
                    Ended::Shutdown => {
                        let _ = state.send(ConnState::Closed);
                        return;
                    }
                    Ended::Lost(e) => e,
                }
            }
            Err(e) => e,
        };
        if !retry_after("push", &cfg.url, &mut attempt, &error, &state, &mut cmd).await {
            return;
        }
    }
}

/// Open a WebSocket to `url` (`Authorization: Bearer` when a key is set) within `within`; the
/// errors name the `what` server ("push", "realtime") in plain words. Push's and realtime's
/// connects both start here.
pub(crate) async fn open_socket(
    what: &str,
    url: &str,
    api_key: Option<&str>,
    within: std::time::Duration,
) -> Result<Ws, String> {
    let mut req = url
        .into_client_request()
        .map_err(|e| format!("the {what} URL {url} is not valid: {e}"))?;
    if let Some(k) = api_key.filter(|k| !k.is_empty()) {
        if let Ok(v) = format!("Bearer {k}").parse() {
            req.headers_mut().insert("authorization", v);
        }
    }
    // No Nagle: our frames are small and each one is waited for (a pong, a tool result, an
    // append); with Nagle a frame could wait for the ACK of the one before (up to the peer's
    // delayed-ACK 40 ms).
    let connect = tokio_tungstenite::connect_async_with_config(req, None, true);
    match tokio::time::timeout(within, connect).await {
        Err(_) => Err(format!(
            "the {what} server at {url} did not answer within {} s",
            within.as_secs()
        )),
        Ok(Err(e)) => Err(format!("I can't reach the {what} server at {url}: {e}")),
        Ok(Ok((ws, _))) => Ok(ws),
    }
}

async fn connect(cfg: &PushConfig, hello: &HelloFn) -> Result<Ws, String> {
    let mut ws = open_socket("push", &cfg.url, cfg.api_key.as_deref(), cfg.connect).await?;
    let hello = hello().map_err(|e| e.message)?;
    send(&mut ws, &hello)
        .await
        .map_err(|e| format!("the push server closed the connection at hello: {e}"))?;
    let welcome = async {
        loop {
            match ws.next().await {
                None => {
                    return Err("the push server closed the connection before welcome".to_string())
                }
                Some(Err(e)) => {
                    return Err(format!("the push connection broke before welcome: {e}"))
                }
                Some(Ok(Message::Text(t))) => match ServerFrame::parse(t.as_str()) {
                    Ok(ServerFrame::Welcome { protocol }) => return Ok(protocol),
                    Ok(ServerFrame::Ping) => {
                        let _ = send(&mut ws, &ClientFrame::Pong).await;
                    }
                    Ok(other) => {
                        tracing::warn!(frame = ?other, "push: frame before welcome ignored")
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, text = %t.as_str(), "push: malformed frame skipped")
                    }
                },
                Some(Ok(Message::Close(_))) => {
                    return Err("the push server closed the connection before welcome".to_string())
                }
                Some(Ok(_)) => {}
            }
        }
    };
    let protocol = match tokio::time::timeout(cfg.welcome, welcome).await {
        Err(_) => {
            return Err(format!(
                "the push server sent no welcome within {} s",
                cfg.welcome.as_secs()
            ))
        }
        Ok(r) => r?,
    };
    if protocol != PROTOCOL {
        let _ = ws.close(None).await;
        return Err(format!(
            "the push server speaks protocol {protocol}; this YUI speaks protocol {PROTOCOL}: update the server or YUI"
        ));
    }
    Ok(ws)
}

async fn send(ws: &mut Ws, f: &ClientFrame) -> Result<(), String> {
    let text = serde_json::to_string(f).map_err(|e| e.to_string())?;
    ws.send(Message::text(text))
        .await
        .map_err(|e| e.to_string())
}

async fn serve(mut ws: Ws, cmd: &mut mpsc::Receiver<Cmd>) -> Ended {
    let mut turns: HashMap<String, mpsc::UnboundedSender<ServerFrame>> = HashMap::new();
    loop {
        tokio::select! {
            msg = ws.next() => {
                let text = match msg {
                    None => return Ended::Lost("the push server closed the connection".into()),
                    Some(Err(e)) => return Ended::Lost(format!("the push connection broke: {e}")),
                    Some(Ok(Message::Close(_))) => return Ended::Lost("the push server closed the connection".into()),
                    Some(Ok(Message::Text(t))) => t,
                    Some(Ok(_)) => continue, // WebSocket pings are answered by tungstenite
                };
                let frame = match ServerFrame::parse(text.as_str()) {
                    Ok(f) => f,
                    Err(e) => {
                        tracing::warn!(error = %e, text = %text.as_str(), "push: malformed frame skipped");
                        continue;
                    }
                };
                match &frame {
                    ServerFrame::Ping => {
                        if let Err(e) = send(&mut ws, &ClientFrame::Pong).await {
                            return Ended::Lost(format!("the push connection broke: {e}"));
                        }
                    }
                    ServerFrame::Unknown => tracing::info!(text = %text.as_str(), "push: unknown frame type ignored"),
                    ServerFrame::Welcome { .. } => {}
                    ServerFrame::Error { message } => {
                        tracing::warn!(%message, "push: server error");
                        // Not tied to a turn: every turn in flight ends with it.
                        for t in turns.values() {
                            let _ = t.send(frame.clone());
                        }
                    }
                    _ => {
                        let id = frame.turn_id().unwrap_or_default();
                        match turns.get(id) {
                            Some(t) => { let _ = t.send(frame); }
                            None => tracing::info!(turn = id, "push: frame for no running turn ignored"),
                        }
                    }
                }
            }
            c = cmd.recv() => match c {
                None => {
                    let _ = ws.close(None).await;
                    return Ended::Shutdown;
                }
                Some(Cmd::Send(f)) => {
                    if let Err(e) = send(&mut ws, &f).await {
                        return Ended::Lost(format!("the push connection broke: {e}"));
                    }
                }
                Some(Cmd::Register { turn_id, frames, ack }) => {
                    turns.insert(turn_id, frames);
                    let _ = ack.send(Ok(()));
                }
                Some(Cmd::Unregister(id)) => { turns.remove(&id); }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_stays_under_the_cap() {
        for seed in [0u64, 200, 400, u64::MAX] {
            let b1 = backoff(1, seed);
            assert!(
                b1 >= Duration::from_millis(400) && b1 <= Duration::from_millis(600),
                "{b1:?}"
            );
            let b4 = backoff(4, seed);
            assert!(
                b4 >= Duration::from_millis(3200) && b4 <= Duration::from_millis(4800),
                "{b4:?}"
            );
            for a in [7, 10, 40, u32::MAX] {
                assert!(backoff(a, seed) <= BACKOFF_CAP);
            }
        }
        assert!(backoff(8, 0) >= Duration::from_secs(24));
    }
}
