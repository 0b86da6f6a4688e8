//! The model backend of the end-to-end tests: the test kit's scripted OpenAI-compatible server
//! (`yui_testkit::sse`) on 127.0.0.1, and pointing the app's store at it.

use std::path::Path;
use tokio::sync::mpsc::UnboundedReceiver;
use yui_core::backend::{BackendChange, Transport};
use yui_testkit::sse::{Reply, ScriptServer, Seen};

/// Serve on 127.0.0.1, answering every request with `respond(request)` (`request.n` counts from
/// 1). Returns the server (keep it alive for the whole test: it stops when dropped) and every
/// request as it arrives. Replies allow any origin (CORS), so that only the app's CSP can stop a
/// page from reaching the server; the core's HTTP client ignores the header.
pub async fn serve(
    respond: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
) -> (ScriptServer, UnboundedReceiver<Seen>) {
    let srv = ScriptServer::builder()
        .responder(respond)
        .header("Access-Control-Allow-Origin", "*")
        .start()
        .await;
    let requests = srv.requests();
    (srv, requests)
}

/// Point the store in `dir` at the server on `transport`, with the model `fake-model`.
pub fn seed_backend(dir: &Path, base_url: &str, transport: Transport) {
    super::seed(dir, |st| point_at(st, base_url, transport));
}

/// The same as [`seed_backend`] on an open store, for tests that seed more.
pub fn point_at(st: &yui_core::Store, base_url: &str, transport: Transport) {
    let change = BackendChange {
        base_url: Some(base_url.to_string()),
        model: Some("fake-model".into()),
        transport: Some(transport),
        push_url: None,
        ..Default::default()
    };
    yui_core::backend::update(st, &change).unwrap();
}
