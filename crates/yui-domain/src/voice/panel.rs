//! What Settings → Voice shows and saves (the settings window's voice panel and its commands
//! delegate here): the switch, engine and overlap (`yui.voice`), the speech server
//! (`yui.voice.tts`), the output device (`yui.voice.listen`), the speech key of its own, each
//! character's voice, and the Test button, which speaks one sentence the way a reply would.

use super::audio::AudioHost;
use super::config::{self, TtsSettings};
use super::speak::{speak_lines, SpeakEvent};
use super::tts::Line;
use super::{SpeechOutcome, VoiceStatus};
use crate::backend::Secrets;
use crate::error::{CoreError, Result};
use crate::paths::Paths;
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// One character's voice as the panel shows it.
#[derive(Debug, Clone, Serialize)]
pub struct CharacterVoice {
    pub id: String,
    pub name: String,
    /// The voice name on an OpenAI-compatible server (`None`: the configured default).
    pub voice: Option<String>,
    /// The character's own engine (`None`: `yui.voice`'s).
    pub engine: Option<String>,
}

/// Everything Settings → Voice shows.
#[derive(Debug, Clone, Serialize)]
pub struct VoicePanel {
    pub status: VoiceStatus,
    pub overlap: bool,
    pub tts: TtsSettings,
    pub output_device: Option<String>,
    /// Where the speech key is: `os-keyring`, `file-fallback (no OS keyring)` or `none`.
    pub speech_key: String,
    pub characters: Vec<CharacterVoice>,
}

/// A change from the panel; absent fields stay as they are.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VoiceEdit {
    pub enabled: Option<bool>,
    pub engine: Option<String>,
    pub overlap: Option<bool>,
    /// The whole `yui.voice.tts` value (checked as the key's declaration checks it).
    pub tts: Option<serde_json::Value>,
    /// `""`: the system's default output.
    pub output_device: Option<String>,
}

/// The panel now.
pub fn overview(store: &Store, paths: &Paths) -> Result<VoicePanel> {
    let setting = super::load(store)?;
    let characters = crate::presets::list(store)?
        .into_iter()
        .map(|p| {
            let s = |k: &str| p.voice.get(k).and_then(|v| v.as_str()).map(str::to_string);
            CharacterVoice {
                voice: s("name"),
                engine: s("engine"),
                id: p.id,
                name: p.name,
            }
        })
        .collect();
    Ok(VoicePanel {
        status: super::status(store)?,
        overlap: setting.overlap,
        tts: config::load_tts(store)?,
        output_device: config::load_listen(store)?.output_device,
        speech_key: Secrets::speech(paths).storage().label().to_string(),
        characters,
    })
}

/// Apply `edit` (each part checked before anything is written) and answer the panel.
pub fn save(store: &Store, paths: &Paths, edit: &VoiceEdit) -> Result<VoicePanel> {
    let mut v = super::load(store)?;
    if let Some(e) = edit.enabled {
        v.enabled = e;
    }
    if let Some(e) = &edit.engine {
        v.engine = super::canonical_engine(e)?.to_string();
    }
    if let Some(o) = edit.overlap {
        v.overlap = o;
    }
    let tts = match &edit.tts {
        Some(t) => Some(TtsSettings::from_value(t)?),
        None => None,
    };
    let listen = match &edit.output_device {
        Some(d) => {
            let mut l = config::load_listen(store)?;
            l.output_device = Some(d.trim().to_string()).filter(|d| !d.is_empty());
            Some(l)
        }
        None => None,
    };
    super::save(store, &v)?;
    // Checked as the settings declaration checks them (`from_value`), written through kv: a
    // domain module does not import settings.
    if let Some(t) = tts {
        let v = serde_json::to_value(t)?;
        config::TtsSettings::from_value(&v)?;
        crate::store::kv::put(store, config::TTS_KEY, &v)?;
    }
    if let Some(l) = listen {
        let v = serde_json::to_value(l)?;
        config::ListenSettings::from_value(&v)?;
        crate::store::kv::put(store, config::LISTEN_KEY, &v)?;
    }
    overview(store, paths)
}

/// Store the speech servers' own key; where it went.
pub fn set_speech_key(paths: &Paths, key: &str) -> Result<String> {
    Ok(Secrets::speech(paths).set_api_key(key)?.label().to_string())
}

/// Forget the speech key (the chat key is used again where allowed).
pub fn clear_speech_key(paths: &Paths) -> Result<()> {
    Secrets::speech(paths).clear()
}

/// What the Test button heard.
#[derive(Debug, Clone, Serialize)]
pub struct TestResult {
    pub engine: String,
    /// Milliseconds from the press to the first sound (audio engines: the first sample queued).
    pub first_audio_ms: Option<u64>,
    /// Milliseconds of audio played (0 for speech-dispatcher).
    pub played_ms: u64,
}

/// Speak `text` in `preset_id`'s voice (`None`: the default voice) through the configured engine
/// on the configured output, as a reply would be spoken. Fails in plain words.
pub async fn test_speak(
    store: &Store,
    paths: &Paths,
    host: Arc<dyn AudioHost>,
    preset_id: Option<&str>,
    text: &str,
) -> Result<TestResult> {
    let text = text.trim();
    if text.is_empty() {
        return Err(CoreError::invalid("say something to test the voice with"));
    }
    let voice = match preset_id {
        Some(id) => crate::presets::get(store, id)?.voice,
        None => serde_json::json!({}),
    };
    let setting = super::load(store)?;
    let engine_name = voice
        .get("engine")
        .and_then(|e| e.as_str())
        .unwrap_or(&setting.engine)
        .to_string();
    let choice = super::EngineChoice {
        engine: Some(engine_name),
        ..Default::default()
    };
    let engine = super::engine_for(store, paths, &choice, None)?;
    let mut feed = super::feed::LineFeed::for_voice(&voice);
    let mut lines: Vec<Line> = feed.observe(&crate::events::TurnEvent::Speech {
        delta: text.to_string(),
    });
    lines.extend(feed.flush());
    let device = config::load_listen(store)?.output_device;
    let start = Instant::now();
    let first: Arc<Mutex<Option<u64>>> = Arc::default();
    let on_event = {
        let first = first.clone();
        move |ev: SpeakEvent| {
            if let SpeakEvent::Started { .. } = ev {
                let mut f = first.lock().unwrap_or_else(|p| p.into_inner());
                f.get_or_insert(start.elapsed().as_millis() as u64);
            }
        }
    };
    let report = speak_lines(
        engine.clone(),
        Some(host),
        device,
        lines,
        &CancellationToken::new(),
        &on_event,
    )
    .await;
    match report.outcome {
        SpeechOutcome::Spoken => Ok(TestResult {
            engine: engine.name().to_string(),
            first_audio_ms: *first.lock().unwrap_or_else(|p| p.into_inner()),
            played_ms: report.played_ms,
        }),
        SpeechOutcome::Unavailable(why) => Err(CoreError::not_found(why)),
        other => Err(CoreError::invalid(format!(
            "nothing was spoken ({other:?})"
        ))),
    }
}

/// Set `preset_id`'s voice name and engine (empty or `None`: the defaults), keeping its
/// speech-dispatcher voice type, rate and pitch.
pub fn set_character_voice(
    store: &Store,
    paths: &Paths,
    preset_id: &str,
    name: Option<&str>,
    engine: Option<&str>,
) -> Result<VoicePanel> {
    let mut voice = crate::presets::get(store, preset_id)?.voice;
    if !voice.is_object() {
        voice = serde_json::json!({});
    }
    let obj = voice.as_object_mut().expect("an object");
    for (key, value) in [("name", name), ("engine", engine)] {
        match value.map(str::trim).filter(|v| !v.is_empty()) {
            Some(v) => obj.insert(key.to_string(), v.into()),
            None => obj.remove(key),
        };
    }
    let update = crate::presets::PresetUpdate {
        voice: Some(voice),
        ..Default::default()
    };
    crate::presets::update(store, preset_id, &update)?;
    overview(store, paths)
}

/// The audio devices of `host` (listing opens none), listed off the async threads.
pub async fn devices(host: Arc<dyn AudioHost>) -> Result<super::audio::DeviceList> {
    tokio::task::spawn_blocking(move || host.devices())
        .await
        .map_err(|e| CoreError::invalid(format!("the device list failed: {e}")))?
        .map_err(Into::into)
}
