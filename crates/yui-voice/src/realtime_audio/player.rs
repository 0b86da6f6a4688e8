//! The realtime reply's player: deltas are decoded and queued on one [`StreamFeed`] the moment
//! they arrive, and the output device plays that feed as one continuous stream, starting with the
//! first delta. Each item's span of the feed is remembered, so the milliseconds heard of an item
//! are exact (the feed's account: handed to the device minus what it still holds).
//!
//! The device is opened in the background on the first delta (opening can take a while; a delta
//! never waits for it: its audio waits in the feed) and closed again after [`IDLE_CLOSE`] with
//! nothing to play, so an idle realtime session holds no device and runs no audio thread.

use super::envelope::{EnvelopeBatch, LiveEnvelope};
use super::{decode_delta, decode_pcm16, ms_of, RATE};
use crate::audio::{AudioError, AudioHost};
use crate::stream_out::StreamFeed;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};
use yui_base::realtime_audio::RealtimeAudioOut;

/// Nothing to play for this long closes the device (the next delta opens it again).
pub const IDLE_CLOSE: Duration = Duration::from_secs(3);
/// How often the device keeper looks at the feed.
const KEEPER_TICK: Duration = Duration::from_millis(50);
/// Items remembered for [`RealtimeAudioOut::played_ms`].
const ITEMS_KEPT: usize = 64;

/// Called with each lip-sync batch (the stage turns it into an event for the character's window).
pub type EnvelopeSink = Arc<dyn Fn(EnvelopeBatch) + Send + Sync>;

#[derive(Debug, Clone)]
struct Span {
    item_id: String,
    start: u64,
    end: u64,
}

#[derive(Default)]
struct State {
    spans: Vec<Span>,
    envelope: Option<LiveEnvelope>,
    /// The envelope of the item whose audio all came (`finish`) and may still be playing: a
    /// stop then still shuts the mouth at once.
    finished: Option<LiveEnvelope>,
    /// A keeper task holds the device open.
    open: bool,
    /// The device failed; reported once by the next `delta`.
    failed: Option<AudioError>,
    last_push: Option<Instant>,
}

struct Shared {
    idle_close: Duration,
    host: Arc<dyn AudioHost>,
    device: Option<String>,
    feed: Arc<StreamFeed>,
    state: Mutex<State>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Plays a realtime reply's audio on an output device ([`RealtimeAudioOut`]).
pub struct ReplyPlayer {
    shared: Arc<Shared>,
    runtime: tokio::runtime::Handle,
    on_envelope: Option<EnvelopeSink>,
}

impl ReplyPlayer {
    /// A player on `host`'s `device` (`None`: the default output). Opens nothing until the first
    /// delta. Must be made inside the async runtime (the device is opened on it).
    pub fn new(
        host: Arc<dyn AudioHost>,
        device: Option<String>,
        on_envelope: Option<EnvelopeSink>,
    ) -> Result<Self, AudioError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            AudioError::unsupported("the reply player was made outside the async runtime")
        })?;
        Ok(Self {
            shared: Arc::new(Shared {
                idle_close: IDLE_CLOSE,
                host,
                device,
                feed: StreamFeed::new(RATE),
                state: Mutex::new(State::default()),
            }),
            runtime,
            on_envelope,
        })
    }

    /// Close the device after `idle` with nothing to play instead of [`IDLE_CLOSE`] (before the
    /// first delta).
    pub fn with_idle_close(mut self, idle: Duration) -> Self {
        if let Some(sh) = Arc::get_mut(&mut self.shared) {
            sh.idle_close = idle;
        }
        self
    }

    /// The feed the device plays (its account: pushed, handed, heard).
    pub fn feed(&self) -> &Arc<StreamFeed> {
        &self.shared.feed
    }

    /// Whether a device is open now.
    pub fn is_open(&self) -> bool {
        self.shared.state().open
    }

    /// Whether audio is playing or waiting to play.
    pub fn is_playing(&self) -> bool {
        !self.shared.feed.drained()
    }

    fn emit(&self, batch: Option<EnvelopeBatch>) {
        if let (Some(b), Some(sink)) = (batch, &self.on_envelope) {
            sink(b);
        }
    }

    /// Milliseconds of `item_id` heard by `now` (tests pass their own instants).
    pub fn played_ms_at(&self, item_id: &str, now: Instant) -> u64 {
        let heard = self.shared.feed.heard_at(now);
        let s = self.shared.state();
        s.spans
            .iter()
            .rev()
            .find(|sp| sp.item_id == item_id)
            .map_or(0, |sp| ms_of(heard.clamp(sp.start, sp.end) - sp.start))
    }

    /// One piece of `item_id`'s audio as pcm16 little-endian bytes (the base64 already decoded):
    /// [`RealtimeAudioOut::delta`] without the base64.
    pub fn pcm16(&self, item_id: &str, bytes: &[u8]) -> Result<(), AudioError> {
        self.queue(item_id, &decode_pcm16(bytes)?)
    }

    fn queue(&self, item_id: &str, samples: &[f32]) -> Result<(), AudioError> {
        let sh = &self.shared;
        let (batches, spawn) = {
            let mut st = sh.state();
            if let Some(e) = st.failed.take() {
                return Err(e);
            }
            let mut batches = Vec::with_capacity(2);
            let new_item = st.spans.last().is_none_or(|s| s.item_id != item_id);
            if new_item {
                st.finished = None;
                if let Some(mut env) = st.envelope.take() {
                    batches.push(env.end());
                }
                st.envelope = Some(LiveEnvelope::new(item_id, RATE));
                let start = sh.feed.pushed();
                st.spans.push(Span {
                    item_id: item_id.to_string(),
                    start,
                    end: start,
                });
                if st.spans.len() > ITEMS_KEPT {
                    st.spans.remove(0);
                }
            }
            let end = sh.feed.push(samples);
            if let Some(sp) = st.spans.last_mut() {
                sp.end = end;
            }
            if let Some(env) = st.envelope.as_mut() {
                batches.extend(env.feed(samples));
            }
            st.last_push = Some(Instant::now());
            let spawn = !st.open;
            st.open = true;
            (batches, spawn)
        };
        if spawn {
            self.runtime.spawn(keep_device(Arc::downgrade(sh)));
        }
        for b in batches {
            self.emit(Some(b));
        }
        Ok(())
    }
}

/// Holds the device open while there is audio, closes it after [`IDLE_CLOSE`] of none, and
/// notes a device failure. Ends (closing the device) when the player is dropped.
async fn keep_device(shared: Weak<Shared>) {
    let Some(first) = shared.upgrade() else {
        return;
    };
    let opened = first
        .host
        .open_stream(first.feed.clone(), first.device.as_deref())
        .await;
    let stream = match opened {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("realtime audio: {e}");
            let mut st = first.state();
            st.open = false;
            st.failed = Some(e);
            // What waited for this device is not going to play.
            first.feed.clear();
            return;
        }
    };
    tracing::debug!(device = %stream.device, rate = stream.rate, "realtime audio: output open");
    drop(first);
    let mut tick = tokio::time::interval(KEEPER_TICK);
    loop {
        tick.tick().await;
        let Some(sh) = shared.upgrade() else { break };
        let mut st = sh.state();
        if let Some(e) = sh.feed.failure() {
            tracing::warn!("realtime audio: {e}");
            st.open = false;
            st.failed = Some(AudioError::device(e));
            sh.feed.clear();
            break;
        }
        let idle = st.last_push.is_none_or(|t| t.elapsed() >= sh.idle_close);
        if idle && sh.feed.drained() {
            st.open = false;
            break;
        }
    }
    drop(stream);
}

impl ReplyPlayer {
    /// One `response.output_audio.delta` payload (base64 pcm16 24 kHz) of `item_id`.
    pub fn delta(&self, item_id: &str, b64: &str) -> Result<(), AudioError> {
        self.queue(item_id, &decode_delta(b64)?)
    }

    /// Milliseconds of `item_id`'s audio heard so far (0 for an unknown item).
    pub fn played_ms(&self, item_id: &str) -> u64 {
        self.played_ms_at(item_id, Instant::now())
    }

    /// Stop now (barge-in): drop what is queued; the item that was playing and the milliseconds
    /// of it the user hears (what the device had been given: it plays out its last buffer), for
    /// `conversation.item.truncate`. `None`: nothing was playing.
    pub fn stop_cut(&self) -> Option<(String, u64)> {
        let sh = &self.shared;
        let (cut, batch) = {
            let mut st = sh.state();
            let playing = !sh.feed.drained();
            let handed = sh.feed.clear();
            let env = st.envelope.take().or_else(|| st.finished.take());
            let batch = env.filter(|_| playing).map(|mut e| e.stopped());
            // Spans of audio never handed to the device are cut to what was.
            for sp in st.spans.iter_mut() {
                sp.end = sp.end.min(handed);
                sp.start = sp.start.min(handed);
            }
            let cut = if playing {
                let at = st.spans.iter().rev().find(|sp| sp.start < handed);
                at.or(st.spans.last())
                    .map(|sp| (sp.item_id.clone(), ms_of(sp.end - sp.start)))
            } else {
                None
            };
            (cut, batch)
        };
        self.emit(batch);
        cut
    }

    /// The response is done (`response.done`): no more audio for now.
    pub fn finish(&self) -> Result<(), AudioError> {
        let batch = {
            let mut st = self.shared.state();
            let mut env = st.envelope.take();
            let batch = env.as_mut().map(LiveEnvelope::end);
            if env.is_some() {
                st.finished = env;
            }
            batch
        };
        self.emit(batch);
        Ok(())
    }

    /// Returns once everything queued has been heard, the device failed, or a bound past the
    /// queued audio's length.
    pub async fn drained(&self) {
        let feed = &self.shared.feed;
        let queued_ms = ms_of(feed.pushed().saturating_sub(feed.heard()));
        let deadline = Instant::now() + Duration::from_millis(queued_ms) + Duration::from_secs(5);
        while !feed.drained() && feed.failure().is_none() && Instant::now() < deadline {
            if !self.shared.state().open {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for ReplyPlayer {
    fn drop(&mut self) {
        // The keeper sees the player gone at its next tick and closes the device; what is
        // queued is not played to no one.
        self.shared.feed.clear();
    }
}

impl RealtimeAudioOut for ReplyPlayer {
    fn on_audio(&self, item_id: &str, pcm16: &[u8]) {
        if let Err(e) = self.pcm16(item_id, pcm16) {
            tracing::warn!("realtime audio: {e}");
        }
    }

    fn played_ms(&self, item_id: &str) -> u64 {
        ReplyPlayer::played_ms(self, item_id)
    }

    fn stop(&self) {
        let _ = self.stop_cut();
    }

    fn finish(&self) {
        let _ = ReplyPlayer::finish(self);
    }
}
