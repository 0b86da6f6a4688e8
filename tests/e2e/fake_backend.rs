//! The model backend of the end-to-end tests: the test kit's scripted OpenAI-compatible server
//! (`yui_testkit::sse`) on 127.0.0.1, and pointing the app's store at it.

use serde_json::json;
use std::path::Path;
use tokio::sync::mpsc::UnboundedReceiver;
use yui_core::backend::{BackendChange, Transport};
use yui_testkit::sse::{self as sse, Reply, ScriptServer, Seen};

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

/// A Responses reply that calls `generate_express` with `cue_args`, then says `text` (response id
/// `id`).
pub fn cue_then_text(id: &str, cue_args: &str, text: &str) -> Reply {
    let call = json!({"type":"function_call","id":"fc_1","call_id":"call_1","name":"generate_express","arguments":cue_args});
    Reply::Sse(sse::events(&[
        json!({"type":"response.created","response":{"id":id,"status":"in_progress","output":[]}}),
        json!({"type":"response.output_item.added","output_index":0,"item":call}),
        json!({"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":0,"arguments":cue_args}),
        json!({"type":"response.output_item.done","output_index":0,"item":call}),
        json!({"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":text}),
        json!({"type":"response.completed","response":{"id":id,"status":"completed"}}),
    ]))
}
