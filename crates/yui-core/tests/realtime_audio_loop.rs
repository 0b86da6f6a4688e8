//! The realtime reply player on real audio: the cpal host plays into a PulseAudio null sink
//! that this test starts (as `yui-cli`'s `voice_loop_cli` does) while the same host records its
//! monitor. Split from `realtime_audio.rs`, which tests the same parts against devices in memory.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use yui_core::voice::audio::AudioHost;
use yui_core::voice::realtime_audio::{
    encode_pcm16, EnvelopeBatch, EnvelopeSink, ReplyPlayer, RATE,
};
use yui_testkit::pulse::Pulse;

fn tone(rate: u32, ms: u32, hz: f32, amp: f32) -> Vec<f32> {
    let n = (rate * ms / 1000) as usize;
    (0..n)
        .map(|i| amp * (i as f32 * hz * std::f32::consts::TAU / rate as f32).sin())
        .collect()
}

fn batches() -> (Arc<Mutex<Vec<EnvelopeBatch>>>, EnvelopeSink) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    (seen, Arc::new(move |b| s.lock().unwrap().push(b)))
}

/// Real audio: the reply player on the real cpal host plays into a null sink while the same host
/// records its monitor. The player's audio must come out whole and continuous (the recording's
/// loudness follows what was sent), "drained" must not come before the audio's length, the
/// played milliseconds must end at the item's length, and a stop must cut it short. The audio
/// runs in a child process (this binary again) so that the PulseAudio address is its own from the
/// start, never set in a process whose other tests run threads.
#[test]
fn null_sink_hears_the_reply_played_as_it_arrives_and_a_stop_cuts_it() {
    let pulse = Pulse::start();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "realtime_audio_loop::null_sink_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .envs(pulse.env())
        .env("YUI_RT_NULL_SINK", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
    eprintln!(
        "{}",
        text.lines()
            .filter(|l| l.starts_with("realtime audio:"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by null_sink_hears_the_reply_played_as_it_arrives_and_a_stop_cuts_it"]
async fn null_sink_child() {
    if std::env::var_os("YUI_RT_NULL_SINK").is_none() {
        return;
    }
    let host: Arc<dyn AudioHost> = Arc::new(yui_core::voice::cpal_host::CpalHost::new());
    let mut mic = host.capture(None).await.expect("the null sink's monitor");
    assert!(mic.device.contains("Monitor"), "{}", mic.device);
    let rec_stop = CancellationToken::new();
    let recording = {
        let stop = rec_stop.clone();
        tokio::spawn(async move { mic.record(12_000, &stop).await })
    };
    let pattern = [
        0.8, 0.8, 0.05, 0.05, 0.6, 0.6, 0.6, 0.05, 0.9, 0.9, 0.3, 0.3, 0.8, 0.05, 0.7,
    ];
    let reply = yui_testkit::speech::patterned_tone(RATE, &pattern);
    let (seen, sink) = batches();
    let player = ReplyPlayer::new(host.clone(), None, Some(sink)).unwrap();
    let t = Instant::now();
    // The server sends faster than real time: all 15 pieces at once.
    for piece in reply.chunks(2400) {
        player.delta("item_a", &encode_pcm16(piece)).unwrap();
    }
    player.finish().unwrap();
    player.drained().await;
    let took = t.elapsed();
    assert_eq!(player.played_ms("item_a"), 1500);
    assert!(
        took >= Duration::from_millis(1500),
        "drained after {took:?}"
    );
    assert!(took < Duration::from_millis(4000), "drained after {took:?}");
    let sent_env: Vec<f32> = seen
        .lock()
        .unwrap()
        .iter()
        .flat_map(|b| b.levels.clone())
        .collect();
    assert_eq!(sent_env.len(), 75);

    // A long reply stopped after 800 ms: cut where the device was, and silence after.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let long = tone(RATE, 5000, 330.0, 0.5);
    let t = Instant::now();
    for piece in long.chunks(4800) {
        player.delta("item_b", &encode_pcm16(piece)).unwrap();
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    let heard_before = player.played_ms("item_b");
    let (item, ms) = player.stop_cut().expect("item_b was playing");
    let at = t.elapsed().as_millis() as u64;
    assert_eq!(item, "item_b");
    // What the device was given by the stop: what was heard plus at most its buffer (100 ms,
    // and a callback's worth on a loaded machine).
    assert!(
        ms >= heard_before && ms <= heard_before + 400,
        "{heard_before} heard, cut at {ms}"
    );
    // The device takes its first buffer (2 × 100 ms) at once.
    assert!(ms > 300 && ms <= at + 250, "cut at {ms} ms of {at} ms");
    player.drained().await;
    assert_eq!(player.played_ms("item_b"), ms);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    rec_stop.cancel();
    let rec = recording.await.unwrap().expect("recorded");
    let rec = rec.resampled(RATE).unwrap();
    let levels = rec.envelope().levels;
    // Where the first reply starts in the recording (the monitor adds its own delay).
    let env =
        |from: usize, n: usize| -> Vec<f32> { levels.iter().skip(from).take(n).copied().collect() };
    let (mut best, mut at_frame) = (-1f32, 0);
    for lag in 0..levels.len().saturating_sub(75) {
        let r = yui_core::voice::pcm::correlation(&sent_env, &env(lag, 75));
        if r > best {
            best = r;
            at_frame = lag;
        }
    }
    assert!(
        best > 0.8,
        "the recording does not follow the reply: r = {best}"
    );
    // The long reply: loud while it played, silent soon after the stop.
    // At least 300 ms of quiet lie between the two (the pause before the second).
    let b_start = (at_frame + 80..levels.len().saturating_sub(3))
        .find(|i| levels[*i..*i + 3].iter().all(|l| *l > 0.3))
        .expect("the second reply in the recording");
    let loud = env(b_start + 2, (ms / 20) as usize - 6);
    // Silent from one device buffer (200 ms) after the cut.
    let after = env(b_start + (ms / 20) as usize + 10, 25);
    let peak = rec.envelope().peak_rms;
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len().max(1) as f32;
    println!(
        "realtime audio: drained after {took:?} for 1500 ms; envelope r = {best:.3} at {} ms; \
         stop: heard {heard_before} ms, cut at {ms} ms after {at} ms; level while playing {:.2}, after the stop {:.2} (peak rms {peak:.2})",
        at_frame * 20,
        mean(&loud),
        mean(&after)
    );
    assert!(mean(&loud) > 0.3, "{loud:?} in {levels:?}");
    assert!(mean(&after) < 0.05, "{after:?}");
}
