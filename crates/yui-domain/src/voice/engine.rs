//! Which text-to-speech engine speaks: the one in `yui.voice` (or a command line's choice), built
//! from the stored settings with a command line's overrides.

use super::config::{self, TtsSettings};
use super::tts::{OpenAiTts, SpeechDispatcher, TtsEngine};
use super::{canonical_engine, Speaker, SPEECH_DISPATCHER};
use crate::error::{CoreError, Result};
use crate::paths::Paths;
use crate::store::Store;
use std::sync::Arc;

/// A choice of engine and its overrides (`yui say --engine --base-url --model --voice`).
#[derive(Debug, Clone, Default)]
pub struct EngineChoice {
    /// `speech-dispatcher` (also `speech_dispatcher`) or `openai`; `None`: `yui.voice`'s engine.
    pub engine: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub voice: Option<String>,
}

/// The engine to speak with. `spd_path`: where to look for `spd-say` (`None`: `PATH`).
pub fn engine_for(
    store: &Store,
    paths: &Paths,
    choice: &EngineChoice,
    spd_path: Option<&std::ffi::OsStr>,
) -> Result<Arc<dyn TtsEngine>> {
    let name = match &choice.engine {
        Some(e) => canonical_engine(e)?,
        None => canonical_engine(&super::load(store)?.engine)?,
    };
    if name == SPEECH_DISPATCHER {
        let speaker = match spd_path {
            Some(p) => Speaker::detect_on(Some(p)),
            None => Speaker::detect(),
        }
        .map_err(|e| CoreError::not_found(e.to_string()).with_source(e))?;
        return Ok(Arc::new(SpeechDispatcher {
            speaker,
            alone: None,
        }));
    }
    let mut s: TtsSettings = config::load_tts(store)?;
    if let Some(b) = &choice.base_url {
        s.base_url = Some(b.clone());
    }
    if let Some(m) = &choice.model {
        s.model = m.clone();
    }
    if let Some(v) = &choice.voice {
        s.voice = v.clone();
    }
    let s = TtsSettings::from_value(&serde_json::to_value(&s)?)?;
    let base = config::base_url_or_backend(store, &s.base_url)?;
    let key = config::speech_key(paths, s.use_backend_key);
    Ok(Arc::new(OpenAiTts::from_settings(&s, base, key)))
}
