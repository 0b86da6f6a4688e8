//! The listening half of Settings → Voice's Test (`yui_core::voice::check::test_listen`): a
//! microphone in memory (48 kHz, so the clip is resampled as a real one is) or the scripted speech
//! server's sample, sent to the test kit's scripted transcription server (multipart WAV in, JSON
//! out), and each failure in plain words.

use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use yui_core::paths::Paths;
use yui_core::voice::audio::{AudioError, AudioHost, Capture, DeviceList, Played};
use yui_core::voice::check::{test_listen, ListenSource, CHECK_SENTENCE};
use yui_core::voice::pcm::Pcm;
use yui_core::{settings, ErrorCode, Store};
use yui_testkit::speech::{patterned_tone, SpeechReply, SpeechServer};

const RATE: u32 = 48_000;

/// A microphone in memory: `audio`, then quiet, as fast as it is read.
struct Mic(Vec<f32>);

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
        Err(AudioError::no_device("no speakers here"))
    }
    async fn capture(&self, _: Option<&str>) -> Result<Capture, AudioError> {
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let audio = self.0.clone();
        tokio::spawn(async move {
            let blocks = audio.chunks(960).map(<[f32]>::to_vec);
            for b in blocks.chain(std::iter::repeat_with(|| vec![0.0; 960])) {
                if tx.send(Ok(b)).await.is_err() {
                    return;
                }
            }
        });
        Ok(Capture::new(RATE, "test mic".into(), rx, Box::new(())))
    }
}

fn setup(stt: &str) -> (tempfile::TempDir, Paths, Store) {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    settings::set(
        &store,
        "yui.voice.stt",
        &json!({"base_url": stt, "use_backend_key": false}),
    )
    .unwrap();
    (dir, paths, store)
}

/// Half a second of quiet, 1.5 s of a voice-like tone, then quiet.
fn spoken() -> Vec<f32> {
    let mut a = vec![0.0; RATE as usize / 2];
    a.extend(patterned_tone(RATE, &[0.3; 15]));
    a
}

#[tokio::test]
async fn the_microphone_test_sends_only_the_speech_it_heard_and_shows_the_text() {
    let srv = SpeechServer::start(vec![SpeechReply::text(" Hello there. ")], None);
    let (_d, paths, store) = setup(&srv.base_url);
    let r = test_listen(
        &store,
        &paths,
        Arc::new(Mic(spoken())),
        ListenSource::Microphone,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(r.text, "Hello there.");
    assert_eq!(r.source, "the microphone \"test mic\"");
    // The 1.5 s of speech with voice activity's 200 ms before and after, not the 4 s recorded.
    assert!((1_500..=2_100).contains(&r.speech_ms), "{r:?}");
    let seen = srv.seen();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].path.ends_with("/audio/transcriptions"));
    let (rate, channels, bits, samples) = seen[0].wav().expect("a WAV upload");
    assert_eq!((rate, channels, bits), (16_000, 1, 16));
    assert_eq!(samples.len() as u64, r.speech_ms * 16);
}

#[tokio::test]
async fn a_quiet_microphone_a_server_that_is_down_and_an_empty_answer_are_plain_words() {
    let srv = SpeechServer::start(vec![SpeechReply::text("  ")], None);
    let (_d, paths, store) = setup(&srv.base_url);
    let quiet = test_listen(
        &store,
        &paths,
        Arc::new(Mic(vec![])),
        ListenSource::Microphone,
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(quiet.code, ErrorCode::NotFound);
    assert!(
        quiet
            .message
            .starts_with("nothing was heard from the microphone \"test mic\" in 4 s"),
        "{}",
        quiet.message
    );
    assert!(srv.seen().is_empty(), "nothing sent for silence");

    let empty = test_listen(
        &store,
        &paths,
        Arc::new(Mic(spoken())),
        ListenSource::Microphone,
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(
        empty.message.starts_with(&format!(
            "the speech-to-text server at {} heard no words in ",
            srv.base_url
        )),
        "{}",
        empty.message
    );

    // A port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let (_d2, paths2, store2) = setup(&down);
    let err = test_listen(
        &store2,
        &paths2,
        Arc::new(Mic(spoken())),
        ListenSource::Microphone,
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(
        err.message
            .contains("cannot reach the speech-to-text server at"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn the_sample_check_sends_the_speech_servers_sentence_with_no_microphone() {
    let srv = SpeechServer::start(
        vec![],
        Some(Box::new(|seen| {
            if seen.path.ends_with("/transcriptions") {
                SpeechReply::text("Testing one, two, three.")
            } else {
                SpeechReply::wav(22_050, &patterned_tone(22_050, &[0.4; 12]))
            }
        })),
    );
    let (_d, paths, store) = setup(&srv.base_url);
    settings::set(
        &store,
        "yui.voice.tts",
        &json!({"base_url": srv.base_url, "use_backend_key": false}),
    )
    .unwrap();
    let no_mic = Arc::new(Mic(vec![]));
    let r = test_listen(
        &store,
        &paths,
        no_mic,
        ListenSource::Sample,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(r.text, "Testing one, two, three.");
    assert_eq!(r.speech_ms, 1_200);
    let seen = srv.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].json["input"], CHECK_SENTENCE);
    assert_eq!(seen[1].wav().expect("a WAV upload").0, 16_000);
}
