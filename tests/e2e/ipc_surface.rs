//! The smallest IPC surface in the real app: model text with HTML and script in it renders as
//! text in the bubble and the phone (no element made from it, no script run); the CSP stops an
//! inline `<script>` injected into a character window, `eval`, inline event handlers, remote
//! script and a fetch to the model server; and an API key typed into Settings reaches the model
//! server's `Authorization` header but no IPC payload any window receives (every callback the
//! Tauri bridge runs in the page is recorded), no log and no file of the data dir.

use super::{fake_backend, launch_showing, open_settings, say_in_chat, seed};
use serde_json::{json, Value};
use std::time::Duration;
use yui_core::backend::Transport;
use yui_testkit::sse::{self, Reply};

const T: Duration = Duration::from_secs(20);
const DRAWN: &str = "#character [data-emotion]";

/// A reply as a model might write it after reading a web page: markup and script as text.
const PAYLOAD: &str = r#"Look: <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script> <b>bold</b> & <a href="javascript:window.__pwned=3">link</a>"#;

fn text(t: &str) -> Value {
    json!({"choices":[{"index":0,"delta":{"content":t},"finish_reason":null}]})
}

/// The payload in three deltas, cut inside its tags, as a stream would.
fn payload_stream() -> Reply {
    let (a, rest) = PAYLOAD.split_at(14);
    let (b, c) = rest.split_at(30);
    sse::chat_stream(&[
        text(a),
        text(b),
        text(c),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
    ])
}

async fn exec(s: &super::webdriver::Session, script: &str) -> Value {
    s.exec(script, json!([])).await.expect(script)
}

/// In the current window: no element was made from the payload, and no script of it ran.
async fn assert_inert(s: &super::webdriver::Session, where_: &str) {
    // An `onerror` would fire a moment after the element was made.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let v = exec(
        s,
        r#"return {
            pwned: typeof window.__pwned,
            made: document.querySelectorAll('img[src="x"], script:not([src]), b, a[href^="javascript:"]').length
        }"#,
    )
    .await;
    assert_eq!(v, json!({"pwned": "undefined", "made": 0}), "{where_}");
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn model_html_renders_as_text_in_the_bubble_and_the_phone() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, _requests) = fake_backend::serve(|_| payload_stream()).await;
    let base_url = srv.base_url.clone();
    seed(dir.path(), |st| {
        fake_backend::point_at(st, &base_url, Transport::ChatCompletions)
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    say_in_chat(&s, DRAWN, "What does the page say?").await;
    s.wait_script(
        &format!(
            "const b = document.getElementById('bubble'); return !b.hidden && b.textContent === {}",
            json!(PAYLOAD)
        ),
        T,
    )
    .await
    .expect("the bubble shows the reply's markup as text");
    let children = exec(
        &s,
        "return document.getElementById('bubble').children.length",
    )
    .await;
    assert_eq!(children, 0, "the bubble holds text only");
    assert_inert(&s, "main window").await;

    // The phone: the stored reply in the history, then a reply streamed into the thread.
    exec(
        &s,
        "document.getElementById('menu-phone').click(); return true;",
    )
    .await;
    s.wait_for_label("phone-yui", T)
        .await
        .expect("the phone opens");
    s.wait_script("return document.body.dataset.loaded === 'true'", T)
        .await
        .expect("history loaded");
    let last = format!(
        "const m = [...document.querySelectorAll('#messages .msg.assistant')].pop();
         return !!m && !m.classList.contains('pending') && m.querySelector('.text').textContent === {} && m.querySelector('.text').children.length === 0",
        json!(PAYLOAD)
    );
    s.wait_script(&last, T)
        .await
        .expect("the history shows the markup as text");
    assert_inert(&s, "phone history").await;
    let count = "return document.querySelectorAll('#messages .msg.assistant').length";
    let before = exec(&s, count).await.as_u64().unwrap();
    let input = s.find("#compose-input").await.unwrap();
    s.send_keys(&input, "And again?\u{E007}").await.unwrap();
    s.wait_script(
        &format!(
            "return document.querySelectorAll('#messages .msg.assistant').length === {} && (() => {{ {last} }})()",
            before + 1
        ),
        T,
    )
    .await
    .expect("the streamed reply shows as text");
    assert_inert(&s, "phone stream").await;
    s.delete().await.ok();
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn the_csp_stops_injected_script_eval_and_remote_loads_in_a_character_window() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, mut requests) = fake_backend::serve(|_| Reply::Status(200, "{}".into())).await;
    let origin = srv.base_url.trim_end_matches("/v1").to_string();
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(&format!("return !!document.querySelector(\"{DRAWN}\")"), T)
        .await
        .expect("character drawn");
    let out = s
        .exec_async(
            r#"const done = arguments[arguments.length - 1];
            const origin = arguments[0];
            const out = {};
            const s = document.createElement('script');
            s.textContent = 'window.__inline = true';
            document.head.append(s);
            try { out.eval = eval('1 + 1'); } catch (e) { out.eval = 'blocked ' + e.name; }
            try { out.fn = new Function('return 2')(); } catch (e) { out.fn = 'blocked ' + e.name; }
            const d = document.createElement('div');
            d.innerHTML = '<img src="data:," onerror="window.__attr = true">';
            document.body.append(d);
            const r = document.createElement('script');
            r.src = origin + '/remote.js';
            r.onload = () => { out.remote = 'loaded'; };
            r.onerror = () => { out.remote = 'blocked'; };
            document.head.append(r);
            fetch(origin + '/v1/models').then(() => { out.fetch = 'reached'; }, (e) => { out.fetch = 'blocked ' + e.name; });
            setTimeout(() => {
              out.inline = window.__inline === true;
              out.attr = window.__attr === true;
              done(out);
            }, 1500);"#,
            json!([origin]),
        )
        .await
        .expect("script ran");
    assert_eq!(
        out,
        json!({
            "eval": "blocked EvalError",
            "fn": "blocked EvalError",
            "remote": "blocked",
            "fetch": "blocked TypeError",
            "inline": false,
            "attr": false,
        }),
        "the CSP must stop every one"
    );
    // Nothing reached the server: the remote script and the fetch were stopped in the page.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), requests.recv())
            .await
            .is_err(),
        "the page reached 127.0.0.1"
    );
    s.delete().await.ok();
}

/// Record every payload the Tauri bridge hands this page from now on (invoke replies, events,
/// channel messages all run through `__TAURI_INTERNALS__.callbacks`), and wrap the callbacks
/// registered before (the page's event listeners).
const RECORD: &str = r#"
const m = window.__TAURI_INTERNALS__.callbacks;
window.__ipcSeen = window.__ipcSeen || [];
const rec = (d) => { let t; try { t = JSON.stringify(d); } catch (e) { t = String(d); } window.__ipcSeen.push(t); };
const wrap = (f) => (f.__rec ? f : Object.assign((d) => { rec(d); return f(d); }, { __rec: true }));
for (const [k, f] of m) Map.prototype.set.call(m, k, wrap(f));
m.set = function (k, f) { return Map.prototype.set.call(this, k, wrap(f)); };
return m.size;
"#;

const SEEN: &str = "return window.__ipcSeen || []";

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn an_api_key_typed_in_settings_reaches_the_server_but_no_ipc_payload() {
    const KEY: &str = "sk-yui-e2e-leakcheck-3c9d1a7b55e0f2";
    let dir = tempfile::tempdir().unwrap();
    let (srv, mut requests) = fake_backend::serve(|seen| {
        if seen.text.contains("QUOTE-MY-KEY") {
            // A server refusing the key and quoting it back, as some do.
            let body = json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}});
            return Reply::Status(401, body.to_string());
        }
        sse::chat_stream(&[
            text("Key works, hello!"),
            json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
        ])
    })
    .await;
    let base_url = srv.base_url.clone();
    seed(dir.path(), |st| {
        fake_backend::point_at(st, &base_url, Transport::ChatCompletions)
    });
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    for label in ["main", "pet-kai"] {
        s.switch_to_label(label).await.unwrap();
        s.wait_script(&format!("return !!document.querySelector(\"{DRAWN}\")"), T)
            .await
            .expect("character drawn");
        assert!(exec(&s, RECORD).await.as_u64().unwrap() > 0, "{label}");
    }

    // Settings → Backend → API key, as the user types it.
    open_settings(&s).await;
    exec(&s, RECORD).await;
    let input = s.find("#api-key").await.unwrap();
    s.send_keys(&input, KEY).await.unwrap();
    exec(
        &s,
        "document.getElementById('key-form').requestSubmit(); return true",
    )
    .await;
    s.wait_script(
        "return document.getElementById('key-status').textContent.startsWith('key stored')",
        T,
    )
    .await
    .expect("the key is stored");
    assert_eq!(
        exec(&s, "return document.getElementById('api-key').value").await,
        "",
        "the field is cleared"
    );
    let settings_seen = exec(&s, SEEN).await;

    // Two turns in the main window: one answered, one refused with the key quoted back.
    s.switch_to_label("main").await.unwrap();
    say_in_chat(&s, DRAWN, "hello").await;
    s.wait_script(
        "return document.getElementById('bubble').textContent === 'Key works, hello!'",
        T,
    )
    .await
    .expect("the reply shows");
    let input = s.find("#chat-input").await.unwrap();
    let open = exec(&s, "return !document.getElementById('chat').hidden").await;
    if open == true {
        s.send_keys(&input, "QUOTE-MY-KEY\u{E007}").await.unwrap();
    } else {
        say_in_chat(&s, DRAWN, "QUOTE-MY-KEY").await;
    }
    s.wait_script(
        "return document.getElementById('bubble').classList.contains('error')",
        T,
    )
    .await
    .expect("the refusal shows as an error");
    let bubble = exec(&s, "return document.getElementById('bubble').textContent").await;
    assert!(
        bubble.as_str().unwrap().contains("API key"),
        "plain words: {bubble}"
    );

    let mut seen_by = vec![("settings", settings_seen)];
    for label in ["main", "pet-kai"] {
        s.switch_to_label(label).await.unwrap();
        seen_by.push((label, exec(&s, SEEN).await));
    }
    s.delete().await.ok();

    // The key went to the server, in the header: both turns carried it (the model list the
    // settings window asked for before the key was stored carried none).
    let mut turns = 0;
    while let Ok(r) = requests.try_recv() {
        assert!(!r.text.contains(KEY), "{} {} body", r.method, r.path);
        if r.method == "POST" {
            assert_eq!(
                r.auth.as_deref(),
                Some(format!("Bearer {KEY}").as_str()),
                "{}",
                r.path
            );
            turns += 1;
        } else {
            assert!(
                r.auth.is_none() || r.auth.as_deref() == Some(&format!("Bearer {KEY}")),
                "{:?}",
                r.auth
            );
        }
    }
    assert_eq!(turns, 2, "two turns reached the server");
    // The recording worked (the main window got the reply through it), and no payload has the key.
    let main_seen = seen_by[1].1.to_string();
    assert!(main_seen.contains("Key works, hello!"), "{main_seen}");
    for (label, seen) in &seen_by {
        let all = seen.as_array().expect("a list");
        assert!(!all.is_empty(), "{label} recorded nothing");
        for payload in all {
            let p = payload.as_str().unwrap_or_default();
            assert!(!p.contains(KEY), "{label} received the key: {p}");
        }
    }
    // Nor any file the app wrote: the database and its WAL, its logs, the key file (obfuscated).
    let mut files = vec![dir.path().to_path_buf()];
    let mut checked = Vec::new();
    while let Some(p) = files.pop() {
        if p.is_dir() {
            files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        // Only regular files hold bytes (the inbox, `inbox.sock`, is a Unix socket).
        if !p.is_file() {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "the key is in {}",
            p.display()
        );
        checked.push(p.strip_prefix(dir.path()).unwrap().display().to_string());
    }
    assert!(checked.iter().any(|n| n == "yui.sqlite3"), "{checked:?}");
    assert!(
        checked.iter().any(|n| n.starts_with("logs/yui.log")),
        "{checked:?}"
    );
}
