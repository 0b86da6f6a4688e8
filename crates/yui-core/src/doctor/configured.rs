//! Doctoring the configured backend, with what `yui doctor` and "Test connection" may override
//! for one run.

use super::*;

/// Doctor the configured backend (with `overrides` applied), the stored key, default options.
pub async fn run_configured(
    store: &crate::Store,
    paths: &crate::paths::Paths,
    overrides: &Overrides,
) -> crate::error::Result<Report> {
    let mut b = Backend::configured(store, paths)?;
    overrides.apply(&mut b);
    Ok(run(&b, &Options::default()).await)
}

/// What "Test connection" and `yui doctor` may change for one run.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct Overrides {
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub transport: Option<Transport>,
}

impl Overrides {
    pub fn apply(&self, b: &mut Backend) {
        if let Some(u) = self
            .base_url
            .as_ref()
            .map(|u| u.trim())
            .filter(|u| !u.is_empty())
        {
            b.base_url = u.to_string();
        }
        if let Some(m) = self
            .model
            .as_ref()
            .map(|m| m.trim())
            .filter(|m| !m.is_empty())
        {
            b.model = m.to_string();
        }
        if let Some(t) = self.transport.filter(|t| *t != Transport::Push) {
            b.transport = t;
        }
    }
}
