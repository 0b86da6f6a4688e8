//! Settings → Voice in the core (`yui_core::voice::panel`): edits checked before anything is
//! written, each character's voice kept beside its speech-dispatcher voice, the speech key of its
//! own on the wire instead of the chat key, and the Test button speaking through the scripted
//! speech server.

use serde_json::json;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;
use yui_core::backend::Secrets;
use yui_core::paths::Paths;
use yui_core::voice::audio::{AudioError, AudioHost, Capture, DeviceList, Played};
use yui_core::voice::panel::{self, VoiceEdit};
use yui_core::voice::pcm::Pcm;
use yui_core::{presets, Store};
use yui_testkit::speech::{patterned_tone, SpeechReply, SpeechServer};

#[derive(Default)]
struct Sink(Mutex<u64>);

#[async_trait::async_trait]
impl AudioHost for Sink {
    fn devices(&self) -> Result<DeviceList, AudioError> {
        Ok(Default::default())
    }
    async fn play(
        &self,
        pcm: &Pcm,
        _device: Option<&str>,
        _cancel: &CancellationToken,
    ) -> Result<Played, AudioError> {
        *self.0.lock().unwrap() += pcm.duration_ms();
        Ok(Played::Finished {
            ms: pcm.duration_ms(),
        })
    }
    async fn capture(&self, _device: Option<&str>) -> Result<Capture, AudioError> {
        Err(AudioError::no_device("no microphone here"))
    }
}

fn setup() -> (tempfile::TempDir, Paths, Store) {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    (dir, paths, store)
}

#[test]
fn edits_are_checked_before_anything_is_written_and_each_voice_keeps_its_tone() {
    let (_d, paths, store) = setup();
    let p = panel::overview(&store, &paths).unwrap();
    assert!(!p.status.enabled && !p.overlap && p.speech_key == "none");
    let bad = VoiceEdit {
        enabled: Some(true),
        tts: Some(json!({"response_format": "mp3"})),
        ..Default::default()
    };
    let err = panel::save(&store, &paths, &bad).unwrap_err();
    assert!(err.message.contains("wav or pcm"), "{}", err.message);
    assert!(!panel::overview(&store, &paths).unwrap().status.enabled);
    let good = VoiceEdit {
        enabled: Some(true),
        engine: Some("openai".into()),
        overlap: Some(true),
        tts: Some(json!({"base_url": "http://127.0.0.1:5/v1", "voice": "nova"})),
        output_device: Some("  ".into()),
    };
    let p = panel::save(&store, &paths, &good).unwrap();
    assert!(p.status.enabled && p.overlap && p.status.engine == "openai");
    assert_eq!(p.tts.voice, "nova");
    assert_eq!(p.output_device, None);

    let kai = presets::PresetUpdate {
        voice: Some(json!({"voice_type": "male1", "rate": 20})),
        ..Default::default()
    };
    presets::update(&store, "kai", &kai).unwrap();
    let p =
        panel::set_character_voice(&store, &paths, "kai", Some("echo"), Some("openai")).unwrap();
    let row = p.characters.iter().find(|c| c.id == "kai").unwrap();
    assert_eq!(
        (row.voice.as_deref(), row.engine.as_deref()),
        (Some("echo"), Some("openai"))
    );
    assert_eq!(
        presets::get(&store, "kai").unwrap().voice,
        json!({"voice_type": "male1", "rate": 20, "name": "echo", "engine": "openai"})
    );
    assert!(panel::set_character_voice(&store, &paths, "kai", None, Some("sapi")).is_err());
    panel::set_character_voice(&store, &paths, "kai", Some(""), None).unwrap();
    assert_eq!(
        presets::get(&store, "kai").unwrap().voice,
        json!({"voice_type": "male1", "rate": 20})
    );
}

#[tokio::test]
async fn the_test_button_speaks_in_the_characters_voice_with_the_speech_key_of_its_own() {
    let (_d, paths, store) = setup();
    let srv = SpeechServer::start(
        vec![],
        Some(Box::new(|_| {
            SpeechReply::wav(16_000, &patterned_tone(16_000, &[0.5; 4]))
        })),
    );
    panel::save(
        &store,
        &paths,
        &VoiceEdit {
            enabled: Some(true),
            engine: Some("openai".into()),
            tts: Some(json!({"base_url": srv.base_url})),
            ..Default::default()
        },
    )
    .unwrap();
    Secrets::file_only(&paths).set_api_key("chat-key").unwrap();
    Secrets::speech_file_only(&paths)
        .set_api_key("speech-key")
        .unwrap();
    panel::set_character_voice(&store, &paths, "kai", Some("echo"), None).unwrap();
    let sink = Arc::new(Sink::default());
    let r = panel::test_speak(
        &store,
        &paths,
        sink.clone(),
        Some("kai"),
        "Hello. I am Kai.",
    )
    .await
    .unwrap();
    assert_eq!(r.engine, "openai");
    assert_eq!(r.played_ms, 800, "two sentences of 400 ms");
    assert!(r.first_audio_ms.is_some());
    let seen = srv.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].json["voice"], "echo");
    assert_eq!(seen[0].header("authorization"), Some("Bearer speech-key"));
    // Forgotten, the chat key is used again (use_backend_key is on by default).
    panel::clear_speech_key(&paths).unwrap();
    panel::test_speak(&store, &paths, sink, None, "Again.")
        .await
        .unwrap();
    assert_eq!(
        srv.seen()[2].header("authorization"),
        Some("Bearer chat-key")
    );
    assert_eq!(srv.seen()[2].json["voice"], "alloy");
    let empty = panel::test_speak(&store, &paths, Arc::new(Sink::default()), None, "  ").await;
    assert!(empty.is_err());
}
