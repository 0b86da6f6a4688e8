//! The realtime transport in the app: a character window whose backend is realtime sends the
//! typed message over the window's session (text mode: voice is off), the reply streams into the
//! bubble and its generate_express cue reaches the character; Settings → Backend shows the
//! transport and its URL, and "Test connection" runs the realtime checks against that server.
//! Its realtime panel (shown only for that transport) changes the voice and turn detection, and
//! the characters' next sessions carry them. `YUI_E2E_REALTIME_SHOT=path.png` saves a screenshot
//! of the panel (docs/img/settings-realtime.png). Each new session starts seeded with the
//! conversation so far (an earlier run's, here).

use super::{launch_showing, open_settings, read_store, say_in_chat, seed, settings_section};
use base64::Engine as _;
use serde_json::{json, Value};
use std::time::Duration;
use yui_core::backend::{BackendChange, Transport};
use yui_testkit::realtime::{self as rt, RealtimeServer};

const T: Duration = Duration::from_secs(20);

/// The turn's reply: text, a generate_express call beside it (cue-only: nothing goes back),
/// more text.
fn spoken_reply() -> Vec<Value> {
    let item = "msg_r1";
    let mut v = vec![
        rt::created("r1"),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": item, "type": "message", "role": "assistant", "status": "in_progress", "content": []}}),
        rt::text_delta(item, "Hello "),
    ];
    v.extend(rt::call_events(
        "call_1",
        "generate_express",
        r#"{"emotion_id":"happy"}"#,
    ));
    v.push(rt::text_delta(item, "from the realtime session."));
    v.push(rt::done("r1", "completed"));
    v
}

/// The realtime transport at `url` as the backend. Nothing listens at the base URL: every
/// request must go over the realtime URL.
pub fn use_realtime(st: &yui_core::Store, url: &str) {
    let change = BackendChange {
        base_url: Some("http://127.0.0.1:9/v1".into()),
        model: Some("fake-realtime".into()),
        transport: Some(Transport::Realtime),
        realtime_url: Some(Some(url.to_string())),
        ..Default::default()
    };
    yui_core::backend::update(st, &change).unwrap();
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_realtime_backend_answers_in_the_bubble_and_settings_tests_it() {
    let srv = RealtimeServer::auto(vec![
        spoken_reply(),
        // Test connection's checks: a text reply, a ping call, the round trip's reply.
        rt::text_reply("r2", &["OK"]),
        rt::call_reply("r3", &[("c1", "ping", r#"{"word":"hello"}"#)]),
        rt::text_reply("r4", &["pong received"]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let url = srv.url.clone();
    seed(dir.path(), |st| {
        use_realtime(st, &url);
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    say_in_chat(&s, "#character [data-emotion]", "Hi Yui").await;
    s.wait_script(
        "const b = document.getElementById('bubble'); return !b.hidden && b.textContent === 'Hello from the realtime session.'",
        T,
    )
    .await
    .expect("the realtime reply streams into the bubble");
    s.wait_script(
        "return document.querySelector('#character [data-emotion]').dataset.emotion === 'happy'",
        Duration::from_secs(5),
    )
    .await
    .expect("the generate_express cue reached the character");

    // What went over the socket: a text-mode session declaring the window's tools, the user's
    // words, one response.create, and no continuation after the cue-only call.
    let sent = srv.events();
    let update = sent
        .iter()
        .find(|e| e["type"] == "session.update")
        .expect("a session.update");
    assert_eq!(update["session"]["type"], "realtime", "{update}");
    assert_eq!(
        update["session"]["output_modalities"],
        json!(["text"]),
        "{update}"
    );
    let tools: Vec<&str> = update["session"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"generate_express"), "{tools:?}");
    assert!(
        sent.iter().any(|e| e["type"] == "conversation.item.create"
            && e["item"]["content"][0]["text"] == "Hi Yui"),
        "the user's words went out: {sent:?}"
    );
    let creates = sent
        .iter()
        .filter(|e| e["type"] == "response.create")
        .count();
    assert_eq!(creates, 1, "one response.create, no continuation: {sent:?}");
    assert!(
        !sent
            .iter()
            .any(|e| e["item"]["type"] == "function_call_output"),
        "a cue-only call answers nothing: {sent:?}"
    );

    // Settings → Backend: the transport and its URL as stored; Test connection checks them.
    open_settings(&s).await;
    settings_section(&s, "backend").await;
    let form = s
        .exec(
            "const f = document.getElementById('backend-form').elements; return {t: f.transport.value, u: f.realtime_url.value};",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(form["t"], "realtime", "{form}");
    assert_eq!(form["u"], srv.url.as_str(), "{form}");
    s.click(&s.find("#backend-test").await.unwrap())
        .await
        .unwrap();
    s.wait_script(
        "return document.getElementById('test-report').dataset.state === 'done'",
        Duration::from_secs(60),
    )
    .await
    .expect("the test finishes");
    let checks = s
        .exec(
            "return [...document.querySelectorAll('#test-checks li')].map(li => [li.dataset.check, li.className]);",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(
        checks,
        json!([
            ["realtime_session", "ok"],
            ["realtime_text", "ok"],
            ["realtime_tool_call", "ok"],
            ["round_trip", "ok"]
        ]),
        "{checks}"
    );
    s.delete().await.ok();

    let stored = yui_core::transcript::recent(&read_store(dir.path()), "yui", 10).unwrap();
    let said: Vec<_> = stored.iter().map(|e| e.text.as_str()).collect();
    assert!(said.contains(&"Hi Yui"), "{said:?}");
    assert!(
        said.contains(&"Hello from the realtime session."),
        "{said:?}"
    );
}

/// Find the scripted server's `session.update` that sets up the main window's session (its
/// tools include `look`; not a turn's instructions, not a pet's session) and says `voice`,
/// within `within`.
async fn session_with_voice(srv: &RealtimeServer, voice: &str, within: Duration) -> Option<Value> {
    let until = std::time::Instant::now() + within;
    loop {
        let found = srv.events().into_iter().find(|e| {
            e["type"] == "session.update"
                && e["session"]["tools"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t["name"] == "look"))
                && e["session"]["audio"]["output"]["voice"] == voice
        });
        if found.is_some() || std::time::Instant::now() > until {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn the_realtime_panel_sets_the_voice_and_turn_detection_of_the_next_session() {
    let srv = RealtimeServer::auto(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let url = srv.url.clone();
    seed(dir.path(), |st| {
        use_realtime(st, &url);
        // A conversation from an earlier run (on another transport).
        let at = chrono::Utc::now();
        use yui_core::transcript::{append, Role};
        append(st, "yui", Role::User, "remember: green tea", Some("t0"), at).unwrap();
        append(
            st,
            "yui",
            Role::Assistant,
            "Green tea, noted.",
            Some("t0"),
            at,
        )
        .unwrap();
    });
    let s = launch_showing(dir.path(), &["main"]).await;
    // The main window's session, with the defaults, seeded with the earlier conversation.
    let first = session_with_voice(&srv, "alloy", T)
        .await
        .expect("the window's session with the default voice");
    assert_eq!(
        first["session"]["audio"]["input"]["turn_detection"],
        json!({"type": "server_vad"})
    );
    // The items after a set-up (Kai's pet window has a session too, interleaved, with no
    // history of its own: every item is Yui's). They follow `session.updated`, so they may
    // still be on their way when the update is seen: read until two came (or T passed).
    let seeded = |update: &Value| {
        let (srv, update) = (&srv, update.clone());
        async move {
            let until = std::time::Instant::now() + T;
            loop {
                let ev = srv.events();
                let at = ev.iter().position(|e| *e == update).unwrap();
                let items: Vec<_> = ev[at + 1..]
                    .iter()
                    .filter(|e| e["type"] == "conversation.item.create")
                    .take(2)
                    .map(|e| (e["item"]["role"].clone(), e["item"]["content"][0].clone()))
                    .collect();
                if items.len() == 2 || std::time::Instant::now() > until {
                    return items;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    let history = vec![
        (
            json!("user"),
            json!({"type": "input_text", "text": "remember: green tea"}),
        ),
        (
            json!("assistant"),
            json!({"type": "output_text", "text": "Green tea, noted."}),
        ),
    ];
    assert_eq!(seeded(&first).await, history);

    open_settings(&s).await;
    settings_section(&s, "backend").await;
    s.wait_script(
        "const f = document.getElementById('realtime-form'); return f.dataset.loaded === 'true' && !f.hidden",
        T,
    )
    .await
    .expect("the realtime panel shows for the realtime transport");
    let shown = s
        .exec(
            "return [document.getElementById('realtime-voice').value, document.getElementById('realtime-turn-detection').value, document.getElementById('realtime-transcription').value]",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(shown, json!(["alloy", "server_vad", "whisper-1"]));

    // Another transport chosen: the panel goes away; back to realtime: it is there again.
    let transport = "#backend-form select[name=transport]";
    s.click(
        &s.find(&format!("{transport} option[value=chat_completions]"))
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    s.wait_script("return document.getElementById('realtime-form').hidden", T)
        .await
        .expect("hidden for another transport");
    s.click(
        &s.find(&format!("{transport} option[value=realtime]"))
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    s.wait_script("return !document.getElementById('realtime-form').hidden", T)
        .await
        .expect("shown again for realtime");

    // A voice that is no name: refused in plain words, nothing stored.
    let voice = s.find("#realtime-voice").await.unwrap();
    let erase = format!("\u{E010}{}", "\u{E003}".repeat(12));
    s.send_keys(&voice, &format!("{erase}my voice"))
        .await
        .unwrap();
    s.click(&s.find("#realtime-save").await.unwrap())
        .await
        .unwrap();
    s.wait_script(
        "const st = document.getElementById('realtime-status'); return st.classList.contains('error') && st.textContent === '\"my voice\" is not a voice name: use letters, digits, - or _ (e.g. alloy).'",
        T,
    )
    .await
    .expect("the refusal in plain words");
    assert_eq!(
        yui_core::backend::realtime::load(&read_store(dir.path())).voice,
        "alloy"
    );

    // marin, semantic voice activity: saved, and the next session carries them.
    s.send_keys(&voice, &format!("{erase}marin")).await.unwrap();
    s.click(
        &s.find("#realtime-turn-detection option[value=semantic_vad]")
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    s.click(&s.find("#realtime-save").await.unwrap())
        .await
        .unwrap();
    s.wait_script(
        "const st = document.getElementById('realtime-status'); return !st.classList.contains('error') && st.textContent.startsWith('Saved')",
        T,
    )
    .await
    .expect("saved");
    let next = session_with_voice(&srv, "marin", T)
        .await
        .expect("a new session with the chosen voice");
    assert_eq!(
        next["session"]["audio"]["input"]["turn_detection"],
        json!({"type": "semantic_vad"}),
        "{next}"
    );
    assert_eq!(
        next["session"]["audio"]["input"]["transcription"],
        json!({"model": "whisper-1"})
    );
    assert_eq!(
        seeded(&next).await,
        history,
        "the new session carries on the conversation"
    );
    let stored = yui_core::backend::realtime::load(&read_store(dir.path()));
    assert_eq!(stored.voice, "marin");
    assert_eq!(
        stored.turn_detection,
        yui_core::backend::realtime::TurnDetection::SemanticVad
    );

    if let Some(path) = std::env::var_os("YUI_E2E_REALTIME_SHOT") {
        s.exec(
            "document.getElementById('realtime-form').scrollIntoView({block: 'center'}); return true",
            json!([]),
        )
        .await
        .unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let b64 = s.screenshot().await.expect("screenshot");
        let png = base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .unwrap();
        std::fs::write(&path, png).expect("write the realtime panel screenshot");
    }
    s.delete().await.ok();
}
