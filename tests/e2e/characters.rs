//! Characters the user makes and the phone window, end to end: a character created in settings
//! appears on the desktop (its pet window opens) and deleting it (after the confirmation) closes
//! it and removes it from the store; a character's phone shows its history in pages, sends a
//! message as the phone window (generate_express only), and the reply also plays on the
//! character's own window.
//!
//! `YUI_E2E_PHONE_SHOT=path.png` saves a screenshot of the phone window (docs/img/phone.png).

use super::{fake_backend, launch_showing, open_settings, read_store, seed, settings_section};
use base64::Engine as _;
use serde_json::{json, Value};
use std::time::Duration;
use yui_core::backend::Transport;
use yui_core::presets;
use yui_core::transcript::{self, Role};
use yui_testkit::sse;

const T: Duration = Duration::from_secs(20);

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_character_created_in_settings_appears_on_the_desktop() {
    let dir = tempfile::tempdir().unwrap();
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    open_settings(&s).await;
    settings_section(&s, "character").await;
    s.wait_script(
        "return !!document.querySelector('#preset-list li[data-preset-id=\"kai\"] .character-actions')
           && document.getElementById('character-look').dataset.loaded === 'true'",
        T,
    )
    .await
    .expect("the rows carry the character buttons");

    s.click(&s.find("#character-add").await.unwrap())
        .await
        .unwrap();
    let name = s.find("#character-name").await.unwrap();
    s.send_keys(&name, "Mio").await.unwrap();
    let persona = s.find("#character-persona").await.unwrap();
    s.send_keys(&persona, "You are Mio, a sleepy cat.")
        .await
        .unwrap();
    s.exec(
        "const l = document.getElementById('character-look'); l.value = 'mint';
         l.dispatchEvent(new Event('change')); 
         document.getElementById('character-voice').value = 'female2'; return true;",
        json!([]),
    )
    .await
    .unwrap();
    s.click(&s.find("#character-save").await.unwrap())
        .await
        .unwrap();

    s.wait_for_labels(&["pet-mio"], T)
        .await
        .expect("the new character's window opens on the desktop");
    let mio = presets::get(&read_store(dir.path()), "mio").expect("stored");
    assert_eq!(mio.name, "Mio");
    assert_eq!(mio.persona, "You are Mio, a sleepy cat.");
    assert_eq!(mio.avatar, json!({"kind": "builtin", "palette": "mint"}));
    assert_eq!(mio.voice, json!({"voice_type": "female2"}));
    assert!(mio.is_open);
    s.switch_to_label("pet-mio").await.unwrap();
    s.wait_script(
        "return document.title === 'YUI — Mio' && document.getElementById('character').children.length > 0",
        T,
    )
    .await
    .expect("the pet window draws Mio");

    // A second character with the same name (other case) is refused with the core's message.
    s.switch_to_label("settings").await.unwrap();
    s.click(&s.find("#character-add").await.unwrap())
        .await
        .unwrap();
    s.send_keys(&s.find("#character-name").await.unwrap(), "MIO")
        .await
        .unwrap();
    s.click(&s.find("#character-save").await.unwrap())
        .await
        .unwrap();
    s.wait_script(
        "const st = document.getElementById('status'); return st.classList.contains('error') && st.textContent.includes('already exists')",
        T,
    )
    .await
    .expect("a taken name is refused");
    s.click(&s.find("#character-cancel").await.unwrap())
        .await
        .unwrap();

    // Delete asks first; Keep keeps.
    let row = "#preset-list li[data-preset-id=\"mio\"]";
    s.wait_script(
        &format!("return !!document.querySelector('{row} .delete')"),
        T,
    )
    .await
    .unwrap();
    s.click(&s.find(&format!("{row} .delete")).await.unwrap())
        .await
        .unwrap();
    s.click(&s.find(&format!("{row} .confirm-no")).await.unwrap())
        .await
        .unwrap();
    assert!(
        presets::get(&read_store(dir.path()), "mio").is_ok(),
        "Keep kept Mio"
    );
    s.click(&s.find(&format!("{row} .delete")).await.unwrap())
        .await
        .unwrap();
    s.click(&s.find(&format!("{row} .confirm-yes")).await.unwrap())
        .await
        .unwrap();
    s.wait_script(&format!("return !document.querySelector('{row}')"), T)
        .await
        .expect("the row goes");
    let start = std::time::Instant::now();
    loop {
        let labels = s.label_names().await.unwrap_or_default();
        if !labels.iter().any(|l| l == "pet-mio") {
            break;
        }
        assert!(start.elapsed() < T, "pet-mio still open: {labels:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(
        presets::get(&read_store(dir.path()), "mio").is_err(),
        "deleted from the store"
    );
    s.delete().await.ok();
}

fn at(min: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339("2026-12-01T08:00:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc)
        + chrono::Duration::minutes(min)
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn the_phone_shows_the_history_and_sends_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, mut requests) = fake_backend::serve(|_| {
        sse::chat_stream(
            &[
                json!({"choices":[{"index":0,"delta":{"role":"assistant","content":"Tea sounds "},"finish_reason":null}]}),
                json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"generate_express","arguments":"{\"emotion_id\":\"happy\"}"}}]},"finish_reason":null}]}),
                json!({"choices":[{"index":0,"delta":{"content":"lovely. I'll put the kettle on."},"finish_reason":null}]}),
                json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
            ],
        )
    })
    .await;
    let base_url = srv.base_url.clone();
    seed(dir.path(), |st| {
        fake_backend::point_at(st, &base_url, Transport::ChatCompletions);
        // 40 lines: the phone shows the newest 30, then the rest on "Earlier messages".
        for i in 0..38 {
            let (role, text) = if i % 2 == 0 {
                (Role::User, format!("message {i} to Kai"))
            } else {
                (Role::Assistant, format!("Kai's answer {i}"))
            };
            transcript::append(st, "kai", role, &text, None, at(i)).unwrap();
        }
        transcript::append(
            st,
            "kai",
            Role::User,
            "Shall we have tea later?",
            None,
            at(50),
        )
        .unwrap();
        transcript::append(
            st,
            "kai",
            Role::Assistant,
            "Only if it is jasmine.",
            None,
            at(51),
        )
        .unwrap();
        transcript::append(st, "yui", Role::User, "not Kai's line", None, at(52)).unwrap();
    });
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;

    // From the character's menu.
    s.switch_to_label("pet-kai").await.unwrap();
    s.wait_script(
        "return !!document.querySelector('#character [data-emotion]')",
        T,
    )
    .await
    .expect("Kai drawn");
    s.exec(
        "document.getElementById('menu-phone').click(); return true;",
        json!([]),
    )
    .await
    .unwrap();
    s.wait_for_label("phone-kai", T)
        .await
        .expect("the phone opens");
    s.wait_script("return document.body.dataset.loaded === 'true'", T)
        .await
        .expect("history loaded");

    let texts = "return [...document.querySelectorAll('#messages .msg')].map((m) => m.dataset.role + ':' + m.querySelector('.text').textContent)";
    let shown: Vec<String> =
        serde_json::from_value(s.exec(texts, json!([])).await.unwrap()).unwrap();
    assert_eq!(shown.len(), 30, "{shown:?}");
    assert_eq!(shown[28], "user:Shall we have tea later?");
    assert_eq!(shown[29], "assistant:Only if it is jasmine.");
    assert!(
        !shown.iter().any(|t| t.contains("not Kai's")),
        "only Kai's history"
    );
    assert_eq!(
        s.exec(
            "return document.getElementById('title').textContent",
            json!([])
        )
        .await
        .unwrap(),
        "Kai"
    );
    s.click(&s.find("#load-older").await.unwrap())
        .await
        .unwrap();
    s.wait_script(
        "return document.querySelectorAll('#messages .msg').length === 40 && document.getElementById('older').hidden",
        T,
    )
    .await
    .expect("the older page loads and there is no more");
    let shown: Vec<String> =
        serde_json::from_value(s.exec(texts, json!([])).await.unwrap()).unwrap();
    assert_eq!(shown[0], "user:message 0 to Kai");

    // Send a message from the phone.
    let input = s.find("#compose-input").await.unwrap();
    s.send_keys(&input, "Green tea today?\u{E007}")
        .await
        .unwrap();
    s.wait_script(
        "const m = [...document.querySelectorAll('#messages .msg.assistant')].pop();
         return !!m && !m.classList.contains('pending') && m.querySelector('.text').textContent === \"Tea sounds lovely. I'll put the kettle on.\"",
        T,
    )
    .await
    .expect("the reply streams into the thread");
    let shown: Vec<String> =
        serde_json::from_value(s.exec(texts, json!([])).await.unwrap()).unwrap();
    assert_eq!(shown[shown.len() - 2], "user:Green tea today?");

    // The phone declares generate_express only, and the history went out with the request.
    let body: Value = requests.recv().await.expect("a request").body;
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .expect("tools[]")
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["generate_express"]);
    let sent = body["messages"].to_string();
    assert!(sent.contains("Only if it is jasmine.") && sent.contains("Green tea today?"));

    if let Some(path) = std::env::var_os("YUI_E2E_PHONE_SHOT") {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let b64 = s.screenshot().await.expect("screenshot");
        let png = base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .unwrap();
        std::fs::write(&path, png).expect("write the phone screenshot");
    }

    // The reply also played on Kai's own window.
    s.switch_to_label("pet-kai").await.unwrap();
    s.wait_script(
        "return document.getElementById('stage').dataset.phoneReply === \"Tea sounds lovely. I'll put the kettle on.\"
           && document.getElementById('bubble').textContent === \"Tea sounds lovely. I'll put the kettle on.\"",
        T,
    )
    .await
    .expect("the reply shows in Kai's bubble");
    s.wait_script(
        "return document.querySelector('#character [data-emotion]').dataset.emotion === 'happy'",
        T,
    )
    .await
    .expect("and its cue plays on Kai");
    s.delete().await.ok();

    let stored = transcript::recent(&read_store(dir.path()), "kai", 2).unwrap();
    assert_eq!(stored[0].text, "Green tea today?");
    assert_eq!(stored[1].text, "Tea sounds lovely. I'll put the kettle on.");
}
