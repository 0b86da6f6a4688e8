//! Barge-in latency (docs/PERFORMANCE.md, "Voice"): a character speaks a long reply through the
//! `/audio/speech` engine on the real cpal host into a PulseAudio null sink this bench starts (as
//! `voice_loop_cli` does), the stage's hands-free microphone listens in full duplex to a
//! microphone in memory that delivers 20 ms blocks in real time, and at a known instant the
//! "user" starts speaking. Printed per run and as p50 / max:
//! - onset → stop asked: the first speech block delivered → the speech's playback returned
//!   (voice activity opening an utterance, `Stage::barge_in`, the device stopped);
//! - the output device's own buffer after that (CpalHost plays with a 100 ms buffer).
//!
//!
//! Then hands-free listening idle: the stage's microphone on the real cpal host, capturing the
//! null sink's monitor (quiet) for 30 s, and the process's CPU time over it (/proc/self/stat):
//! the capture thread, the resampler and voice activity, as a share of one core.
//!
//! `cargo bench -p yui-core --bench barge_in` (needs `pulseaudio` and `pactl`).

use serde_json::json;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use yui_core::clock::SystemClock;
use yui_core::paths::Paths;
use yui_core::stage::{AudioChoice, Stage, StageEvent, StageOptions};
use yui_core::turn::TurnEvent;
use yui_core::voice::audio::{AudioError, AudioHost, Capture, DeviceList, Played};
use yui_core::voice::pcm::Pcm;
use yui_core::{settings, Store, WindowKind};
use yui_testkit::speech::{patterned_tone, SpeechReply, SpeechServer};
use yui_testkit::sse::{chat_say, ScriptServer};

const RUNS: usize = 12;

/// The real host, noting when a playback returned stopped.
struct Timed {
    real: Arc<dyn AudioHost>,
    stopped: Mutex<Option<Instant>>,
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

/// A microphone in memory: 400 ms of quiet, then speech, in real-time 20 ms blocks; notes when
/// the first speech block was delivered.
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
        Err(AudioError("no speakers".into()))
    }
    async fn capture(&self, _: Option<&str>) -> Result<Capture, AudioError> {
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let (onset, ended, len) = (self.onset.clone(), self.ended.clone(), self.speech_blocks);
        *onset.lock().unwrap() = None;
        *ended.lock().unwrap() = None;
        tokio::spawn(async move {
            let voice = patterned_tone(16_000, &[0.3; 20]);
            let mut tick = tokio::time::interval(Duration::from_millis(20));
            for i in 0.. {
                tick.tick().await;
                let quiet = len.is_some_and(|n| i >= 20 + n);
                let block = if i < 20 || quiet {
                    vec![0.0; 320]
                } else {
                    let at = ((i - 20) * 320) % (voice.len() - 320);
                    voice[at..at + 320].to_vec()
                };
                if tx.send(Ok(block)).await.is_err() {
                    return;
                }
                if i == 20 {
                    *onset.lock().unwrap() = Some(Instant::now());
                }
                if len.is_some_and(|n| i + 1 == 20 + n) {
                    *ended.lock().unwrap() = Some(Instant::now());
                }
            }
        });
        Ok(Capture::new(16_000, "bench mic".into(), rx, Box::new(())))
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
            speech_blocks: Some(60),
            ended: ended.clone(),
        }))),
        duplex: Some(false),
        headless: true,
        ..StageOptions::default()
    };
    let (stage, mut rx) = Stage::new(store, Arc::new(SystemClock), paths, opts);
    let mut figures = Vec::new();
    for _ in 0..8 {
        stage.mic_listen("yui", WindowKind::Main).unwrap();
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
    stage.mic_listen("yui", WindowKind::Main).unwrap();
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

/// The daemon, and its runtime dir (kept until the daemon is stopped).
struct Pulse(Child, #[allow(dead_code)] tempfile::TempDir);
impl Drop for Pulse {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn pulse() -> Pulse {
    let rt = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(rt.path().join("home")).unwrap();
    let child = Command::new("pulseaudio")
        .args([
            "--daemonize=no",
            "-n",
            "--exit-idle-time=-1",
            "--disable-shm=yes",
            "--load=module-null-sink sink_name=yuisink",
            "--load=module-native-protocol-unix auth-anonymous=1",
        ])
        .env("XDG_RUNTIME_DIR", rt.path())
        .env("HOME", rt.path().join("home"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("pulseaudio");
    let socket = rt.path().join("pulse/native");
    let t = Instant::now();
    while !socket.exists() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    // The bench's own process talks to it (cpal's PulseAudio client reads these).
    std::env::set_var("PULSE_SERVER", format!("unix:{}", socket.display()));
    std::env::set_var("XDG_RUNTIME_DIR", rt.path());
    Pulse(child, rt)
}

#[tokio::main]
async fn main() {
    let _pulse = pulse();
    let timed = Arc::new(Timed {
        real: Arc::new(yui_core::voice::cpal_host::CpalHost::new()),
        stopped: Mutex::new(None),
    });
    yui_core::voice::hosts::install(timed.clone());
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
    for run in 0..RUNS {
        *timed.stopped.lock().unwrap() = None;
        let turn = stage.user_turn("yui", WindowKind::Main, "tell me").unwrap();
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
        stage.mic_listen("yui", WindowKind::Main).unwrap();
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
        println!("run {run}: speech onset → playback stopped {ms:.1} ms");
        figures.push(ms);
        // Let the next turn start from quiet (and drain the events of this one).
        tokio::time::sleep(Duration::from_millis(1500)).await;
        while rx.try_recv().is_ok() {}
    }
    figures.sort_by(f64::total_cmp);
    end_to_text(&speech.base_url, &chat.base_url).await;
    idle_listening().await;
    if figures.is_empty() {
        println!("no figures");
        return;
    }
    println!(
        "barge-in over {} runs: onset → stopped p50 {:.1} ms, max {:.1} ms; + the output buffer (100 ms) → heard stop p50 {:.1} ms, max {:.1} ms (goal ≤ 200 ms)",
        figures.len(),
        figures[figures.len() / 2],
        figures[figures.len() - 1],
        figures[figures.len() / 2] + 100.0,
        figures[figures.len() - 1] + 100.0,
    );
}
