//! The realtime session's audio costs (docs/PERFORMANCE.md, "Realtime audio"):
//! - microphone frame → append payload: one 20 ms block at the device's rate (48, 44.1, 16 kHz)
//!   resampled to 24 kHz, encoded as base64 pcm16 and wrapped in its `input_audio_buffer.append`
//!   JSON text, ready for the socket (goal ≤ 1 ms p99);
//! - reply delta → queued: one 100 ms `response.output_audio.delta` payload decoded, queued on the
//!   player's stream and its lip-sync levels made (no device pulls here).
//!
//! Criterion's means, then p50 / p99 / max over 10,000 timed calls each.
//! `cargo bench -p yui-core --bench realtime_audio`.

use criterion::Criterion;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use yui_core::voice::audio::{AudioError, AudioHost, Capture, DeviceList, Played};
use yui_core::voice::pcm::Pcm;
use yui_core::voice::realtime_audio::{encode_pcm16, MicEncoder, ReplyPlayer, RATE};
use yui_core::voice::stream_out::{OpenStream, StreamFeed};

const CALLS: usize = 10_000;

/// Speech-like audio: two tones and some noise, at `rate`.
fn speechy(rate: u32, samples: usize, seed: u32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    (0..samples)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let t = i as f32 / rate as f32;
            let noise = (x as f32 / u32::MAX as f32 - 0.5) * 0.1;
            0.3 * (t * 220.0 * std::f32::consts::TAU).sin()
                + 0.2 * (t * 1330.0 * std::f32::consts::TAU).sin()
                + noise
        })
        .collect()
}

/// What the session does with a chunk: base64, then the event's JSON text.
fn append_event(chunk: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(chunk);
    serde_json::json!({"type": "input_audio_buffer.append", "audio": b64}).to_string()
}

/// A device that is opened and never pulls (the bench clears the queue itself).
struct Silent;

#[async_trait::async_trait]
impl AudioHost for Silent {
    fn devices(&self) -> Result<DeviceList, AudioError> {
        Ok(Default::default())
    }
    async fn play(
        &self,
        _: &Pcm,
        _: Option<&str>,
        _: &CancellationToken,
    ) -> Result<Played, AudioError> {
        Ok(Played::Finished { ms: 0 })
    }
    async fn capture(&self, _: Option<&str>) -> Result<Capture, AudioError> {
        Err(AudioError::no_device("none"))
    }
    async fn open_stream(
        &self,
        _: Arc<StreamFeed>,
        _: Option<&str>,
    ) -> Result<OpenStream, AudioError> {
        Ok(OpenStream::new("bench".into(), RATE, Box::new(())))
    }
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(50)
        .measurement_time(Duration::from_secs(3));
    for rate in [48_000u32, 44_100, 16_000] {
        let block = speechy(rate, (rate / 50) as usize, rate);
        let mut enc = MicEncoder::new(rate).unwrap();
        c.bench_function(
            &format!("mic 20 ms block at {rate} Hz -> append text"),
            |b| {
                b.iter(|| {
                    for p in enc.push(black_box(&block)) {
                        black_box(append_event(&p));
                    }
                })
            },
        );
        let mut enc = MicEncoder::new(rate).unwrap();
        let blocks: Vec<Vec<f32>> = (0..50)
            .map(|k| speechy(rate, (rate / 50) as usize, rate + k))
            .collect();
        let mut lat = Vec::with_capacity(CALLS);
        let mut made = 0usize;
        for i in 0..CALLS {
            let t = Instant::now();
            for p in enc.push(&blocks[i % blocks.len()]) {
                black_box(append_event(&p));
                made += 1;
            }
            lat.push(t.elapsed());
        }
        let (p50, p99, max) = (pct(&mut lat, 0.5), pct(&mut lat, 0.99), pct(&mut lat, 1.0));
        println!(
            "mic frame -> append text ({rate} Hz, 20 ms blocks, {CALLS} blocks, {made} payloads): p50 {p50:?} p99 {p99:?} max {max:?}"
        );
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = rt.enter();
    let sink: yui_core::voice::realtime_audio::EnvelopeSink = Arc::new(|b| {
        black_box(b);
    });
    let player = ReplyPlayer::new(Arc::new(Silent), None, Some(sink)).unwrap();
    let deltas: Vec<String> = (0..20)
        .map(|k| encode_pcm16(&speechy(RATE, 2400, k)))
        .collect();
    c.bench_function("reply delta 100 ms -> decoded, queued, levels", |b| {
        let mut i = 0usize;
        b.iter(|| {
            player
                .delta("item_bench", black_box(&deltas[i % deltas.len()]))
                .unwrap();
            i += 1;
            if i.is_multiple_of(100) {
                player.feed().clear();
            }
        })
    });
    let mut lat = Vec::with_capacity(CALLS);
    for i in 0..CALLS {
        let t = Instant::now();
        player
            .delta("item_bench", &deltas[i % deltas.len()])
            .unwrap();
        lat.push(t.elapsed());
        if i % 100 == 99 {
            player.feed().clear();
        }
    }
    let (p50, p99, max) = (pct(&mut lat, 0.5), pct(&mut lat, 0.99), pct(&mut lat, 1.0));
    println!(
        "reply delta (100 ms, 6400 base64 chars) -> decoded + queued + lip-sync levels, {CALLS} deltas: p50 {p50:?} p99 {p99:?} max {max:?}"
    );
    c.final_summary();
}
