//! End of the user's speech → the first audio sample of the reply, part by part, with real offline
//! speech servers (docs/PERFORMANCE.md, "Voice: the whole loop with real servers"). Run by
//! `scripts/voice-latency.sh`, which starts faster-whisper-server (whisper tiny.en) and
//! local-tts-studio (Piper) from PyPI and sets `YUI_STT_URL`, `YUI_TTS_URL` and
//! `YUI_SPOKEN_WAV` (espeak-ng's question); without them this prints how to run it and exits.
//!
//! The whole core stage runs as in the app: the hands-free microphone (a microphone in memory
//! delivering the WAV in real-time blocks as long as the real host's, 40 ms at 16 kHz, then quiet) with the default 600 ms
//! hang-over, speech-to-text, the user's turn against a scripted Chat Completions model on
//! 127.0.0.1 (it answers at once, so the model's own time is ~0), the sentence chunker,
//! `/audio/speech`, and playback on the real cpal host into a PulseAudio null sink this bench
//! starts. Both speech servers sit behind a byte-forwarding proxy on 127.0.0.1 that notes when
//! each request went in and its answer's first and last bytes came out, so the servers' time is
//! measured, not guessed. Per run and as medians: hang-over (end of speech → the upload starts),
//! speech-to-text server, text → model request, model → first sentence, first sentence → speech
//! request, speech server, answer → `play`, and the sink's monitor first loud (an upper bound of
//! the first sample heard: it includes the capture's latency). YUI's own share is the parts that
//! are neither the hang-over, a server nor the device.

#[path = "../tests/turn_support/backends.rs"]
mod backends;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use yui_core::backend::Transport;
use yui_core::clock::SystemClock;
use yui_core::paths::Paths;
use yui_core::stage::TurnTo;
use yui_core::stage::{AudioChoice, BackendSource, Stage, StageEvent, StageOptions};
use yui_core::turn::Timeouts;
use yui_core::voice::audio::{AudioError, AudioHost, Capture, DeviceList, Played};
use yui_core::voice::pcm::{Pcm, STT_RATE};
use yui_core::{settings, Store, WindowKind};
use yui_testkit::sse::{self, Part, Reply, ScriptServer};

#[path = "support/pulse.rs"]
mod support_pulse;

const RUNS: usize = 6;
/// The real host's capture block: its length, and its samples at 16 kHz.
const BLOCK_MS: u64 = yui_core::voice::cpal_host::CAPTURE_BUFFER_MS as u64;
const BLOCK: usize = 16 * BLOCK_MS as usize;
const HANGOVER_MS: u64 = 600;

/// Bytes seen by a proxy: (to the server?, when).
type Log = Arc<Mutex<Vec<(bool, SystemTime)>>>;

/// A proxy on 127.0.0.1 in front of `url` (`http://host:port/path`): the same URL through it.
async fn proxy(url: &str, log: Log) -> String {
    let u = reqwest::Url::parse(url).expect("a URL");
    let upstream = format!(
        "{}:{}",
        u.host_str().unwrap_or("127.0.0.1"),
        u.port_or_known_default().unwrap_or(80)
    );
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((c, _)) = l.accept().await {
            let Ok(up) = TcpStream::connect(&upstream).await else {
                continue;
            };
            let (cr, cw) = c.into_split();
            let (ur, uw) = up.into_split();
            tokio::spawn(pipe(cr, uw, true, log.clone()));
            tokio::spawn(pipe(ur, cw, false, log.clone()));
        }
    });
    format!("http://{addr}{}", u.path().trim_end_matches('/'))
}

async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    up: bool,
    log: Log,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        log.lock().unwrap().push((up, SystemTime::now()));
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// The first request after `t` through a proxy: (request's first byte, answer's first byte,
/// answer's last byte).
fn exchange(log: &Log, t: SystemTime) -> Option<(SystemTime, SystemTime, SystemTime)> {
    let l = log.lock().unwrap();
    let sent = l.iter().find(|(up, at)| *up && *at >= t)?.1;
    let first = l.iter().find(|(up, at)| !*up && *at >= sent)?.1;
    // The answer ends at the last server byte before the next request.
    let next = l.iter().find(|(up, at)| *up && *at > first).map(|x| x.1);
    let last = l
        .iter()
        .filter(|(up, at)| !*up && *at >= first && next.is_none_or(|n| *at < n))
        .map(|x| x.1)
        .next_back()?;
    Some((sent, first, last))
}

/// A microphone in memory: quiet, the question in real-time blocks of the real host's length,
/// then quiet; notes when the question's last block with sound was delivered, less what of that
/// block came after the sound (so the end of speech is when the sound ended: a real device hands
/// a block over only once it is full, and that wait counts in the hang-over part).
struct Mic {
    question: Vec<f32>,
    ended: Arc<Mutex<Option<SystemTime>>>,
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
        let (q, ended) = (self.question.clone(), self.ended.clone());
        *ended.lock().unwrap() = None;
        tokio::spawn(async move {
            let quiet = vec![0.0; BLOCK];
            let blocks: Vec<Vec<f32>> = std::iter::repeat_n(quiet.clone(), 300 / BLOCK_MS as usize)
                .chain(q.chunks(BLOCK).map(<[f32]>::to_vec))
                .collect();
            // The end of speech: the last block with sound in it (espeak-ng ends with quiet),
            // and where in it the sound ended (its last loud 10 ms).
            let n = 1 + blocks
                .iter()
                .rposition(|b| yui_core::voice::pcm::rms(b) > 0.01)
                .unwrap_or(blocks.len() - 1);
            let tail = blocks[n - 1]
                .chunks(160)
                .rposition(|c| yui_core::voice::pcm::rms(c) > 0.01)
                .map_or(0, |k| BLOCK_MS.saturating_sub(10 * (k as u64 + 1)));
            let mut tick = tokio::time::interval(Duration::from_millis(BLOCK_MS));
            for (i, b) in blocks
                .into_iter()
                .chain(std::iter::repeat(quiet))
                .enumerate()
            {
                tick.tick().await;
                if tx.send(Ok(b)).await.is_err() {
                    return;
                }
                if i + 1 == n {
                    *ended.lock().unwrap() = Some(SystemTime::now() - Duration::from_millis(tail));
                }
            }
        });
        Ok(Capture::new(STT_RATE, "bench mic".into(), rx, Box::new(())))
    }
}

/// The real host, noting when the first clip of a run was handed over.
struct Timed {
    real: Arc<dyn AudioHost>,
    played: Mutex<Option<SystemTime>>,
}

#[async_trait::async_trait]
impl AudioHost for Timed {
    fn devices(&self) -> Result<DeviceList, AudioError> {
        self.real.devices()
    }
    async fn play(
        &self,
        pcm: &Pcm,
        d: Option<&str>,
        c: &CancellationToken,
    ) -> Result<Played, AudioError> {
        self.played
            .lock()
            .unwrap()
            .get_or_insert_with(SystemTime::now);
        self.real.play(pcm, d, c).await
    }
    async fn capture(&self, d: Option<&str>) -> Result<Capture, AudioError> {
        self.real.capture(d).await
    }
}

/// The sink's monitor: arrival times of its loud blocks.
async fn watch_monitor(host: Arc<dyn AudioHost>, loud: Arc<Mutex<Vec<SystemTime>>>) {
    let Ok(mut cap) = host.capture(None).await else {
        println!("no monitor: the first sample heard is not measured");
        return;
    };
    while let Some(Ok(b)) = cap.blocks.recv().await {
        if yui_core::voice::pcm::rms(&b) > 0.02 {
            loud.lock().unwrap().push(SystemTime::now());
        }
    }
}

fn ms(a: SystemTime, b: SystemTime) -> f64 {
    b.duration_since(a).unwrap_or_default().as_secs_f64() * 1000.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

#[tokio::main]
async fn main() {
    let (Ok(stt), Ok(tts), Ok(wav)) = (
        std::env::var("YUI_STT_URL"),
        std::env::var("YUI_TTS_URL"),
        std::env::var("YUI_SPOKEN_WAV"),
    ) else {
        println!("voice_latency: needs real speech servers; run scripts/voice-latency.sh");
        return;
    };
    let bytes = std::fs::read(&wav).expect("the spoken question");
    let question = Pcm::from_wav(&bytes, &wav)
        .and_then(|p| p.resampled(STT_RATE))
        .expect("a 16-bit WAV");
    let _pulse = support_pulse::pulse();
    let real: Arc<dyn AudioHost> = Arc::new(yui_core::voice::cpal_host::CpalHost::new());
    let loud: Arc<Mutex<Vec<SystemTime>>> = Arc::default();
    tokio::spawn(watch_monitor(real.clone(), loud.clone()));
    let host = Arc::new(Timed {
        real,
        played: Mutex::new(None),
    });
    let (stt_log, tts_log): (Log, Log) = (Arc::default(), Arc::default());
    let stt_url = proxy(&stt, stt_log.clone()).await;
    let tts_url = proxy(&tts, tts_log.clone()).await;
    let asked: Arc<Mutex<Vec<SystemTime>>> = Arc::default();
    let (mark_tx, mut marks) = tokio::sync::mpsc::unbounded_channel();
    let a2 = asked.clone();
    let model = ScriptServer::builder()
        .responder(move |_| {
            a2.lock().unwrap().push(SystemTime::now());
            Reply::Sse(vec![
                Part::Mark(mark_tx.clone()),
                sse::c_text("It is half past two. Time for a cup of tea."),
                sse::c_finish("stop"),
                sse::done(),
            ])
        })
        .start()
        .await;
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let set = |k: &str, v: serde_json::Value| settings::set(&store, k, &v).unwrap();
    set("yui.voice", json!({"enabled": true, "engine": "openai"}));
    set(
        "yui.voice.tts",
        json!({"base_url": tts_url, "model": "piper", "voice": "en_US-joe-medium", "use_backend_key": false}),
    );
    set(
        "yui.voice.stt",
        json!({"base_url": stt_url, "language": "en", "use_backend_key": false}),
    );
    set(
        "yui.voice.listen",
        json!({"mode": "hands_free", "hangover_ms": HANGOVER_MS}),
    );
    let ended = Arc::new(Mutex::new(None));
    let opts = StageOptions {
        backend: BackendSource::Fixed {
            backend: backends::backend(Transport::ChatCompletions, &model.base_url),
            timeouts: Timeouts::default(),
        },
        // Not headless: a headless stage speaks nothing. Playback finished then waits for the
        // bubble, which nobody shows here; the speech's own end is what this bench waits for.
        headless: false,
        audio: Some(host.clone()),
        mic_audio: AudioChoice(Some(Arc::new(Mic {
            question: question.samples,
            ended: ended.clone(),
        }))),
        duplex: Some(false),
        ..StageOptions::default()
    };
    let (stage, mut rx) = Stage::new(store, Arc::new(SystemClock), paths, opts);
    let names = [
        "hang-over: end of speech → upload starts",
        "speech-to-text server (tiny.en)",
        "text → model request (YUI)",
        "model → first sentence (scripted)",
        "first sentence → speech request (YUI)",
        "speech server (Piper), request → last byte",
        "audio received → play (YUI)",
        "play → monitor first loud (device + capture)",
        "end of speech → play",
        "YUI's own share (less the 600 ms hang-over)",
    ];
    let mut table: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for run in 0..=RUNS {
        *host.played.lock().unwrap() = None;
        loud.lock().unwrap().clear();
        stage
            .mic_listen(TurnTo::preset("yui", WindowKind::Main))
            .unwrap();
        let mut heard = None;
        let done = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(ev) = rx.recv().await {
                match ev {
                    StageEvent::Heard { text, .. } => heard = Some(text),
                    StageEvent::SpeechEnded { note: Some(n), .. } => return Err(n),
                    StageEvent::SpeechEnded { .. } => return Ok(()),
                    _ => {}
                }
            }
            Err("the stage closed".to_string())
        })
        .await;
        stage.mic_stop();
        let mark = marks.try_recv().ok();
        while marks.try_recv().is_ok() {}
        let end = *ended.lock().unwrap();
        let play = *host.played.lock().unwrap();
        let (Ok(Ok(())), Some(end), Some(mark), Some(play)) = (&done, end, mark, play) else {
            println!(
                "run {run}: incomplete (heard {heard:?}; speech {done:?}; end of speech {}, first sentence {}, play {})",
                end.is_some(),
                mark.is_some(),
                play.is_some()
            );
            continue;
        };
        let (Some(s), Some(t)) = (exchange(&stt_log, end), exchange(&tts_log, mark)) else {
            println!("run {run}: a proxy saw no exchange");
            continue;
        };
        let model_asked = asked
            .lock()
            .unwrap()
            .iter()
            .copied()
            .find(|a| *a >= s.2)
            .unwrap_or(mark);
        let first_loud = loud.lock().unwrap().iter().copied().find(|l| *l >= play);
        let parts = [
            ms(end, s.0),
            ms(s.0, s.2),
            ms(s.2, model_asked),
            ms(model_asked, mark),
            ms(mark, t.0),
            ms(t.0, t.2),
            ms(t.2, play),
            first_loud.map_or(f64::NAN, |l| ms(play, l)),
            ms(end, play),
            ms(end, s.0) - HANGOVER_MS as f64
                + ms(s.2, model_asked)
                + ms(mark, t.0)
                + ms(t.2, play),
        ];
        println!(
            "run {run}: heard {heard:?}; {}",
            names
                .iter()
                .zip(parts)
                .map(|(n, p)| format!("{n} {p:.0} ms"))
                .collect::<Vec<_>>()
                .join("; ")
        );
        // The first run loads the models: not counted.
        if run > 0 {
            for (col, p) in table.iter_mut().zip(parts) {
                col.push(p);
            }
        }
        tokio::time::sleep(Duration::from_millis(1500)).await;
        while rx.try_recv().is_ok() {}
    }
    println!("voice_latency: medians over {} warm runs", table[0].len());
    for (n, col) in names.iter().zip(table) {
        println!("  {n:<46} {:8.1} ms", median(col));
    }
}
