//! Doctoring the configured backend, with what `yui doctor` and "Test connection" may override
//! for one run (resolved once, in `backend::resolve`).

use super::*;
pub use crate::backend::Overrides;

/// Doctor the configured backend (with `overrides` applied), default options. The doctor checks
/// the request transports: a push override is none of them and is left out.
pub async fn run_configured(
    store: &crate::Store,
    paths: &crate::paths::Paths,
    overrides: &Overrides,
) -> crate::error::Result<Report> {
    let o = Overrides {
        transport: overrides.transport.filter(|t| *t != Transport::Push),
        ..overrides.clone()
    };
    let b = crate::backend::resolve(store, paths, &o)?;
    Ok(run(&b, &Options::default()).await)
}
