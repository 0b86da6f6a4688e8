//! Doctoring the configured backend, with what `yui doctor` and "Test connection" may override
//! for one run (resolved once, in `backend::resolve`).

use super::*;
pub use crate::backend::Overrides;

/// Doctor the configured backend (with `overrides` applied), default options. The doctor checks
/// the request transports and the realtime session: a push override is none of them and is
/// left out.
pub async fn run_configured(
    store: &crate::Store,
    paths: &crate::paths::Paths,
    overrides: &Overrides,
) -> crate::error::Result<Report> {
    let o = Overrides {
        transport: overrides
            .transport
            .filter(|t| descriptor(*t).link != Link::Connection),
        ..overrides.clone()
    };
    let mut b = crate::backend::resolve(store, paths, &o)?;
    // The built-in engine is checked like any server: started, then asked the same questions.
    if o.base_url.as_deref().is_none_or(|u| u.trim().is_empty()) {
        let clock: crate::clock::SharedClock = std::sync::Arc::new(crate::clock::SystemClock);
        if let Some(engine) = crate::model::builtin::shared(store, paths, clock)? {
            let ep = engine.ensure().await.map_err(|e| {
                crate::error::CoreError::new(crate::error::ErrorCode::Backend, e.to_string())
            })?;
            b.base_url = ep.base_url;
            b.api_key = Some(ep.api_key);
        }
    }
    Ok(run(&b, &Options::default()).await)
}
