//! The mock-runtime harness shared by the command tests: the real app (`yui_app::run_app` with the
//! real `tauri.conf.json` and `capabilities/`) on a temp data dir, mock windows by label, and an
//! IPC call as the webview makes it, so the capability checks run.

// Each test binary uses its own part of this module.
#![allow(dead_code)]

use serde_json::Value;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{App, WebviewWindow, WebviewWindowBuilder};
use yui_app::state::AppState;
use yui_core::paths::Paths;
use yui_core::Store;

pub struct Harness {
    pub app: App<MockRuntime>,
    pub store: Store,
    /// The data dir, deleted when the harness drops.
    pub dir: tempfile::TempDir,
}

pub fn harness() -> Harness {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).expect("open store");
    let app =
        yui_app::run_app(mock_builder(), AppState::new(store.clone(), paths)).expect("build app");
    Harness { app, store, dir }
}

/// A mock webview window with `label` (the label decides its capability).
pub fn window(h: &Harness, label: &str) -> WebviewWindow<MockRuntime> {
    WebviewWindowBuilder::new(&h.app, label, Default::default())
        .build()
        .expect("mock window")
}

/// Invoke `cmd` from `w` as its webview would: `Ok` is the command's value, `Err` its rejection
/// (a `{code, message}` or the ACL's refusal).
pub fn invoke(w: &WebviewWindow<MockRuntime>, cmd: &str, args: Value) -> Result<Value, Value> {
    get_ipc_response(
        w,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().expect("url"),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|body| body.deserialize::<Value>().expect("JSON response"))
}

/// Invoke `cmd` from `w` and check the capability refused it (not the command failing).
pub fn assert_refused(w: &WebviewWindow<MockRuntime>, cmd: &str, args: Value) {
    let err = invoke(w, cmd, args).expect_err(&format!("{} must not call {cmd}", w.label()));
    let text = err.to_string();
    assert!(text.contains("not allowed"), "{} {cmd}: {text}", w.label());
}
