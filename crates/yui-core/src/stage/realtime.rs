//! What a seated character's realtime session adds to its link (`stage/link.rs` makes and keeps
//! the session: one per character window, not the phone's, which declares other tools):
//!
//! - With voice output on (and a window to show it), the session is an audio one: its reply
//!   audio plays through the seat's `SeatAudio` on the voice's output device
//!   (`stage/realtime_voice.rs`); otherwise text mode.
//! - Responses the server starts by itself (the user spoke: server voice activity, or the
//!   microphone's commit at a push-to-talk release) become the user's turns ([`server_turns`]):
//!   the user's transcribed words are stored and shown ([`StageEvent::Heard`]) and the reply
//!   runs, is stored and plays exactly as a typed turn's. Words that come after their turn
//!   started without them replace its placeholder ([`StageEvent::HeardLater`]).

use super::{Inner, Stage, StageEvent};
use crate::turn::transport::realtime::wire::ServerEvent;
use crate::turn::transport::realtime::{FromServer, RealtimeClient, RealtimeLink, ServerStarted};
use crate::turn::SeatLink;
use crate::window::WindowKind;
use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a server-started turn waits for the user's transcribed words before it starts
/// without them (the reply's audio plays meanwhile; only the bubble and the tools wait); the
/// default of `StageOptions::transcript_wait`.
pub(super) const TRANSCRIPT_WAIT: Duration = Duration::from_millis(2500);

/// How many turns started without their words wait for them, and how many words no turn took
/// are kept, at most (the oldest goes first).
const LATE_KEPT: usize = 8;

/// How long late words wait for their turn to have stored its placeholder.
const STORE_WAIT: Duration = Duration::from_secs(5);

/// What a spoken turn stores as the user's words when the server gave none.
pub const UNHEARD: &str = "(spoken; no transcript)";

/// Whether the character's replies are heard: voice output on, and a window to show them.
pub(super) fn voice_on(inner: &Inner) -> bool {
    !inner.opts.headless && crate::voice::load(&inner.store).is_ok_and(|v| v.enabled)
}

/// `preset_id`'s realtime session now, if it has one.
pub(super) fn current(inner: &Inner, preset_id: &str) -> Option<Arc<RealtimeClient>> {
    match &inner.seats().get(preset_id)?.link.as_ref()?.link {
        SeatLink::Realtime(client) => Some(client.clone()),
        _ => None,
    }
}

/// The responses `preset_id`'s session started by itself, each made the user's turn, and the
/// words of those that started without them, whenever they come. Ends when the session is
/// dropped.
pub(super) async fn server_turns(
    weak: Weak<Inner>,
    preset_id: String,
    window: WindowKind,
    mut from: mpsc::UnboundedReceiver<FromServer>,
) {
    // Turns that started without their words: (the user's audio item, the turn); and words no
    // such turn took yet: (item, words), e.g. heard while a typed turn ran, before the
    // server's response to them.
    let mut waiting: VecDeque<(String, String)> = VecDeque::new();
    let mut unclaimed: VecDeque<(String, String)> = VecDeque::new();
    while let Some(msg) = from.recv().await {
        let (item_id, turn_id, text) = match msg {
            FromServer::Started(link) => {
                let Some((item, turn)) = start(&weak, &preset_id, window, link).await else {
                    continue;
                };
                match take(&mut unclaimed, &item) {
                    Some(text) => (item, turn, text),
                    None => {
                        keep(&mut waiting, (item, turn));
                        continue;
                    }
                }
            }
            FromServer::Words { item_id, text } => match take(&mut waiting, &item_id) {
                Some(turn) => (item_id, turn, text),
                None => {
                    keep(&mut unclaimed, (item_id, text));
                    continue;
                }
            },
        };
        tracing::debug!(item = %item_id, "realtime: a spoken turn's words came late");
        tokio::spawn(fill_later(weak.clone(), preset_id.clone(), turn_id, text));
    }
}

/// The value kept for `item`, taken out.
fn take(list: &mut VecDeque<(String, String)>, item: &str) -> Option<String> {
    let at = list.iter().position(|(i, _)| i == item)?;
    list.remove(at).map(|(_, v)| v)
}

/// Keep `entry`, the oldest going past [`LATE_KEPT`].
fn keep(list: &mut VecDeque<(String, String)>, entry: (String, String)) {
    list.push_back(entry);
    if list.len() > LATE_KEPT {
        list.pop_front();
    }
}

/// Make a server-started response the user's turn, led by their words if they come in time.
/// When it starts without them: its user audio item and the turn, for words that come later.
async fn start(
    weak: &Weak<Inner>,
    preset_id: &str,
    window: WindowKind,
    mut link: RealtimeLink,
) -> Option<(String, String)> {
    let inner = weak.upgrade()?;
    let transcribed = crate::backend::realtime::load(&inner.store)
        .transcription_model
        .is_some();
    let wait = inner.opts.transcript_wait;
    drop(inner);
    let (words, read) = user_words(&mut link, transcribed, wait).await;
    let inner = weak.upgrade()?;
    let late = match &words {
        None if transcribed => link.user_item().map(str::to_string),
        _ => None,
    };
    let text = words.unwrap_or_else(|| UNHEARD.to_string());
    tracing::info!(preset = %preset_id, "realtime: the server started a turn (the user spoke)");
    inner.emit(StageEvent::Heard {
        preset_id: preset_id.to_string(),
        text: text.clone(),
    });
    let started = ServerStarted::new(link, read);
    match Stage(inner)
        .user_turn(super::UserTurn::to(preset_id, window, text.clone()).started(started))
    {
        Ok(turn_id) => late.map(|item| (item, turn_id)),
        Err(e) => {
            tracing::warn!(preset = %preset_id, error = %e.message, "realtime: the spoken turn could not start");
            None
        }
    }
}

/// The user's words of `turn_id`, come late: they replace its stored placeholder (once the turn
/// has stored it) and go to the windows.
async fn fill_later(weak: Weak<Inner>, preset_id: String, turn_id: String, text: String) {
    let until = tokio::time::Instant::now() + STORE_WAIT;
    loop {
        let Some(inner) = weak.upgrade() else { return };
        match crate::transcript::fill_spoken(&inner.store, &preset_id, &turn_id, UNHEARD, &text) {
            Ok(true) => {
                tracing::info!(preset = %preset_id, turn = %turn_id, "realtime: the user's words came late; stored");
                inner.emit(StageEvent::HeardLater {
                    preset_id,
                    turn_id,
                    text,
                });
                return;
            }
            Ok(false) if tokio::time::Instant::now() < until => {}
            Ok(false) => {
                tracing::warn!(preset = %preset_id, turn = %turn_id, "realtime: late words found no placeholder to replace");
                return;
            }
            Err(e) => {
                tracing::warn!(preset = %preset_id, error = %e.message, "realtime: late words could not be stored");
                return;
            }
        }
        drop(inner);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Read a server-started response up to the user's transcribed words (at most `wait`; not at
/// all when the session transcribes nothing): the words, and every event read, for the turn to
/// replay.
async fn user_words(
    link: &mut RealtimeLink,
    transcribed: bool,
    wait: Duration,
) -> (Option<String>, Vec<ServerEvent>) {
    let mut read = Vec::new();
    let mut words = None;
    let until = tokio::time::Instant::now() + wait;
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
