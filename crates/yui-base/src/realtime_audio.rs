//! The seam between the realtime transport (`turn/transport/realtime`) and whatever plays its
//! audio (the voice floor's realtime player; a test's fake): the transport hands it the reply's
//! pcm16 24 kHz audio as it arrives, asks how much of an item was actually heard (for
//! `conversation.item.truncate`'s `audio_end_ms` on barge-in), and stops it. Text mode has no
//! player at all. Declared on the bottom floor so the voice floor can implement it without
//! importing the engine.

/// Plays a realtime session's output audio.
pub trait RealtimeAudioOut: Send + Sync {
    /// The next piece of the assistant audio item `item_id`: pcm16 little-endian, mono, 24 kHz.
    /// Called on the connection's task: queue it, never block.
    fn on_audio(&self, item_id: &str, pcm16: &[u8]);
    /// Milliseconds of `item_id` the user has heard so far (0 when unknown).
    fn played_ms(&self, item_id: &str) -> u64;
    /// Stop playing now and drop what is queued (barge-in, the user stopping the turn).
    fn stop(&self);
    /// The response is done (`response.done`): no more audio for now (the last lip-sync batch).
    fn finish(&self) {}
}
