//! The pipeline on a microphone in memory (40 ms blocks at 16 kHz, paced in real time) and a
//! transcriber that reports each utterance's length: the stage's and the CLI's tests run it with
//! a real speech-to-text server over HTTP (crates/yui-core/tests/mic.rs, voice_test_listen.rs).

use super::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const BLOCK: usize = 640;

/// Words for a clip: its length in ms.
struct Lengths;

#[async_trait]
impl Transcriber for Lengths {
    async fn transcribe(&self, clip: &Pcm) -> Result<String, SpeechError> {
        Ok(format!("{} ms", clip.samples.len() / 16))
    }
}

/// A voice-like tone (voice activity hears it as speech).
fn voice(ms: usize) -> Vec<f32> {
    (0..ms * 16)
        .map(|i| 0.3 * ((i as f32) * 0.07).sin() * (1.0 + 0.5 * ((i as f32) * 0.003).sin()))
        .collect()
}

fn quiet(ms: usize) -> Vec<f32> {
    vec![0.0; ms * 16]
}

struct Open(Arc<AtomicUsize>);
impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A microphone playing `audio` in 40 ms blocks every `pace`, then silence for ever (or, with
/// `stall`, nothing at all); `open` counts it while the device is open.
fn mic(audio: Vec<f32>, pace: Duration, stall: bool, open: &Arc<AtomicUsize>) -> Capture {
    let (tx, rx) = mpsc::channel(64);
    open.fetch_add(1, Ordering::SeqCst);
    tokio::spawn(async move {
        for b in audio.chunks(BLOCK) {
            tokio::time::sleep(pace).await;
            if tx.send(Ok(b.to_vec())).await.is_err() {
                return;
            }
        }
        if stall {
            std::future::pending::<()>().await;
        }
        loop {
            tokio::time::sleep(pace).await;
            if tx.send(Ok(vec![0.0; BLOCK])).await.is_err() {
                return;
            }
        }
    });
    Capture::new(
        STT_RATE,
        "test mic".into(),
        rx,
        Box::new(Open(open.clone())),
    )
}

async fn until_end(l: &mut Listening, within: Duration) -> Vec<ListenEvent> {
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + within;
    while let Ok(Some(ev)) = tokio::time::timeout_at(deadline, l.next()).await {
        let last = matches!(ev, ListenEvent::Ended(_));
        out.push(ev);
        if last {
            break;
        }
    }
    out
}

#[tokio::test]
async fn utterances_come_in_order_with_the_onset_and_phases_and_a_quiet_room_sends_nothing() {
    let open = Arc::new(AtomicUsize::new(0));
    let mut audio = quiet(400);
    audio.extend(voice(800));
    audio.extend(quiet(1000));
    audio.extend(voice(600));
    audio.extend(quiet(1000));
    let cap = mic(audio, Duration::from_millis(2), false, &open);
    let stop = CancellationToken::new();
    let spec = ListenSpec {
        vad: VadConfig {
            sensitivity: 0.5,
            hangover_ms: 300,
        },
        ..ListenSpec::utterances(VadConfig::default())
    };
    let mut l = listen(cap, spec, Arc::new(Lengths), stop.clone());
    // Words come when speech-to-text answers, so only their order among themselves is fixed.
    let mut seen = Vec::new();
    let mut heard = 0;
    while heard < 2 || seen.len() < 6 {
        let ev = tokio::time::timeout(Duration::from_secs(5), l.next())
            .await
            .expect("an event within 5 s")
            .unwrap();
        match ev {
            ListenEvent::Heard(u) => {
                assert!(u.start_ms < u.end_ms);
                heard += 1;
            }
            ListenEvent::Phase(p) => seen.push(format!("{p:?}")),
            ListenEvent::Onset => seen.push("Onset".into()),
            e => panic!("{e:?}"),
        }
    }
    assert_eq!(
        seen,
        [
            "Onset",
            "Hearing",
            "Listening",
            "Onset",
            "Hearing",
            "Listening"
        ]
    );
    // Silence from here on: nothing reaches the async side.
    let quiet = tokio::time::timeout(Duration::from_millis(400), l.next()).await;
    assert!(quiet.is_err(), "a quiet room sent {quiet:?}");
    stop.cancel();
    let rest = until_end(&mut l, Duration::from_secs(2)).await;
    assert!(matches!(
        rest.last(),
        Some(ListenEvent::Ended(EndReason::Stopped))
    ));
    assert_eq!(open.load(Ordering::SeqCst), 0, "the device is closed");
}

#[tokio::test]
async fn half_duplex_drops_audio_while_a_character_speaks() {
    let open = Arc::new(AtomicUsize::new(0));
    let mut audio = voice(800);
    audio.extend(quiet(800));
    let cap = mic(audio, Duration::from_millis(2), false, &open);
    let talking = Arc::new(AtomicBool::new(true));
    let t = talking.clone();
    let spec = ListenSpec {
        max_ms: Some(1_600),
        pause_while: Some(Arc::new(move || t.load(Ordering::SeqCst))),
        ..ListenSpec::utterances(VadConfig::default())
    };
    let mut l = listen(cap, spec, Arc::new(Lengths), CancellationToken::new());
    let events = until_end(&mut l, Duration::from_secs(5)).await;
    assert!(matches!(events[0], ListenEvent::Phase(ListenPhase::Paused)));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ListenEvent::Heard(_) | ListenEvent::Onset)),
        "{events:?}"
    );
    assert!(matches!(
        events.last(),
        Some(ListenEvent::Ended(EndReason::Done))
    ));
}

#[tokio::test]
async fn a_hold_is_one_utterance_trimmed_to_its_speech_and_closes_the_device_first() {
    let open = Arc::new(AtomicUsize::new(0));
    let mut audio = quiet(600);
    audio.extend(voice(1000));
    audio.extend(quiet(600));
    let cap = mic(audio, Duration::from_millis(1), false, &open);
    let release = CancellationToken::new();
    let spec = ListenSpec {
        cut: Cut::Hold {
            release: release.clone(),
            max_ms: 60_000,
        },
        ..ListenSpec::utterances(VadConfig::default())
    };
    let mut l = listen(cap, spec, Arc::new(Lengths), CancellationToken::new());
    tokio::time::sleep(Duration::from_millis(500)).await;
    release.cancel();
    let events = until_end(&mut l, Duration::from_secs(5)).await;
    assert!(matches!(events[0], ListenEvent::Closed), "{events:?}");
    let ListenEvent::Heard(u) = &events[1] else {
        panic!("{events:?}")
    };
    let ms: u64 = u.text.trim_end_matches(" ms").parse().unwrap();
    assert!(
        (1000..=1500).contains(&ms),
        "trimmed to the speech: {ms} ms"
    );
    assert!(matches!(events[2], ListenEvent::Ended(EndReason::Done)));
    assert_eq!(open.load(Ordering::SeqCst), 0);

    // A hold of silence: nothing goes to speech-to-text.
    let cap = mic(quiet(400), Duration::from_millis(1), false, &open);
    let release = CancellationToken::new();
    let spec = ListenSpec {
        cut: Cut::Hold {
            release: release.clone(),
            max_ms: 60_000,
        },
        ..ListenSpec::utterances(VadConfig::default())
    };
    let mut l = listen(cap, spec, Arc::new(Lengths), CancellationToken::new());
    tokio::time::sleep(Duration::from_millis(100)).await;
    release.cancel();
    let events = until_end(&mut l, Duration::from_secs(5)).await;
    assert!(matches!(
        events.as_slice(),
        [
            ListenEvent::Closed,
            ListenEvent::Silence,
            ListenEvent::Ended(EndReason::Done)
        ]
    ));
}

#[tokio::test]
async fn a_microphone_that_stops_sending_ends_the_session_in_plain_words() {
    let open = Arc::new(AtomicUsize::new(0));
    let cap = mic(quiet(200), Duration::from_millis(1), true, &open);
    let mut l = listen(
        cap,
        ListenSpec::utterances(VadConfig::default()),
        Arc::new(Lengths),
        CancellationToken::new(),
    );
    let t = Instant::now();
    let events = until_end(&mut l, Duration::from_secs(5)).await;
    let Some(ListenEvent::Ended(EndReason::Failed(e))) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(
        e.to_string(),
        "the microphone \"test mic\" stopped sending audio"
    );
    assert!(t.elapsed() < Duration::from_secs(3));
    assert_eq!(open.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_clip_goes_through_the_same_pipeline() {
    let mut samples = quiet(300);
    samples.extend(voice(700));
    samples.extend(quiet(900));
    samples.extend(voice(500));
    samples.extend(quiet(300));
    let clip = Pcm::new(16_000, samples);
    let mut heard = Vec::new();
    let n = listen_clip(&clip, VadConfig::default(), Arc::new(Lengths), &mut |u| {
        heard.push(u)
    })
    .await
    .unwrap();
    assert_eq!(n, 2);
    assert!(heard[0].end_ms <= heard[1].start_ms, "{heard:?}");
}
