//! A PulseAudio daemon of the bench's own (the test kit's: a null sink whose monitor is the
//! default source): the voice benches play and record real audio with no sound card. Shared by
//! `barge_in` and `voice_latency` (`#[path]`-included).

pub use yui_testkit::pulse::Pulse;

/// Start the daemon and point this process's PulseAudio client (cpal's) at it.
pub fn pulse() -> Pulse {
    let p = Pulse::start();
    for (k, v) in p.env() {
        std::env::set_var(k, v);
    }
    p
}
