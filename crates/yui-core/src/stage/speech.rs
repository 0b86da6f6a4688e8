//! Each character's own speech: a new turn or Escape stops that character's voice only, and
//! speech-dispatcher is told to cancel (which drops every client's speech) only when no other
//! character is speaking.

use super::Inner;
use crate::turn::CancellationToken;
use crate::voice::{self, Script};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Stop `preset_id`'s speech; whether some was running.
pub(super) fn stop(inner: &Inner, preset_id: &str) -> bool {
    let token = inner
        .seats()
        .get_mut(preset_id)
        .and_then(|s| s.speech.take());
    match token {
        Some((_, t)) => {
            t.cancel();
            true
        }
        None => false,
    }
}

/// Speak `script` as `preset_id`'s reply of `turn_id` (the voice switch decides) and return when
/// it has ended, was stopped or could not run.
pub(super) async fn speak(inner: &Arc<Inner>, preset_id: &str, turn_id: &str, script: &Script) {
    let generation = inner.speech_gen.fetch_add(1, Ordering::Relaxed);
    let cancel = CancellationToken::new();
    if let Some((_, old)) = inner
        .seats()
        .entry(preset_id.to_string())
        .or_default()
        .speech
        .replace((generation, cancel.clone()))
    {
        old.cancel();
    }
    let alone = || {
        !inner
            .seats()
            .iter()
            .any(|(id, s)| id != preset_id && s.speech.is_some())
    };
    // In the character's own voice (its preset's voice type, rate and pitch).
    let base = crate::presets::get(&inner.store, preset_id)
        .map(|p| voice::Direction::of_preset(&p.voice))
        .unwrap_or_default();
    let script = script.in_voice(base);
    let spoken = script
        .utterances()
        .iter()
        .map(|u| u.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let started = std::time::Instant::now();
    let outcome = voice::speak_reply_among(
        &inner.store,
        &script,
        inner.opts.voice_path.as_deref(),
        &cancel,
        &alone,
    )
    .await;
    tracing::debug!(turn = turn_id, ?outcome, "speech ended");
    let mut seats = inner.seats();
    if let Some(seat) = seats.get_mut(preset_id) {
        if seat.speech.as_ref().is_some_and(|(g, _)| *g == generation) {
            seat.speech = None;
        }
    }
    drop(seats);
    // The user spoke over it: the stored reply becomes what they heard (barge-in).
    super::barge::after_speech(inner, generation, preset_id, turn_id, &spoken, started);
}
