//! The model's first sentence → the first audio sample handed to the output device, through the
//! whole core stage with the voice on: a scripted Chat Completions stream over 127.0.0.1 writes
//! the first sentence (the clock starts as its bytes are written), the stage's sentence chunker
//! releases it, the engine asks the test kit's scripted speech server (`/audio/speech`, which
//! answers a ready WAV at once), decodes the WAV, computes the lip-sync envelope, emits
//! `speaking` and calls the audio host's `play` (the clock stops there). With both servers
//! answering at once, the whole time is YUI's own share. Goal (issue 31): ≤ 100 ms.
//!
//! Prints p50/p95/max of the two legs — sentence written → speech request read by the server,
//! and request read → first sample to the device — and of the total, over 40 turns.
//! `cargo bench -p yui-core --bench voice_first_audio`. The device's own buffer (PulseAudio's
//! latency) comes after this and is not YUI's.

#[path = "../tests/turn_support/backends.rs"]
mod backends;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio_util::sync::CancellationToken;
use yui_core::backend::Transport;
use yui_core::clock::SystemClock;
use yui_core::paths::Paths;
use yui_core::stage::UserTurn;
use yui_core::stage::{BackendSource, Stage, StageEvent, StageOptions};
use yui_core::turn::Timeouts;
use yui_core::voice::audio::{AudioError, AudioHost, Capture, DeviceList, Played};
use yui_core::voice::pcm::Pcm;
use yui_core::{settings, Store, WindowKind};
use yui_testkit::speech::{patterned_tone, wav_bytes, SpeechReply, SpeechServer};
use yui_testkit::sse::{self, Part, Reply, ScriptServer};

const TURNS: usize = 40;

/// Notes when each clip is handed over, and "plays" it at once.
#[derive(Default)]
struct Stamp(Mutex<Vec<SystemTime>>);

#[async_trait::async_trait]
impl AudioHost for Stamp {
    fn devices(&self) -> Result<DeviceList, AudioError> {
        Ok(Default::default())
    }
    async fn play(
        &self,
        pcm: &Pcm,
        _device: Option<&str>,
        _cancel: &CancellationToken,
    ) -> Result<Played, AudioError> {
        self.0.lock().unwrap().push(SystemTime::now());
        Ok(Played::Finished {
            ms: pcm.duration_ms(),
        })
    }
    async fn capture(&self, _device: Option<&str>) -> Result<Capture, AudioError> {
        Err(AudioError::no_device("no microphone here"))
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn report(name: &str, mut v: Vec<f64>) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let p = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{name:<44} p50 {:7.2} ms  p95 {:7.2} ms  max {:7.2} ms",
        p(0.5),
        p(0.95),
        v[v.len() - 1]
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (mark_tx, mut marks) = tokio::sync::mpsc::unbounded_channel();
        let model = ScriptServer::builder()
            .responder(move |_| {
                Reply::Sse(vec![
                    Part::Mark(mark_tx.clone()),
                    sse::c_text("Hello there, nice to see you. And"),
                    Part::Sleep(Duration::from_millis(200)),
                    sse::c_text(" the rest comes later."),
                    sse::c_finish("stop"),
                    sse::done(),
                ])
            })
            .start()
            .await;
        // One second of speech at 24 kHz, made once.
        let wav = wav_bytes(24_000, &patterned_tone(24_000, &[0.5; 10]));
        let asked: Arc<Mutex<Vec<SystemTime>>> = Arc::default();
        let a2 = asked.clone();
        let speech = SpeechServer::start(
            vec![],
            Some(Box::new(move |_| {
                a2.lock().unwrap().push(SystemTime::now());
                SpeechReply::Bytes("audio/wav".into(), wav.clone())
            })),
        );
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::resolve(Some(dir.path().to_path_buf()));
        let store = Store::open(paths.db_path()).unwrap();
        settings::set(
            &store,
            "yui.voice",
            &json!({"enabled": true, "engine": "openai"}),
        )
        .unwrap();
        settings::set(
            &store,
            "yui.voice.tts",
            &json!({"base_url": speech.base_url, "use_backend_key": false}),
        )
        .unwrap();
        let host = Arc::new(Stamp::default());
        let opts = StageOptions {
            backend: BackendSource::Fixed {
                backend: backends::backend(Transport::ChatCompletions, &model.base_url),
                timeouts: Timeouts::default(),
            },
            headless: false,
            audio: Some(host.clone()),
            ..StageOptions::default()
        };
        let (stage, mut rx) = Stage::new(store, Arc::new(SystemClock), paths, opts);
        let (mut leg1, mut leg2, mut total) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..=TURNS {
            let (asked_before, played_before) =
                (asked.lock().unwrap().len(), host.0.lock().unwrap().len());
            stage
                .user_turn(UserTurn::to("yui", WindowKind::Main, "hi"))
                .unwrap();
            let mark = marks.recv().await.unwrap();
            loop {
                match rx.recv().await.unwrap() {
                    StageEvent::SpeechEnded { note: Some(n), .. } => panic!("speech failed: {n}"),
                    StageEvent::SpeechEnded { .. } => break,
                    _ => {}
                }
            }
            let req = asked.lock().unwrap()[asked_before];
            let play = host.0.lock().unwrap()[played_before];
            // The first turn warms the connection pool and the allocator: not counted.
            if i > 0 {
                leg1.push(ms(req.duration_since(mark).unwrap_or_default()));
                leg2.push(ms(play.duration_since(req).unwrap_or_default()));
                total.push(ms(play.duration_since(mark).unwrap_or_default()));
            }
        }
        println!("voice_first_audio: {TURNS} turns, scripted model and speech server on 127.0.0.1");
        report("first sentence written → speech request read", leg1);
        report("speech request read → first sample to device", leg2);
        report("first sentence → first sample (YUI's share)", total);
    });
}
