//! Relations in the real app: moving a slider in settings → Character → Relations changes the
//! band word shown in the quick controls' preset row, live, and reaches the store.

use super::{
    fake_backend, launch_showing, open_quick, open_settings, read_store, say_in_chat,
    settings_section,
};
use serde_json::json;
use std::time::Duration;
use yui_core::backend::Transport;
use yui_core::relations::{self, Target};
use yui_testkit::sse::{self, ScriptServer, Seen};

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn moving_a_slider_in_settings_changes_the_band_in_quick_controls() {
    let dir = tempfile::tempdir().unwrap();
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;

    // Quick controls first: kai's row shows the starting band.
    open_quick(&s).await;
    let band = "document.querySelector(\"[data-relations-band='kai']\")?.textContent";
    s.wait_script(
        &format!("return {band} === 'neutral'"),
        Duration::from_secs(10),
    )
    .await
    .expect("quick controls show kai's band");

    // Settings: the Relations section with its switch and a slider per preset and target.
    open_settings(&s).await;
    settings_section(&s, "character").await;
    s.wait_script(
        "return document.getElementById('relations')?.dataset.relationsLoaded === 'true'",
        Duration::from_secs(10),
    )
    .await
    .expect("relations panel loaded");
    let has_switch = s
        .exec(
            "return !!document.querySelector('#relations #switch-relations')",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(has_switch, true, "the Relations switch is in the section");
    let slider = "#relations input[data-relation-preset='kai'][data-relation-target='user']";
    s.find(slider).await.expect("kai → user slider");
    // Move it the way a drag ends: value, then the input and change events.
    s.exec(
        &format!(
            "const el = document.querySelector(\"{slider}\"); el.value = '13';
             el.dispatchEvent(new Event('input', {{bubbles: true}}));
             el.dispatchEvent(new Event('change', {{bubbles: true}}));
             return true;"
        ),
        json!([]),
    )
    .await
    .unwrap();
    s.wait_script(
        "return [...document.querySelectorAll('#relations-history li')].some(li => li.textContent.includes('set by the user'))",
        Duration::from_secs(10),
    )
    .await
    .expect("the jump shows in the history with the user's reason");

    if let Some(path) = std::env::var_os("YUI_E2E_RELATIONS_SCREENSHOT") {
        s.exec(
            "document.getElementById('relations').scrollIntoView(); return true;",
            json!([]),
        )
        .await
        .unwrap();
        tokio::time::sleep(Duration::from_millis(800)).await;
        let st = std::process::Command::new("import")
            .args(["-window", "root"])
            .arg(&path)
            .status()
            .expect("run import (imagemagick)");
        assert!(st.success(), "screenshot failed");
    }

    // Back in quick controls the band changed without a reload.
    s.switch_to_label("quick").await.unwrap();
    s.wait_script(
        &format!("return {band} === 'close'"),
        Duration::from_secs(10),
    )
    .await
    .expect("quick controls' band follows the slider");
    s.delete().await.ok();
    assert_eq!(
        relations::value(&read_store(dir.path()), "kai", &Target::User).unwrap(),
        13
    );
}

/// A fake backend: the first request gets a `rate_relation` call (finish_reason `tool_calls`),
/// every later one a short spoken reply. Hands back the request bodies.
async fn rating_backend() -> (ScriptServer, tokio::sync::mpsc::UnboundedReceiver<Seen>) {
    fake_backend::serve(|req| {
        let args = json!({"toward": "user", "delta": 2, "why": "you remembered my name"}).to_string();
        let events = if req.n == 1 {
            vec![
                json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_r","type":"function","function":{"name":"rate_relation","arguments":args}}]},"finish_reason":null}]}),
                json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
            ]
        } else {
            vec![
                json!({"choices":[{"index":0,"delta":{"role":"assistant","content":"Thank you!"},"finish_reason":null}]}),
                json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
            ]
        };
        sse::chat_stream(&events)
    })
    .await
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_model_rate_relation_call_updates_the_band_in_quick_controls() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, mut requests) = rating_backend().await;
    let base_url = srv.base_url.clone();
    super::seed(dir.path(), |st| {
        fake_backend::point_at(st, &base_url, Transport::ChatCompletions);
        relations::set_by_hand(st, &yui_core::SystemClock, "yui", &Target::User, 3).unwrap();
    });
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    open_quick(&s).await;
    let band = "document.querySelector(\"[data-relations-band='yui']\")?.textContent";
    s.wait_script(
        &format!("return {band} === 'neutral'"),
        Duration::from_secs(10),
    )
    .await
    .expect("quick controls show yui's band (3: neutral)");

    // A turn in the main window: the model rates the user +2 (3 → 5: warm).
    s.switch_to_label("main").await.unwrap();
    say_in_chat(&s, "#character [data-emotion]", "Hi, it's me").await;
    s.wait_script(
        "return document.getElementById('bubble').textContent === 'Thank you!'",
        Duration::from_secs(20),
    )
    .await
    .expect("the reply after the tool round trip");

    s.switch_to_label("quick").await.unwrap();
    s.wait_script(
        &format!("return {band} === 'warm'"),
        Duration::from_secs(10),
    )
    .await
    .expect("quick controls' band follows the model's change");
    s.delete().await.ok();

    // The first request carried the relation: line; the round trip carried the band result.
    let first = requests.recv().await.expect("first request").text;
    assert!(
        first.contains("relation: user: neutral; Kai: neutral"),
        "relation line in the client context: {first}"
    );
    let body: serde_json::Value = requests.recv().await.expect("round trip").body;
    let tool_msg = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .expect("a tool message");
    assert_eq!(tool_msg["content"], "warm");
    let log = relations::list(&read_store(dir.path()), Some("yui"), 5)
        .unwrap()
        .log;
    assert_eq!(log[0].reason, "you remembered my name");
    assert_eq!(log[0].value, 5);
}
