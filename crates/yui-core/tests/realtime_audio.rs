//! The realtime session's audio (`yui_core::voice::realtime_audio`): microphone blocks and WAV
//! files → 24 kHz pcm16 append payloads, and the reply player's account of what was heard,
//! against devices in memory that pull like a real one (on the test's own clock, or in real
//! time on a thread), plus real audio through a PulseAudio null sink (`null_sink_*`).

use base64::Engine as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use yui_core::voice::audio::{AudioError, AudioHost, Capture, DeviceList, Played};
use yui_core::voice::pcm::Pcm;
use yui_core::voice::realtime_audio::{
    decode_delta, decode_pcm16, encode_pcm16, wav_chunks, wav_payloads, EnvelopeBatch, MicEncoder,
    ReplyPlayer, ReplyRecorder, CHUNK_SAMPLES, RATE,
};
use yui_core::voice::stream_out::{OpenStream, StreamFeed};

fn tone(rate: u32, ms: u32, hz: f32, amp: f32) -> Vec<f32> {
    let n = (rate * ms / 1000) as usize;
    (0..n)
        .map(|i| amp * (i as f32 * hz * std::f32::consts::TAU / rate as f32).sin())
        .collect()
}

fn rms(s: &[f32]) -> f32 {
    Pcm::new(1, s.to_vec()).rms()
}

/// Zero crossings per second / 2: a tone's frequency.
fn frequency(s: &[f32], rate: u32) -> f32 {
    let z = s
        .windows(2)
        .filter(|w| (w[0] < 0.0) != (w[1] < 0.0))
        .count();
    z as f32 / 2.0 / (s.len() as f32 / rate as f32)
}

fn decode_all(payloads: &[String]) -> Vec<f32> {
    payloads
        .iter()
        .flat_map(|p| decode_delta(p).unwrap())
        .collect()
}

fn decode_chunks(chunks: &[Vec<u8>]) -> Vec<f32> {
    chunks
        .iter()
        .flat_map(|c| decode_pcm16(c).unwrap())
        .collect()
}

#[test]
fn microphone_blocks_at_16_and_48_khz_become_20_ms_payloads_at_24_khz() {
    for rate in [16_000u32, 44_100, 48_000, 24_000] {
        let audio = tone(rate, 1000, 440.0, 0.5);
        let mut enc = MicEncoder::new(rate).unwrap();
        let mut payloads = Vec::new();
        for block in audio.chunks((rate / 50) as usize) {
            payloads.extend(enc.push(block));
        }
        let before_flush = payloads.len();
        // One block in, about one payload out: nothing is held back for long.
        assert!(before_flush >= 46, "{rate} Hz: {before_flush} payloads");
        payloads.extend(enc.flush());
        for p in &payloads[..payloads.len() - 1] {
            assert_eq!(p.len(), CHUNK_SAMPLES * 2, "{rate}");
        }
        let out = decode_chunks(&payloads);
        // 1 s in → 1 s out, plus at most the flush's 20 ms of silence.
        assert!(
            (24_000..=24_000 + 480 + 64).contains(&out.len()),
            "{rate} Hz → {} samples",
            out.len()
        );
        let body = &out[2400..21_600];
        assert!(
            (rms(body) - 0.5 / 2f32.sqrt()).abs() < 0.01,
            "{rate}: {}",
            rms(body)
        );
        let f = frequency(body, RATE);
        assert!((f - 440.0).abs() < 3.0, "{rate} Hz: heard {f} Hz");
    }
    assert!(MicEncoder::new(0)
        .err()
        .unwrap()
        .to_string()
        .contains("sample rate of 0"));
}

#[test]
fn payloads_are_base64_pcm16_little_endian_and_bad_deltas_are_plain_words() {
    let p = encode_pcm16(&[0.5, -0.5, 1.5]);
    let raw = base64::engine::general_purpose::STANDARD
        .decode(&p)
        .unwrap();
    // ±0.5 → ±16384 (rounded), 1.5 clipped to 32767; little-endian.
    assert_eq!(raw, [0x00, 0x40, 0x00, 0xc0, 0xff, 0x7f]);
    let back = decode_delta(&p).unwrap();
    assert!((back[0] - 0.5).abs() < 1e-4 && (back[2] - 1.0).abs() < 1e-4);
    assert!(decode_delta("").unwrap().is_empty());
    let e = decode_delta("not base64!!").unwrap_err().to_string();
    assert!(
        e.starts_with("the realtime server sent reply audio that is not base64"),
        "{e}"
    );
    let odd = base64::engine::general_purpose::STANDARD.encode([1u8, 2, 3]);
    let e = decode_delta(&odd).unwrap_err().to_string();
    assert!(e.contains("3 bytes of reply audio, an odd number"), "{e}");
    assert_eq!(decode_pcm16(&[1, 2, 3]).unwrap_err().to_string(), e);
    assert_eq!(decode_pcm16(&raw).unwrap(), back);
}

fn wav(rate: u32, channels: u16, frames: &[f32]) -> Vec<u8> {
    let spec = hound::WavSpec {
        channels,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut c = std::io::Cursor::new(Vec::new());
    let mut w = hound::WavWriter::new(&mut c, spec).unwrap();
    for s in frames {
        for _ in 0..channels {
            w.write_sample(yui_core::voice::pcm::to_i16(*s)).unwrap();
        }
    }
    w.finalize().unwrap();
    c.into_inner()
}

#[test]
fn a_wav_file_at_any_rate_becomes_the_same_payloads_and_the_reply_round_trips_to_a_wav() {
    let stereo = wav(48_000, 2, &tone(48_000, 500, 300.0, 0.4));
    let payloads = wav_payloads(&stereo, "question.wav").unwrap();
    assert!((25..=26).contains(&payloads.len()), "{}", payloads.len());
    let out = decode_all(&payloads);
    assert_eq!(
        decode_chunks(&wav_chunks(&stereo, "question.wav").unwrap()),
        out
    );
    assert!((out.len() as i64 - 12_000).abs() <= 100, "{}", out.len());
    assert!((frequency(&out[1200..10_800], RATE) - 300.0).abs() < 3.0);
    let e = wav_payloads(b"RIFFnope", "question.wav")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("question.wav is not a WAV file"), "{e}");
    let e = wav_payloads(&wav(16_000, 1, &[]), "empty.wav")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "empty.wav holds no audio");

    // The reply's deltas, two items, into a WAV file: the same samples back, in order.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reply.wav");
    let rec = ReplyRecorder::new(&path);
    let a = tone(RATE, 300, 500.0, 0.3);
    let b = tone(RATE, 200, 250.0, 0.6);
    for piece in a.chunks(1000) {
        rec.delta("item_a", &encode_pcm16(piece)).unwrap();
    }
    assert!(rec.delta("item_a", "%%%").is_err());
    rec.pcm16("item_b", &yui_core::voice::realtime_audio::pcm16_bytes(&b))
        .unwrap();
    assert!(rec.pcm16("item_b", &[0]).is_err());
    rec.finish().unwrap();
    let back = Pcm::from_wav(&std::fs::read(&path).unwrap(), "reply.wav").unwrap();
    assert_eq!(back.rate, RATE);
    assert_eq!(back.samples.len(), a.len() + b.len());
    let want: Vec<f32> = a.iter().chain(&b).copied().collect();
    let worst = back
        .samples
        .iter()
        .zip(&want)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max);
    assert!(worst < 1e-4, "{worst}");
    assert_eq!(rec.played_ms("item_a"), 300);
    assert_eq!(rec.stop_cut(), Some(("item_b".into(), 200)));
    let bad = ReplyRecorder::new(dir.path().join("no/such/dir/x.wav"));
    let e = bad.finish().unwrap_err().to_string();
    assert!(e.starts_with("cannot write the reply's audio to"), "{e}");
}

/// A device in memory. `Manual`: the test pulls on its own clock. `RealTime`: a thread pulls
/// 20 ms every 20 ms holding 40 ms, like a device. `Broken`: opening fails.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Mode {
    Manual,
    RealTime,
    Broken,
}

pub(crate) struct FakeOut {
    mode: Mode,
    feeds: Mutex<Vec<Arc<StreamFeed>>>,
    opened: Mutex<u32>,
    closed: Arc<Mutex<u32>>,
}

impl FakeOut {
    pub(crate) fn new(mode: Mode) -> Arc<Self> {
        Arc::new(Self {
            mode,
            feeds: Mutex::new(Vec::new()),
            opened: Mutex::new(0),
            closed: Arc::new(Mutex::new(0)),
        })
    }
    fn feed(&self) -> Arc<StreamFeed> {
        self.feeds.lock().unwrap().last().cloned().expect("opened")
    }
}

struct Device {
    stop: Arc<std::sync::atomic::AtomicBool>,
    closed: Arc<Mutex<u32>>,
}

impl Drop for Device {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        *self.closed.lock().unwrap() += 1;
    }
}

#[async_trait::async_trait]
impl AudioHost for FakeOut {
    fn devices(&self) -> Result<DeviceList, AudioError> {
        Ok(Default::default())
    }
    async fn play(
        &self,
        _: &Pcm,
        _: Option<&str>,
        _: &CancellationToken,
    ) -> Result<Played, AudioError> {
        Err(AudioError::no_device("clips are not played here"))
    }
    async fn capture(&self, _: Option<&str>) -> Result<Capture, AudioError> {
        Err(AudioError::no_device("no microphone here"))
    }
    async fn open_stream(
        &self,
        feed: Arc<StreamFeed>,
        _: Option<&str>,
    ) -> Result<OpenStream, AudioError> {
        if self.mode == Mode::Broken {
            return Err(AudioError::device(
                "the audio output device \"Fake\" went away",
            ));
        }
        *self.opened.lock().unwrap() += 1;
        self.feeds.lock().unwrap().push(feed.clone());
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        if self.mode == Mode::RealTime {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut buf = vec![0.0; 480];
                let start = Instant::now();
                let mut n = 0u32;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    feed.pull(&mut buf, RATE, Duration::from_millis(40), Instant::now());
                    n += 1;
                    let next = start + Duration::from_millis(20) * n;
                    std::thread::sleep(next.saturating_duration_since(Instant::now()));
                }
            });
        }
        let keep = Device {
            stop,
            closed: self.closed.clone(),
        };
        Ok(OpenStream::new("Fake".into(), RATE, Box::new(keep)))
    }
}

async fn opened(host: &FakeOut) {
    let t = Instant::now();
    while host.feeds.lock().unwrap().is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "the device was never opened"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn batches() -> (
    Arc<Mutex<Vec<EnvelopeBatch>>>,
    yui_core::voice::realtime_audio::EnvelopeSink,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    (seen, Arc::new(move |b| s.lock().unwrap().push(b)))
}

#[tokio::test]
async fn played_ms_is_what_the_device_was_given_minus_what_it_holds_and_stop_cuts_there() {
    let host = FakeOut::new(Mode::Manual);
    let (seen, sink) = batches();
    let player = ReplyPlayer::new(host.clone(), None, Some(sink)).unwrap();
    assert!(!player.is_open());
    // 500 ms of item_1 in 5 deltas; the device opens on the first.
    let audio = tone(RATE, 500, 300.0, 0.5);
    for piece in audio.chunks(2400) {
        player.delta("item_1", &encode_pcm16(piece)).unwrap();
    }
    opened(&host).await;
    assert_eq!(player.played_ms("item_1"), 0);
    let feed = host.feed();
    assert_eq!(feed.pushed(), 12_000);
    // The device takes 100 ms a callback and holds 100 ms.
    let t0 = Instant::now();
    let mut buf = vec![0.0; 2400];
    for k in 0..3u32 {
        feed.pull(
            &mut buf,
            RATE,
            Duration::from_millis(100),
            t0 + Duration::from_millis(100) * k,
        );
    }
    // Given 300 ms by the third callback (at 200 ms), holding 100: 100 ms heard then.
    assert_eq!(
        player.played_ms_at("item_1", t0 + Duration::from_millis(200)),
        100
    );
    assert_eq!(
        player.played_ms_at("item_1", t0 + Duration::from_millis(250)),
        150
    );
    assert_eq!(player.played_ms_at("unknown", t0), 0);
    // Barge-in: 300 ms were handed to the device, which plays them out; the rest is dropped.
    assert_eq!(player.stop_cut(), Some(("item_1".into(), 300)));
    assert_eq!(feed.queued(), 0);
    feed.pull(
        &mut buf,
        RATE,
        Duration::from_millis(100),
        t0 + Duration::from_millis(300),
    );
    assert!(buf.iter().all(|s| *s == 0.0), "silence after the stop");
    assert_eq!(
        player.played_ms_at("item_1", t0 + Duration::from_secs(2)),
        300
    );
    assert_eq!(player.stop_cut(), None, "nothing plays any more");
    // The mouth: 100 ms batches, then a stop.
    let b = seen.lock().unwrap().clone();
    assert_eq!(b.len(), 6, "{b:?}");
    assert!(b[..5].iter().all(|x| x.levels.len() == 5 && !x.last));
    assert_eq!(b[4].start_ms, 400);
    assert!(b[5].stopped && b[5].last);

    // The next reply continues the same stream from where the device is.
    player
        .delta("item_2", &encode_pcm16(&tone(RATE, 100, 300.0, 0.5)))
        .unwrap();
    feed.pull(
        &mut buf,
        RATE,
        Duration::ZERO,
        t0 + Duration::from_millis(400),
    );
    assert_eq!(
        player.played_ms_at("item_2", t0 + Duration::from_millis(450)),
        50
    );
    player.finish().unwrap();
    let last = seen.lock().unwrap().last().cloned().unwrap();
    assert!(last.last && !last.stopped && last.item_id == "item_2");

    // Bad audio is refused in plain words and queues nothing.
    let before = feed.pushed();
    assert!(player
        .delta("item_2", "***")
        .unwrap_err()
        .to_string()
        .contains("not base64"));
    assert_eq!(feed.pushed(), before);
    // Through the transport's seam: bytes in, an odd count logged and skipped, stop.
    let seam: &dyn yui_core::realtime_audio::RealtimeAudioOut = &player;
    seam.on_audio("item_3", &[1, 2, 3]);
    assert_eq!(feed.pushed(), before);
    seam.on_audio(
        "item_3",
        &yui_core::voice::realtime_audio::pcm16_bytes(&[0.2; 480]),
    );
    assert_eq!(feed.pushed(), before + 480);
    assert_eq!(seam.played_ms("item_3"), 0);
    seam.stop();
    assert_eq!(feed.queued(), 0);
}

#[tokio::test]
async fn a_reply_plays_through_in_real_time_then_the_device_closes() {
    let host = FakeOut::new(Mode::RealTime);
    let player = ReplyPlayer::new(host.clone(), None, None)
        .unwrap()
        .with_idle_close(Duration::from_millis(300));
    let t = Instant::now();
    // Deltas arrive faster than they play, as a server sends them.
    for piece in tone(RATE, 600, 300.0, 0.5).chunks(2400) {
        player.delta("item_9", &encode_pcm16(piece)).unwrap();
    }
    tokio::time::sleep(Duration::from_millis(250)).await;
    let mid = player.played_ms("item_9");
    let since = t.elapsed().as_millis() as u64;
    // Heard by now: the time since the first delta, less the device's 40 ms and its opening.
    assert!(
        (100..since).contains(&mid),
        "{mid} ms heard after {since} ms"
    );
    player.finish().unwrap();
    player.drained().await;
    let took = t.elapsed();
    assert_eq!(player.played_ms("item_9"), 600);
    // Drained means heard: not before the audio's length plus the device's 40 ms.
    assert!(took >= Duration::from_millis(620), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    let t = Instant::now();
    while *host.closed.lock().unwrap() == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "the idle device stayed open"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!player.is_open());
    // The next reply opens it again.
    player.delta("item_10", &encode_pcm16(&[0.1; 480])).unwrap();
    let t = Instant::now();
    while *host.opened.lock().unwrap() < 2 {
        assert!(t.elapsed() < Duration::from_secs(5));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(player);
}

#[tokio::test]
async fn a_device_that_cannot_open_is_one_plain_sentence_and_the_next_reply_tries_again() {
    let host = FakeOut::new(Mode::Broken);
    let player = ReplyPlayer::new(host.clone(), None, None).unwrap();
    player.delta("i", &encode_pcm16(&[0.2; 4800])).unwrap();
    let t = Instant::now();
    let err = loop {
        tokio::time::sleep(Duration::from_millis(10)).await;
        if let Err(e) = player.delta("i", &encode_pcm16(&[0.2; 480])) {
            break e;
        }
        assert!(t.elapsed() < Duration::from_secs(5));
    };
    assert_eq!(
        err.to_string(),
        "the audio output device \"Fake\" went away"
    );
    // Nothing waits for a device that is not there.
    tokio::time::timeout(Duration::from_secs(2), player.drained())
        .await
        .expect("drained returns");
    assert_eq!(player.stop_cut(), None);
    assert!(ReplyPlayer::new(host, None, None).is_ok());
}

#[test]
fn a_player_needs_the_runtime_and_says_so() {
    let e = ReplyPlayer::new(FakeOut::new(Mode::Manual), None, None)
        .err()
        .unwrap();
    assert!(e.to_string().contains("outside the async runtime"), "{e}");
}

#[tokio::test]
async fn an_open_microphone_streams_chunks_until_released_and_a_failing_one_says_so() {
    use yui_core::voice::realtime_audio::pump_capture;
    // Push-to-talk: 200 ms of 16 kHz blocks, then the key is released.
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let cap = Capture::new(16_000, "Mic".into(), rx, Box::new(()));
    for b in tone(16_000, 200, 440.0, 0.5).chunks(320) {
        tx.send(Ok(b.to_vec())).await.unwrap();
    }
    let release = CancellationToken::new();
    let sent = Arc::new(Mutex::new(Vec::<Vec<u8>>::new()));
    let s = sent.clone();
    let pump = tokio::spawn({
        let release = release.clone();
        async move {
            pump_capture(cap, &release, |c| {
                s.lock().unwrap().push(c);
                async { true }
            })
            .await
        }
    });
    let t = Instant::now();
    while sent.lock().unwrap().len() < 8 {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "chunks did not stream"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    release.cancel();
    pump.await.unwrap().unwrap();
    let all = sent.lock().unwrap().clone();
    let samples = decode_chunks(&all);
    // 200 ms in, 200 ms (+ the flush's 20 ms of silence) out.
    assert!(
        (4800..=4800 + 480 + 64).contains(&samples.len()),
        "{}",
        samples.len()
    );
    drop(tx);

    // A device that fails mid-way: what was heard went out, then the error.
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let cap = Capture::new(48_000, "Mic".into(), rx, Box::new(()));
    tx.send(Ok(vec![0.1; 960])).await.unwrap();
    tx.send(Err(AudioError::device("the microphone \"Mic\" went away")))
        .await
        .unwrap();
    let n = Arc::new(Mutex::new(0usize));
    let n2 = n.clone();
    let e = pump_capture(cap, &CancellationToken::new(), |_| {
        *n2.lock().unwrap() += 1;
        async { true }
    })
    .await
    .unwrap_err();
    assert_eq!(e.to_string(), "the microphone \"Mic\" went away");
    assert!(*n.lock().unwrap() >= 1);
}
