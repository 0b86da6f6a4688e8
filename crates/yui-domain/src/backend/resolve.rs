//! The one resolution of the backend a run uses: the stored `yui.backend` and API key, with what
//! one run may override (CLI flags, `YUI_API_KEY`, the settings form's Test connection), into
//! the one type every turn, the stage, every CLI command and the doctor take: [`Backend`].

use super::{load, secrets, BackendConfig, Transport};
use crate::error::Result;
use crate::paths::Paths;
use crate::store::Store;

/// Environment variable that overrides the stored API key for one CLI run.
pub const API_KEY_ENV: &str = "YUI_API_KEY";

/// Where a turn goes: the backend resolved for one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Backend {
    pub transport: Transport,
    /// e.g. `http://127.0.0.1:8080/v1` (the paths `/chat/completions`, `/responses` are added).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Reply length cap (`max_tokens` / `max_output_tokens`); `None` sends none.
    pub max_output_tokens: Option<u32>,
    pub temperature: Option<f64>,
    /// The push transport's WebSocket URL.
    pub push_url: Option<String>,
    /// The realtime transport's WebSocket URL (`None`: the base URL's, see
    /// `backend::realtime::url_of`).
    pub realtime_url: Option<String>,
}

impl Backend {
    /// The backend configured in settings (`yui.backend`) with the stored API key.
    pub fn configured(store: &Store, paths: &Paths) -> Result<Self> {
        resolve(store, paths, &Overrides::default())
    }

    pub fn from_config(cfg: &BackendConfig, api_key: Option<String>) -> Self {
        Self {
            transport: cfg.transport,
            base_url: cfg.base_url.clone(),
            model: cfg.model.clone(),
            api_key,
            max_output_tokens: Some(cfg.max_output_tokens),
            temperature: cfg.temperature,
            push_url: cfg.push_url.clone(),
            realtime_url: cfg.realtime_url.clone(),
        }
    }

    /// The realtime session's URL, with the model in its query.
    pub fn realtime_endpoint(&self) -> String {
        let url = super::realtime::url_of(self.realtime_url.as_deref(), &self.base_url);
        super::realtime::url_with_model(&url, &self.model)
    }

    pub fn endpoint(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url.trim_end_matches('/'))
    }
}

/// What one run may change of the stored backend. Empty strings change nothing.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
pub struct Overrides {
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub transport: Option<Transport>,
    #[serde(default)]
    pub push_url: Option<String>,
    #[serde(default)]
    pub realtime_url: Option<String>,
    /// Never from the webview: only the CLI sets it ([`Overrides::with_env_key`]).
    #[serde(skip)]
    pub api_key: Option<String>,
}

fn given(s: &Option<String>) -> Option<String> {
    s.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl Overrides {
    /// Take the API key from `YUI_API_KEY` when it is set (the CLI's commands).
    pub fn with_env_key(mut self) -> Self {
        if let Some(k) = std::env::var(API_KEY_ENV).ok().filter(|k| !k.is_empty()) {
            self.api_key = Some(k);
        }
        self
    }

    /// Apply to a resolved backend.
    pub fn apply(&self, b: &mut Backend) {
        if let Some(u) = given(&self.base_url) {
            b.base_url = u;
        }
        if let Some(m) = given(&self.model) {
            b.model = m;
        }
        if let Some(t) = self.transport {
            b.transport = t;
        }
        if let Some(u) = given(&self.push_url) {
            b.push_url = Some(u);
        }
        if let Some(u) = given(&self.realtime_url) {
            b.realtime_url = Some(u);
        }
        if let Some(k) = given(&self.api_key) {
            b.api_key = Some(k);
        }
    }
}

/// The backend of one run: the stored config and key, then `overrides`. A key given for the run
/// is never written to a log line, whatever a server quotes back.
pub fn resolve(store: &Store, paths: &Paths, overrides: &Overrides) -> Result<Backend> {
    let cfg = load(store)?;
    let key = match given(&overrides.api_key) {
        Some(k) => {
            crate::logging::redact_secret(&k);
            Some(k)
        }
        None => secrets::api_key(paths),
    };
    let mut b = Backend::from_config(&cfg, key);
    overrides.apply(&mut b);
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_change_only_what_they_give() {
        let mut b = Backend::from_config(&BackendConfig::default(), Some("stored".into()));
        let before = b.clone();
        Overrides {
            base_url: Some("  ".into()),
            model: Some(String::new()),
            ..Default::default()
        }
        .apply(&mut b);
        assert_eq!(b, before, "empty values change nothing");
        Overrides {
            base_url: Some(" http://h:1/v1 ".into()),
            model: Some("m2".into()),
            transport: Some(Transport::Push),
            push_url: Some("ws://h:2/push".into()),
            realtime_url: Some("ws://h:3/rt".into()),
            api_key: Some("sk-run".into()),
        }
        .apply(&mut b);
        assert_eq!(
            (b.base_url.as_str(), b.model.as_str(), b.transport),
            ("http://h:1/v1", "m2", Transport::Push)
        );
        assert_eq!(b.push_url.as_deref(), Some("ws://h:2/push"));
        assert_eq!(b.realtime_endpoint(), "ws://h:3/rt?model=m2");
        assert_eq!(b.api_key.as_deref(), Some("sk-run"));
        // The webview's JSON never carries a key.
        let o: Overrides =
            serde_json::from_value(serde_json::json!({"api_key": "sk-x", "model": "m"})).unwrap();
        assert_eq!(o.api_key, None);
    }
}
