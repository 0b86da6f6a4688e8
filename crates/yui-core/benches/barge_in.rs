//! Barge-in latency (docs/PERFORMANCE.md, "Voice"): a character speaks a long reply through the
//! `/audio/speech` engine on the real cpal host into a PulseAudio null sink this bench starts (as
//! `voice_loop_cli` does), the stage's hands-free microphone listens in full duplex to a
//! microphone in memory that delivers blocks as long as the real host's
//! (`cpal_host::CAPTURE_BUFFER_MS`, 40 ms) in real time, and at a known instant the "user" starts
//! speaking (at the start of a block). Printed per run and as p50 / max:
//! - onset → stopped: the first speech block delivered → the speech's playback returned
//!   (voice activity's onset, `Stage::barge_in`, the stream stopped and deleted);
//! - speech start → stopped: the same plus the block's length, since a real device hands the
//!   block over only once it is full (what the user waits for);
//! - onset → quiet on the sink: the last loud block of the null sink's monitor, read through the
//!   real host with its 40 ms capture buffer (so an upper bound of when the sound stopped: it
//!   includes the capture's own latency). For scale, the same monitor's delay at the start of a
//!   clip (play called → first loud block: output plus capture latency) is printed too.
//!
//! Then hands-free listening idle: the stage's microphone on the real cpal host, capturing the
//! null sink's monitor (quiet) for 30 s, and the process's CPU time over it (/proc/self/stat):
//! the capture thread, the resampler and voice activity, as a share of one core.
//!
//! `cargo bench -p yui-core --bench barge_in` (needs `pulseaudio` and `pactl`).

use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use yui_core::clock::SystemClock;
use yui_core::paths::Paths;
use yui_core::stage::TurnTo;
use yui_core::stage::UserTurn;
use yui_core::stage::{AudioChoice, Stage, StageEvent, StageOptions};
use yui_core::turn::TurnEvent;
use yui_core::voice::audio::{AudioError, AudioHost, Capture, DeviceList, Played};
use yui_core::voice::pcm::Pcm;
use yui_core::{settings, Store, WindowKind};
use yui_testkit::speech::{patterned_tone, SpeechReply, SpeechServer};
use yui_testkit::sse::{chat_say, ScriptServer};

const RUNS: usize = 20;
/// The real host's capture block: its length, and its samples at 16 kHz.
const BLOCK_MS: u64 = yui_core::voice::cpal_host::CAPTURE_BUFFER_MS as u64;
const BLOCK: usize = 16 * BLOCK_MS as usize;
/// 400 ms of quiet before the speech.
const QUIET_BLOCKS: usize = (400 / BLOCK_MS) as usize;

#[path = "support/pulse.rs"]
mod support_pulse;
use support_pulse::pulse;

/// The real host, noting when a playback returned stopped and when the first clip was given.
struct Timed {
    real: Arc<dyn AudioHost>,
    stopped: Mutex<Option<Instant>>,
    first_play: Mutex<Option<Instant>>,
}

#[async_trait::async_trait]
impl AudioHost for Timed {
    fn devices(&self) -> Result<DeviceList, AudioError> {
        self.real.devices()
    }
    async fn play(
        &self,
        pcm: &Pcm,
        device: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Played, AudioError> {
        self.first_play
            .lock()
            .unwrap()
            .get_or_insert_with(Instant::now);
        let r = self.real.play(pcm, device, cancel).await;
        if matches!(r, Ok(Played::Cancelled { .. })) {
            *self.stopped.lock().unwrap() = Some(Instant::now());
        }
        r
    }
    async fn capture(&self, device: Option<&str>) -> Result<Capture, AudioError> {
        self.real.capture(device).await
    }
}

/// A microphone in memory: 400 ms of quiet, then speech, in real-time blocks of the real host's
/// length; notes when the first speech block was delivered.
struct Mic {
    onset: Arc<Mutex<Option<Instant>>>,
    /// Speech lasts this many blocks, then quiet (`None`: speech goes on).
    speech_blocks: Option<usize>,
    /// When the last speech block was delivered.
    ended: Arc<Mutex<Option<Instant>>>,
}

#[async_trait::async_trait]
impl AudioHost for Mic {
    fn devices(&self) -> Result<DeviceList, AudioError> {
        Ok(Default::default())
    }
    async fn play(
        &self,
        _: &Pcm,
        _: Option<&str>,
        _: &CancellationToken,
    ) -> Result<Played, AudioError> {
        Err(AudioError::no_device("no speakers"))
    }
    async fn capture(&self, _: Option<&str>) -> Result<Capture, AudioError> {
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let (onset, ended, len) = (self.onset.clone(), self.ended.clone(), self.speech_blocks);
        *onset.lock().unwrap() = None;
        *ended.lock().unwrap() = None;
        tokio::spawn(async move {
            let voice = patterned_tone(16_000, &[0.3; 20]);
            let mut tick = tokio::time::interval(Duration::from_millis(BLOCK_MS));
            for i in 0.. {
                tick.tick().await;
                let quiet = len.is_some_and(|n| i >= QUIET_BLOCKS + n);
                let block = if i < QUIET_BLOCKS || quiet {
                    vec![0.0; BLOCK]
                } else {
                    let at = ((i - QUIET_BLOCKS) * BLOCK) % (voice.len() - BLOCK);
                    voice[at..at + BLOCK].to_vec()
                };
                if tx.send(Ok(block)).await.is_err() {
                    return;
                }
                if i == QUIET_BLOCKS {
                    *onset.lock().unwrap() = Some(Instant::now());
                }
                if len.is_some_and(|n| i + 1 == QUIET_BLOCKS + n) {
                    *ended.lock().unwrap() = Some(Instant::now());
                }
            }
        });
        Ok(Capture::new(16_000, "bench mic".into(), rx, Box::new(())))
    }
}

/// When the null sink's monitor carried sound (the loud blocks' arrival times of this run).
#[derive(Default)]
struct Monitor {
    loud: Mutex<Vec<Instant>>,
}

/// Read the default source (the null sink's monitor) through the real host.
async fn watch_monitor(host: Arc<dyn AudioHost>, m: Arc<Monitor>) {
    let mut cap = match host.capture(None).await {
        Ok(c) => c,
        Err(e) => {
            println!("no monitor figures: {e}");
            return;
        }
    };
    while let Some(Ok(block)) = cap.blocks.recv().await {
        if yui_core::voice::pcm::rms(&block) > 0.02 {
            m.loud.lock().unwrap().push(Instant::now());
        }
    }
}

/// The process's CPU time so far (user + system), from /proc/self/stat.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    // Fields 14 and 15 (utime, stime) are the 12th and 13th after the state letter.
    let ticks = f.get(10).copied().unwrap_or(0) + f.get(11).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// Hands-free: the end of a 1.2 s utterance (last speech block delivered) → `Heard` (the text
/// from the scripted speech-to-text server), with the default 600 ms hang-over. YUI's share is
/// the figure less the hang-over (the scripted server answers in well under a millisecond).
async fn end_to_text(speech: &str, chat: &str) {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    yui_core::backend::update(
        &store,
        &yui_core::backend::BackendChange {
            base_url: Some(chat.to_string()),
            model: Some("m".into()),
            ..Default::default()
        },
    )
    .unwrap();
    settings::set(&store, "yui.voice.listen", &json!({"mode": "hands_free"})).unwrap();
    settings::set(&store, "yui.voice.stt", &json!({"base_url": speech})).unwrap();
    let ended = Arc::new(Mutex::new(None));
    let opts = StageOptions {
        mic_audio: AudioChoice(Some(Arc::new(Mic {
            onset: Default::default(),
            speech_blocks: Some((1200 / BLOCK_MS) as usize),
            ended: ended.clone(),
        }))),
        duplex: Some(false),
        headless: true,
        ..StageOptions::default()
    };
    let (stage, mut rx) = Stage::new(store, Arc::new(SystemClock), paths, opts);
    let mut figures = Vec::new();
    for _ in 0..8 {
        stage
            .mic_listen(TurnTo::preset("yui", WindowKind::Main))
            .unwrap();
        let heard = loop {
            match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
                Ok(Some(StageEvent::Heard { .. })) => break Some(Instant::now()),
                Ok(Some(_)) => continue,
                _ => break None,
            }
        };
        stage.mic_stop();
        if let (Some(h), Some(e)) = (heard, *ended.lock().unwrap()) {
            figures.push(h.saturating_duration_since(e).as_secs_f64() * 1000.0);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        while rx.try_recv().is_ok() {}
    }
    figures.sort_by(f64::total_cmp);
    if let (Some(min), Some(max)) = (figures.first(), figures.last()) {
        println!(
            "end of speech → text ({} runs, hang-over 600 ms, scripted server): p50 {:.1} ms, min {min:.1}, max {max:.1}",
            figures.len(),
            figures[figures.len() / 2]
        );
    }
}

/// Hands-free listening on the real device for 30 s of quiet: CPU as a share of one core.
async fn idle_listening() {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    settings::set(&store, "yui.voice.listen", &json!({"mode": "hands_free"})).unwrap();
    let opts = StageOptions {
        duplex: Some(false),
        ..StageOptions::default()
    };
    let (stage, _rx) = Stage::new(store, Arc::new(SystemClock), paths, opts);
    let before = cpu_time();
    let quiet = Instant::now();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let base = cpu_time() - before;
    let base_share = base.as_secs_f64() / quiet.elapsed().as_secs_f64() * 100.0;
    stage
        .mic_listen(TurnTo::preset("yui", WindowKind::Main))
        .unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let live = stage.mic_status();
    let before = cpu_time();
    let t = Instant::now();
    tokio::time::sleep(Duration::from_secs(30)).await;
    let used = cpu_time() - before;
    let share = used.as_secs_f64() / t.elapsed().as_secs_f64() * 100.0;
    stage.mic_stop();
    println!(
        "hands-free listening idle ({:?}, live {}): {:.2} % of one core over {:.0} s ({} ms CPU); the bench process with the microphone off: {:.2} %",
        live.state,
        live.live,
        share,
        t.elapsed().as_secs_f64(),
        used.as_millis(),
        base_share
    );
}

#[tokio::main]
async fn main() {
    let _pulse = pulse();
    let real: Arc<dyn AudioHost> = Arc::new(yui_core::voice::cpal_host::CpalHost::new());
    let timed = Arc::new(Timed {
        real: real.clone(),
        stopped: Mutex::new(None),
        first_play: Mutex::new(None),
    });
    yui_core::voice::hosts::install(timed.clone());
    let monitor = Arc::new(Monitor::default());
    let watching = tokio::spawn(watch_monitor(real, monitor.clone()));
    let speech = SpeechServer::start(
        vec![],
        Some(Box::new(|seen| {
            if seen.path.ends_with("/transcriptions") {
                SpeechReply::text("wait")
            } else {
                SpeechReply::wav(24_000, &patterned_tone(24_000, &[0.5; 80]))
            }
        })),
    );
    let chat = ScriptServer::builder()
        .responder(|_| chat_say("Let me tell you a long story about the sea and the wind."))
        .start()
        .await;
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    yui_core::backend::update(
        &store,
        &yui_core::backend::BackendChange {
            base_url: Some(chat.base_url.clone()),
            model: Some("m".into()),
            ..Default::default()
        },
    )
    .unwrap();
    settings::set(
        &store,
        "yui.voice",
        &json!({"enabled": true, "engine": "openai"}),
    )
    .unwrap();
    settings::set(
        &store,
        "yui.voice.tts",
        &json!({"base_url": speech.base_url}),
    )
    .unwrap();
    settings::set(
        &store,
        "yui.voice.stt",
        &json!({"base_url": speech.base_url}),
    )
    .unwrap();
    settings::set(&store, "yui.voice.listen", &json!({"mode": "hands_free"})).unwrap();
    let onset = Arc::new(Mutex::new(None));
    let opts = StageOptions {
        mic_audio: AudioChoice(Some(Arc::new(Mic {
            onset: onset.clone(),
            speech_blocks: None,
            ended: Default::default(),
        }))),
        duplex: Some(true),
        ..StageOptions::default()
    };
    let (stage, mut rx) = Stage::new(store, Arc::new(SystemClock), paths, opts);
    let mut figures = Vec::new();
    let (mut quiet, mut start_delay) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        *timed.stopped.lock().unwrap() = None;
        *timed.first_play.lock().unwrap() = None;
        monitor.loud.lock().unwrap().clear();
        let turn = stage
            .user_turn(UserTurn::to("yui", WindowKind::Main, "tell me"))
            .unwrap();
        while let Some(ev) = rx.recv().await {
            if matches!(
                ev,
                StageEvent::Turn {
                    event: TurnEvent::TurnEnd { .. },
                    ..
                }
            ) {
                break;
            }
        }
        stage.bubble_done(&turn);
        // Speaking for a while (synthesis, then playback on the null sink).
        let t = Instant::now();
        while !stage.is_speaking() && t.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(700 + 37 * run as u64)).await;
        stage
            .mic_listen(TurnTo::preset("yui", WindowKind::Main))
            .unwrap();
        let t = Instant::now();
        let stopped = loop {
            if let Some(s) = *timed.stopped.lock().unwrap() {
                break Some(s);
            }
            if t.elapsed() > Duration::from_secs(10) {
                break None;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        stage.mic_stop();
        let (Some(stopped), Some(on)) = (stopped, *onset.lock().unwrap()) else {
            println!("run {run}: no barge-in within 10 s");
            continue;
        };
        let ms = stopped.saturating_duration_since(on).as_secs_f64() * 1000.0;
        // The monitor's last loud block of this clip (the next clip is 1.5 s away).
        tokio::time::sleep(Duration::from_millis(400)).await;
        let loud = monitor.loud.lock().unwrap().clone();
        let ms_after =
            |a: Instant, b: Instant| b.saturating_duration_since(a).as_secs_f64() * 1000.0;
        let q = loud.last().map(|l| ms_after(on, *l));
        let d = timed
            .first_play
            .lock()
            .unwrap()
            .and_then(|p| loud.iter().find(|l| **l > p).map(|l| ms_after(p, *l)));
        println!(
            "run {run}: speech onset → playback stopped {ms:.1} ms (from the speech's start {:.1} ms); → monitor quiet {}; monitor delay at the clip's start {}",
            ms + BLOCK_MS as f64,
            q.map_or("?".into(), |q| format!("{q:.1} ms")),
            d.map_or("?".into(), |d| format!("{d:.1} ms"))
        );
        figures.push(ms);
        quiet.extend(q);
        start_delay.extend(d);
        // Let the next turn start from quiet (and drain the events of this one).
        tokio::time::sleep(Duration::from_millis(1500)).await;
        while rx.try_recv().is_ok() {}
    }
    // The monitor's capture must not count in the idle figure.
    watching.abort();
    figures.sort_by(f64::total_cmp);
    let mut from_start: Vec<f64> = figures.iter().map(|f| f + BLOCK_MS as f64).collect();
    end_to_text(&speech.base_url, &chat.base_url).await;
    idle_listening().await;
    if figures.is_empty() {
        println!("no figures");
        return;
    }
    let pct = |v: &mut Vec<f64>, p: f64| -> String {
        if v.is_empty() {
            return "?".into();
        }
        v.sort_by(f64::total_cmp);
        let i = ((v.len() - 1) as f64 * p).round() as usize;
        format!("{:.1}", v[i])
    };
    println!(
        "barge-in over {} runs: onset (block delivered) → stopped p50 {} ms, p99 {} ms, max {} ms; speech start → stopped p50 {} ms, max {} ms ({BLOCK_MS} ms blocks); onset → monitor quiet ({} runs) p50 {} ms, p99 {} ms, max {} ms (goal ≤ 200 ms); monitor delay at a clip's start p50 {} ms, max {} ms",
        figures.len(),
        pct(&mut figures, 0.5),
        pct(&mut figures, 0.99),
        pct(&mut figures, 1.0),
        pct(&mut from_start, 0.5),
        pct(&mut from_start, 1.0),
        quiet.len(),
        pct(&mut quiet, 0.5),
        pct(&mut quiet, 0.99),
        pct(&mut quiet, 1.0),
        pct(&mut start_delay, 0.5),
        pct(&mut start_delay, 1.0),
    );
}
