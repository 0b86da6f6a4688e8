//! Voice output: the `yui.voice` switch, the cue → speech-dispatcher direction mapping, and the
//! speaker run against a fake `spd-say` (a real shell script on an injected PATH that records
//! its arguments).

use serde_json::json;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use yui_core::settings;
use yui_core::turn::{CancellationToken, Cue, TurnEvent};
use yui_core::voice::{self, Direction, Script, Speaker, SpeechOutcome, VoiceSetting};
use yui_core::{ErrorCode, Store};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("yui.db")).unwrap();
    (dir, store)
}

/// A folder holding a fake `spd-say` that appends one line per call (its arguments joined by
/// `|`) to `calls.log`. A call with `--wait` then sleeps `sleep` seconds (exec, so killing the
/// process ends the sleep), unless it is `--cancel`.
fn fake_spd_say(sleep: u32, exit: i32) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let script = format!(
        "#!/bin/sh\n\
         line=\"\"\n\
         for a in \"$@\"; do line=\"$line|$a\"; done\n\
         echo \"$line\" >> '{log}'\n\
         if [ \"$1\" = \"--cancel\" ]; then exit 0; fi\n\
         if [ {exit} -ne 0 ]; then echo 'spd-say: cannot connect to speech-dispatcher' >&2; exit {exit}; fi\n\
         exec sleep {sleep}\n",
        log = log.display()
    );
    let prog = dir.path().join("spd-say");
    std::fs::write(&prog, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (dir, log)
}

fn calls(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn path_of(dir: &Path) -> OsString {
    std::env::join_paths([dir]).unwrap()
}

fn cue(caption: Option<&str>, emotion_text: Option<&str>) -> TurnEvent {
    TurnEvent::Cue {
        call_id: "c1".into(),
        name: "generate_express".into(),
        cue: Cue {
            caption: caption.map(str::to_string),
            emotion_text: emotion_text.map(str::to_string),
            ..Cue::default()
        },
    }
}

fn speech(s: &str) -> TurnEvent {
    TurnEvent::Speech { delta: s.into() }
}

#[test]
fn voice_switch_is_off_by_default_with_speech_dispatcher() {
    let (_d, store) = store();
    assert_eq!(
        settings::get(&store, settings::VOICE).unwrap(),
        json!({"enabled": false, "engine": "speech-dispatcher", "overlap": false})
    );
    assert_eq!(voice::load(&store).unwrap(), VoiceSetting::default());
    assert!(!settings::switch_on(&store, settings::VOICE).unwrap());
    assert!(settings::list(&store).unwrap().contains_key("yui.voice"));
}

#[test]
fn voice_setting_refuses_bad_shapes_and_unknown_engines() {
    let (_d, store) = store();
    for bad in [
        json!({"engine": "speech-dispatcher"}),
        json!({"enabled": "yes"}),
        json!({"enabled": true, "engine": "say.exe"}),
    ] {
        let e = settings::set(&store, settings::VOICE, &bad).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput, "{bad}");
    }
    let e = voice::update(&store, true, Some("espeak".into())).unwrap_err();
    assert_eq!(
        e.message,
        "unknown voice engine \"espeak\"; known: speech-dispatcher, openai"
    );
    assert!(
        !voice::load(&store).unwrap().enabled,
        "refused write left the value"
    );
    let s = voice::update(&store, true, None).unwrap();
    assert!(s.enabled);
    assert_eq!(s.engine, "speech-dispatcher");
    assert!(settings::switch_on(&store, settings::VOICE).unwrap());
}

#[test]
fn missing_spd_say_is_a_one_line_status() {
    let empty = tempfile::tempdir().unwrap();
    let path = std::env::join_paths([empty.path()]).unwrap();
    let st = voice::status_of(&VoiceSetting::default(), Some(&path));
    assert!(!st.available);
    assert_eq!(
        st.status,
        "speech-dispatcher: spd-say not found; install the speech-dispatcher package to hear replies"
    );
    assert!(!st.status.contains('\n'));
    assert_eq!(
        Speaker::detect_on(None).err().map(|e| e.to_string()),
        Some(st.status.clone())
    );

    let (fake, _log) = fake_spd_say(0, 0);
    let st = voice::status_of(&VoiceSetting::default(), Some(&path_of(fake.path())));
    assert!(st.available);
    assert_eq!(
        st.status,
        format!(
            "speech-dispatcher: ready ({})",
            fake.path().join("spd-say").display()
        )
    );
}

#[test]
fn a_non_executable_spd_say_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spd-say"), "not a program").unwrap();
    assert_eq!(
        Speaker::detect_on(Some(&path_of(dir.path())))
            .err()
            .map(|e| e.to_string())
            .as_deref(),
        Some("speech-dispatcher: spd-say not found; install the speech-dispatcher package to hear replies")
    );
}

#[test]
fn direction_maps_caption_and_emotion_text_words() {
    assert_eq!(Direction::from_cue(None, None), Direction::default());
    assert_eq!(
        Direction::from_cue(Some("in Klingon"), None),
        Direction::default()
    );
    let w = Direction::from_cue(None, Some("Whispering"));
    assert!(w.volume < 0 && w.rate < 0, "{w:?}");
    let e = Direction::from_cue(Some("excited, high voice"), None);
    assert!(e.rate > 0 && e.pitch > 30, "{e:?}");
    let s = Direction::from_cue(Some("sleepy"), Some("sad"));
    assert!(s.rate <= -50 && s.pitch < 0, "{s:?}");
    assert_eq!(
        Direction::from_cue(Some("a woman, calm"), None).voice_type,
        Some("female1")
    );
    assert_eq!(
        Direction::from_cue(Some("male"), None).voice_type,
        Some("male1")
    );
    // Piled-up words stay within speech-dispatcher's range.
    let loud = Direction::from_cue(Some("loud loud loud shouting yelling angry"), None);
    assert_eq!(loud.volume, 100);
    assert_eq!(
        Direction::from_cue(Some("fast"), None).spd_args(),
        vec!["--rate", "35"]
    );
    assert!(Direction::default().spd_args().is_empty());
}

#[test]
fn script_cuts_speech_at_cues_with_voice_direction() {
    let mut s = Script::new();
    for ev in [
        speech("Hello! "),
        cue(None, None), // a face-only cue changes nothing
        speech("Nice to see you. "),
        cue(Some("whispering"), None),
        speech("This is a secret."),
        TurnEvent::ToolStatus {
            call_id: None,
            name: "web".into(),
            status: "running".into(),
        },
        cue(None, Some("excited")),
        speech("  ...  "), // nothing to say: dropped
    ] {
        s.observe(&ev);
    }
    let u = s.utterances();
    assert_eq!(u.len(), 2, "{u:?}");
    assert_eq!(u[0].text, "Hello! Nice to see you.");
    assert_eq!(u[0].direction, Direction::default());
    assert_eq!(u[1].text, "This is a secret.");
    assert_eq!(
        u[1].direction,
        Direction::from_cue(Some("whispering"), None)
    );
}

#[tokio::test]
async fn speaker_runs_spd_say_with_wait_direction_and_the_text() {
    let (fake, log) = fake_spd_say(0, 0);
    let speaker = Speaker::detect_on(Some(&path_of(fake.path()))).unwrap();
    let mut script = Script::new();
    script.observe(&speech("-n is not an option"));
    script.observe(&cue(Some("slowly"), None));
    script.observe(&speech(" Good night."));
    let out = speaker.speak(&script, &CancellationToken::new()).await;
    assert_eq!(out, SpeechOutcome::Spoken);
    assert_eq!(
        calls(&log),
        vec![
            "|--wait|--application-name|yui|--|-n is not an option",
            "|--wait|--application-name|yui|--rate|-30|--|Good night.",
        ]
    );
}

#[tokio::test]
async fn stopping_kills_spd_say_and_cancels_speech_dispatcher() {
    let (fake, log) = fake_spd_say(30, 0);
    let speaker = Speaker::detect_on(Some(&path_of(fake.path()))).unwrap();
    let mut script = Script::new();
    script.observe(&speech("A long story."));
    script.observe(&cue(Some("sad"), None));
    script.observe(&speech("That is never spoken."));
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    let started = Instant::now();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let out = tokio::time::timeout(Duration::from_secs(10), speaker.speak(&script, &cancel))
        .await
        .expect("speak() did not stop on cancel");
    assert_eq!(out, SpeechOutcome::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        calls(&log),
        vec![
            "|--wait|--application-name|yui|--|A long story.",
            "|--cancel"
        ]
    );
}

#[tokio::test]
async fn a_failing_spd_say_is_unavailable_with_its_reason() {
    let (fake, _log) = fake_spd_say(0, 1);
    let speaker = Speaker::detect_on(Some(&path_of(fake.path()))).unwrap();
    let mut script = Script::new();
    script.observe(&speech("Hi"));
    let out = speaker.speak(&script, &CancellationToken::new()).await;
    assert_eq!(
        out,
        SpeechOutcome::Unavailable(
            "speech-dispatcher: spd-say exited with exit status: 1: spd-say: cannot connect to speech-dispatcher".into()
        )
    );
}

#[tokio::test]
async fn speak_reply_follows_the_switch() {
    let (_d, store) = store();
    let (fake, log) = fake_spd_say(0, 0);
    let path = path_of(fake.path());
    let mut script = Script::new();
    script.observe(&speech("Hello there."));
    let cancel = CancellationToken::new();

    assert_eq!(
        voice::speak_reply(&store, &script, Some(&path), &cancel).await,
        SpeechOutcome::Skipped,
        "off by default"
    );
    assert!(calls(&log).is_empty());

    voice::update(&store, true, None).unwrap();
    assert_eq!(
        voice::speak_reply(&store, &script, Some(&path), &cancel).await,
        SpeechOutcome::Spoken
    );
    assert_eq!(
        calls(&log),
        vec!["|--wait|--application-name|yui|--|Hello there."]
    );

    let nowhere = tempfile::tempdir().unwrap();
    let out = voice::speak_reply(&store, &script, Some(&path_of(nowhere.path())), &cancel).await;
    assert!(
        matches!(&out, SpeechOutcome::Unavailable(l) if l.contains("spd-say not found")),
        "{out:?}"
    );
    assert_eq!(
        voice::speak_reply(&store, &Script::new(), Some(&path), &cancel).await,
        SpeechOutcome::Skipped,
        "nothing to say"
    );
}

/// An output device in memory: keeps every clip played, "plays" it at once.
struct RecordingHost(std::sync::Mutex<Vec<voice::pcm::Pcm>>);

#[async_trait::async_trait]
impl voice::audio::AudioHost for RecordingHost {
    fn devices(&self) -> Result<voice::audio::DeviceList, voice::audio::AudioError> {
        Ok(Default::default())
    }
    async fn play(
        &self,
        pcm: &voice::pcm::Pcm,
        _device: Option<&str>,
        _cancel: &CancellationToken,
    ) -> Result<voice::audio::Played, voice::audio::AudioError> {
        self.0.lock().unwrap().push(pcm.clone());
        Ok(voice::audio::Played::Finished {
            ms: pcm.duration_ms(),
        })
    }
    async fn capture(
        &self,
        _device: Option<&str>,
    ) -> Result<voice::audio::Capture, voice::audio::AudioError> {
        Err(voice::audio::AudioError::no_device("no microphone here"))
    }
}

#[tokio::test]
async fn the_openai_engine_speaks_a_reply_sentence_by_sentence_in_each_pieces_speed() {
    use yui_testkit::speech::{patterned_tone, SpeechReply, SpeechServer};
    let host = std::sync::Arc::new(RecordingHost(Default::default()));
    assert!(
        voice::hosts::install(host.clone()),
        "the only test installing a host"
    );
    let srv = SpeechServer::start(
        vec![],
        Some(Box::new(|_| {
            SpeechReply::wav(24_000, &patterned_tone(24_000, &[0.5; 3]))
        })),
    );
    let (_d, store) = store();
    settings::set(
        &store,
        "yui.voice",
        &json!({"enabled": true, "engine": "openai"}),
    )
    .unwrap();
    settings::set(&store, "yui.voice.tts", &json!({"base_url": srv.base_url})).unwrap();
    let mut script = Script::new();
    script.push_text("Hello there. How are you?");
    script.set_direction(Direction::from_cue(Some("excited"), None));
    script.push_text(" Great!");
    let out = voice::speak_reply(&store, &script, None, &CancellationToken::new()).await;
    assert_eq!(out, SpeechOutcome::Spoken);
    let bodies: Vec<(String, f64)> = srv
        .seen()
        .iter()
        .map(|s| {
            (
                s.json["input"].as_str().unwrap().to_string(),
                s.json["speed"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        bodies,
        [
            ("Hello there.".to_string(), 1.0),
            ("How are you?".to_string(), 1.0),
            ("Great!".to_string(), 1.19)
        ]
    );
    let played = host.0.lock().unwrap();
    assert_eq!(played.len(), 3);
    assert!(played.iter().all(|p| p.duration_ms() == 300));
}
