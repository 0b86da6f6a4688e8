//! Two characters talking, end to end: the user asks Yui, Yui's reply addresses Kai
//! (`address_character`), Kai's window plays its addressed reply, Kai addresses Yui back and
//! Yui's `[SILENT]` ends the exchange without a bubble; then, with the chain cap at 1, the
//! exchange stops after one addressed turn. The scripted backend answers by request number.
//!
//! `YUI_E2E_TALK_SHOT=path.png` saves a screenshot of both characters talking
//! (docs/img/conversation.png).

use super::{fake_backend, launch_showing, read_store, say_in_chat, seed};
use serde_json::{json, Value};
use std::time::Duration;
use yui_core::backend::Transport;
use yui_core::{settings, transcript};
use yui_testkit::sse::{self, Part, Reply};

const T: Duration = Duration::from_secs(20);

fn text(t: &str) -> Value {
    json!({"choices":[{"index":0,"delta":{"content":t},"finish_reason":null}]})
}
fn address(to: &str) -> Value {
    let args = json!({ "to": to }).to_string();
    json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"address_character","arguments":args}}]},"finish_reason":null}]})
}
fn finish(reason: &str) -> Value {
    json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}]})
}

/// The script: request n → its stream.
fn reply(n: usize) -> Vec<Value> {
    match n {
        1 => vec![
            text("Kai, look: a rainbow!"),
            address("Kai"),
            finish("tool_calls"),
        ],
        3 => vec![
            text("It is lovely, Yui."),
            address("Yui"),
            finish("tool_calls"),
        ],
        5 => vec![text("[SIL"), text("ENT]"), finish("stop")],
        6 => vec![text("Kai, tea time!"), address("Kai"), finish("tool_calls")],
        8 => vec![text("Coming, Yui!"), address("Yui"), finish("tool_calls")],
        // After a tool round trip, and anything past the script: nothing more to say.
        _ => vec![finish("stop")],
    }
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_reply_addressed_to_kai_plays_in_kais_window_until_silent_or_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let (server, mut requests) = fake_backend::serve(|seen| {
        // Each reply takes a moment, like a model, so the windows can be seen in between.
        let mut parts = vec![Part::Sleep(Duration::from_millis(300))];
        parts.extend(sse::events(&reply(seen.n)));
        parts.push(sse::done());
        Reply::Sse(parts)
    })
    .await;
    let base_url = server.base_url.clone();
    seed(dir.path(), |st| {
        fake_backend::point_at(st, &base_url, Transport::ChatCompletions)
    });
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    s.switch_to_label("pet-kai").await.unwrap();
    s.wait_script(
        "return !!document.querySelector('#character [data-emotion]')",
        T,
    )
    .await
    .expect("Kai drawn");
    s.switch_to_label("main").await.unwrap();
    say_in_chat(&s, "#character [data-emotion]", "Look outside").await;

    // Kai's window plays the addressed reply; Yui's [SILENT] ends it.
    s.switch_to_label("pet-kai").await.unwrap();
    s.wait_script(
        "const d = document.getElementById('stage').dataset; return d.addressedReply === 'It is lovely, Yui.' && d.addressedFrom === 'yui'",
        T,
    )
    .await
    .expect("Kai's window shows its addressed reply");
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return document.getElementById('stage').dataset.addressedStatus === 'silent'",
        T,
    )
    .await
    .expect("Yui's addressed turn ends silent");
    let bubble: String = serde_json::from_value(
        s.exec(
            "const b = document.getElementById('bubble'); return b.hidden ? '' : b.textContent",
            json!([]),
        )
        .await
        .unwrap(),
    )
    .unwrap();
    assert!(!bubble.contains("SIL"), "[SILENT] never shows: {bubble:?}");

    let mut bodies = Vec::new();
    for _ in 0..5 {
        let b = tokio::time::timeout(T, requests.recv())
            .await
            .unwrap()
            .unwrap();
        bodies.push(b.body);
    }
    let kai = bodies[2]["messages"].to_string();
    assert!(
        kai.contains(r#"addressed: Yui spoke to you: \"Kai, look: a rainbow!\""#),
        "{kai}"
    );

    // The chain cap, read when a reply addresses someone: 1 stops after Kai's answer.
    settings::set(
        &read_store(dir.path()),
        settings::ADDRESSED_CHAIN_MAX,
        &json!(1),
    )
    .unwrap();
    // The chat input is still open from the first message.
    let open: bool = serde_json::from_value(
        s.exec("return !document.getElementById('chat').hidden", json!([]))
            .await
            .unwrap(),
    )
    .unwrap();
    if open {
        let input = s.find("#chat-input").await.unwrap();
        s.send_keys(&input, "Tea?\u{E007}").await.unwrap();
    } else {
        say_in_chat(&s, "#character [data-emotion]", "Tea?").await;
    }
    s.switch_to_label("pet-kai").await.unwrap();
    s.wait_script(
        "return document.getElementById('stage').dataset.addressedReply === 'Coming, Yui!' && !document.getElementById('bubble').hidden",
        T,
    )
    .await
    .expect("Kai answers the second exchange");
    if let Some(path) = std::env::var_os("YUI_E2E_TALK_SHOT") {
        tokio::time::sleep(Duration::from_millis(800)).await;
        let st = std::process::Command::new("import")
            .args(["-window", "root"])
            .arg(&path)
            .status()
            .expect("run import (imagemagick)");
        assert!(st.success(), "screenshot failed");
    }
    for _ in 0..4 {
        tokio::time::timeout(T, requests.recv())
            .await
            .unwrap()
            .unwrap();
    }
    // Kai addressed Yui again, but the cap holds: no request 10.
    assert!(
        tokio::time::timeout(Duration::from_secs(3), requests.recv())
            .await
            .is_err(),
        "no addressed turn past the cap"
    );
    s.delete().await.ok();
    let kai = transcript::lines(&read_store(dir.path()), "kai", 10).unwrap();
    let said: Vec<_> = kai
        .iter()
        .map(|e| (e.speaker.as_deref(), e.text.as_str()))
        .collect();
    assert_eq!(
        said,
        [
            (Some("Yui"), "Kai, look: a rainbow!"),
            (None, "It is lovely, Yui."),
            (Some("Yui"), "Kai, tea time!"),
            (None, "Coming, Yui!")
        ]
    );
}
