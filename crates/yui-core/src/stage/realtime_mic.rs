//! The microphone for a character whose backend is a realtime session: the model hears the user
//! directly. The device's blocks become pcm16 24 kHz chunks of 20 ms ([`MicEncoder`]), each sent
//! at once as `input_audio_buffer.append` ([`RealtimeClient::append`]); no local voice activity
//! or speech-to-text runs.
//!
//! - Push-to-talk: the session is told to leave turns to the client (`turn_detection: null`),
//!   the buffer is cleared at the press, the chunks stream while the key is held, and the release
//!   sends the rest, `input_audio_buffer.commit` and `response.create`. The server's response
//!   then becomes the user's turn (`stage/realtime.rs`, server-started turns).
//! - Hands-free: the session's own voice activity (`yui.realtime` `turn_detection`; server VAD
//!   when that says push-to-talk) decides when the user spoke; its responses become turns the
//!   same way, and its `speech_started` while a reply plays is the barge-in (the transport stops
//!   the audio and truncates). Half duplex (no echo cancellation) drops the audio while a
//!   character speaks, so the character's own voice is never heard as the user.
//! - Either way the turn detection is held on the session while the microphone is on
//!   ([`RealtimeClient::hold_turn_detection`]): a reconnect's new session gets it too; once the
//!   microphone stops, the next connect has `yui.realtime`'s again. Hands-free moves to the
//!   seat's session when that is made again (`Stage::realtime_changed`, voice output switched).
//! - A device that fails ends the microphone session with one sentence; text goes on.

use super::{Inner, MicState};
use crate::backend::realtime::TurnDetection;
use crate::turn::transport::realtime::{wire, RealtimeClient};
use crate::voice::audio::AudioHost;
use crate::voice::realtime_audio::MicEncoder;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The longest push-to-talk hold streamed (a stuck key must not stream for ever): 60 s.
const PTT_MAX_CHUNKS: u64 = 3_000;

/// A microphone session for a realtime character (made by `stage/mic.rs`).
pub(super) struct RtJob {
    pub inner: Arc<Inner>,
    pub id: u64,
    pub preset_id: String,
    pub input_device: Option<String>,
    pub stop: CancellationToken,
    pub host: Arc<dyn AudioHost>,
}

impl RtJob {
    fn state(&self, state: MicState) {
        self.inner.mic_set(self.id, |st| st.state = state);
    }
}

/// Open the device and its encoder; `None` (the session ended with why) when it cannot.
async fn open(job: &RtJob) -> Option<(crate::voice::audio::Capture, MicEncoder)> {
    let device = job.input_device.as_deref();
    let cap = tokio::select! {
        _ = job.stop.cancelled() => return None,
        c = job.host.capture(device) => c,
    };
    let cap = match cap {
        Ok(c) => c,
        Err(e) => {
            job.inner
                .mic_ended(job.id, Some(format!("{e}; text chat goes on")));
            return None;
        }
    };
    match MicEncoder::new(cap.rate) {
        Ok(enc) => Some((cap, enc)),
        Err(e) => {
            job.inner
                .mic_ended(job.id, Some(format!("{e}; text chat goes on")));
            None
        }
    }
}

/// Push-to-talk into the session: stream while held, commit and ask for the answer at release.
pub(super) async fn push_to_talk(
    job: RtJob,
    client: Arc<RealtimeClient>,
    release: CancellationToken,
) {
    // Held until this returns: a reconnect meanwhile sets the new session up the same way.
    let held = client.hold_turn_detection(TurnDetection::PushToTalk).await;
    if held.is_none() || !client.clear().await {
        job.inner.mic_ended(job.id, Some(lost()));
        return;
    }
    let Some((mut cap, mut enc)) = open(&job).await else {
        return;
    };
    let mut sent: u64 = 0;
    let mut failure = None;
    while sent < PTT_MAX_CHUNKS {
        let block = tokio::select! {
            _ = job.stop.cancelled() => {
                let _ = client.clear().await;
                return;
            }
            _ = release.cancelled() => break,
            b = cap.blocks.recv() => b,
        };
        match block {
            Some(Ok(b)) => sent += append(&client, enc.push(&b)),
            Some(Err(e)) => {
                failure = Some(format!("{e}; text chat goes on"));
                break;
            }
            None => break,
        }
    }
    drop(cap);
    sent += append(&client, enc.flush());
    if sent == 0 {
        job.inner
            .mic_ended(job.id, Some("nothing was heard".into()));
        return;
    }
    // The device is closed: the badge goes while the session answers.
    job.inner.mic_set(job.id, |st| {
        st.state = MicState::Transcribing;
        st.live = false;
    });
    let asked = client.commit().await && client.send(wire::response_create()).await;
    tracing::info!(
        preset = %job.preset_id,
        appends = sent,
        "realtime mic: push-to-talk released; committed"
    );
    job.inner
        .mic_ended(job.id, if asked { failure } else { Some(lost()) });
}

/// Hands-free into the session: every block goes on as chunks; the server hears the turns.
pub(super) async fn hands_free(job: RtJob, mut client: Arc<RealtimeClient>, full_duplex: bool) {
    // Held until this returns: a reconnect meanwhile sets the new session up the same way.
    let Some(mut _held) = client.hold_turn_detection(hands_free_detection(&job)).await else {
        job.inner.mic_ended(job.id, Some(lost()));
        return;
    };
    let Some((mut cap, mut enc)) = open(&job).await else {
        return;
    };
    let mut sent: u64 = 0;
    let message = loop {
        let block = tokio::select! {
            _ = job.stop.cancelled() => break None,
            b = cap.blocks.recv() => b,
        };
        let block = match block {
            Some(Ok(b)) => b,
            Some(Err(e)) => break Some(format!("{e}; text chat goes on")),
            None => break Some("the microphone closed; text chat goes on".into()),
        };
        if !full_duplex && job.inner.any_speaking() {
            // Half duplex: the character's own voice must not become the user's turn.
            job.state(MicState::Paused);
            continue;
        }
        job.state(MicState::Listening);
        // The seat's session was made again (yui.realtime saved, voice output switched): the
        // microphone moves to it, holding its turn detection there; the old one can close.
        if let Some(now) = super::realtime::current(&job.inner, &job.preset_id) {
            if !Arc::ptr_eq(&now, &client) {
                if let Some(h) = now.hold_turn_detection(hands_free_detection(&job)).await {
                    tracing::info!(preset = %job.preset_id, "realtime mic: moved to the new session");
                    (_held, client) = (h, now);
                }
            }
        }
        let n = append(&client, enc.push(&block));
        if n == 0 && sent > 0 && client.state().borrow().clone() != super::ConnState::Connected {
            break Some(lost());
        }
        sent += n;
    };
    drop(cap);
    tracing::info!(preset = %job.preset_id, appends = sent, "realtime mic: hands-free ended");
    if let Some(m) = message {
        job.inner.mic_ended(job.id, Some(m));
    }
}

/// Hands-free's turn detection: `yui.realtime`'s, the server's voice activity when that says
/// push-to-talk.
fn hands_free_detection(job: &RtJob) -> TurnDetection {
    match crate::backend::realtime::load(&job.inner.store).turn_detection {
        TurnDetection::PushToTalk => TurnDetection::ServerVad,
        d => d,
    }
}

/// Send the chunks as appends; how many went.
fn append(client: &RealtimeClient, chunks: Vec<Vec<u8>>) -> u64 {
    chunks.iter().filter(|c| client.append(c)).count() as u64
}

fn lost() -> String {
    "the realtime session is not connected; text chat goes on".into()
}
