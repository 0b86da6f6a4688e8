//! Typing in a character's chat as a user does, on the X display (`xinput.rs`: XTest clicks and
//! key presses, not WebDriver's): a sent message leaves no undo history behind (WebKitGTK keeps
//! every edit's undo step until a frame loads a document: `ui/js/typing.js`), and a chat input
//! left alone lets its caret rest after 10 s and takes the next key typed in the window back
//! (docs/PERFORMANCE.md, "Typed as a user types"). The send also empties WebKitGTK's record of
//! the page's key presses: a `window.open` during the Return's gesture, which the shell refuses
//! (src-tauri/src/gestures.rs).

use super::soak::input::click_into_chat;
use super::webdriver::Session;
use super::xinput::Hands;
use super::{fake_backend, launch_showing, seed};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use yui_core::backend::Transport;
use yui_core::settings;
use yui_testkit::sse;

const T: Duration = Duration::from_secs(20);
const MAIN_TITLE: &str = "YUI — Yui";

/// Launch the app on `dir` (seeded) with the main window, click into its chat and type `text`
/// with XTest, until the input holds it.
async fn type_in_main_chat(dir: &Path, text: &str) -> (Session, Hands) {
    let s = launch_showing(dir, &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return !!document.querySelector('#character [data-emotion]')",
        T,
    )
    .await
    .expect("character drawn");
    let hands = Hands::connect().expect("the e2e display");
    type_into_chat(&s, &hands, text).await;
    (s, hands)
}

/// Click into the main window's chat and type `text` with XTest, until the input holds it.
async fn type_into_chat(s: &Session, hands: &Hands, text: &str) {
    click_into_chat(s, hands, MAIN_TITLE).await.unwrap();
    hands.type_text(text).unwrap();
    let typed = format!(
        "return document.getElementById('chat-input').value === {}",
        serde_json::to_string(text).unwrap()
    );
    s.wait_script(&typed, T)
        .await
        .unwrap_or_else(|e| panic!("the keys of {text:?} reach the input: {e}"));
}

/// Send what was typed (Return) and check that its undo history goes: typing it made an undo
/// step (else this proves nothing), and after the send there is none, with the one hidden frame
/// and no entry in the page's session history. And that the send asked for a new window once,
/// during the key's user activation (what empties WebKit's record of the page's key presses),
/// and got none.
async fn send_and_check_forgotten(s: &Session, hands: &Hands, which: &str) {
    assert_eq!(
        exec(s, "return document.queryCommandEnabled('undo')").await,
        true,
        "typing the {which} message made an undo step"
    );
    let windows = s.handles().await.unwrap().len();
    // Watch window.open without changing what it does (the page's own, once per page).
    exec(
        s,
        "window.__open ??= window.open;
         window.__opens = [];
         window.open = function (...args) {
           const active = navigator.userActivation.isActive;
           const got = window.__open.apply(window, args);
           window.__opens.push({ args, active, opened: got !== null });
           return got;
         };
         return true",
    )
    .await;
    hands.type_text("\n").unwrap();
    s.wait_script("return !document.queryCommandEnabled('undo')", T)
        .await
        .unwrap_or_else(|e| panic!("the {which} message's undo history is gone: {e}"));
    assert_eq!(
        exec(
            s,
            "return [history.length, document.querySelectorAll('iframe').length]"
        )
        .await,
        json!([1, 1]),
        "after the {which} message: one hidden frame emptied the history, with no entry in the \
         page's session history"
    );
    assert_eq!(
        exec(s, "return window.__opens").await,
        json!([{"args": ["about:blank", "_blank"], "active": true, "opened": false}]),
        "the {which} send asks once for a window during the key's activation, and gets none"
    );
    assert_eq!(
        s.handles().await.unwrap().len(),
        windows,
        "no window opened"
    );
}

async fn exec(s: &Session, script: &str) -> Value {
    s.exec(script, json!([])).await.expect(script)
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_sent_message_leaves_no_undo_history_in_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, _requests) = fake_backend::serve(|_| sse::chat_say("Noted.")).await;
    let base_url = srv.base_url.clone();
    seed(dir.path(), |st| {
        fake_backend::point_at(st, &base_url, Transport::ChatCompletions);
        settings::set(st, settings::FIRST_RUN, &json!({"done": true})).unwrap();
    });
    let (s, hands) = type_in_main_chat(dir.path(), "remember this").await;
    send_and_check_forgotten(&s, &hands, "first").await;
    s.wait_script(
        "return document.getElementById('bubble').textContent === 'Noted.'",
        T,
    )
    .await
    .expect("the reply plays in the bubble");
    assert_eq!(
        exec(&s, "return document.getElementById('chat-input').value").await,
        "",
        "the input is empty for the next message"
    );
    // The next message reloads that frame (its srcdoc), and empties the history again.
    type_into_chat(&s, &hands, "and this").await;
    send_and_check_forgotten(&s, &hands, "second").await;
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn an_idle_chat_input_lets_its_caret_rest_and_the_next_key_takes_the_focus_back() {
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path(), |st| {
        settings::set(st, settings::FIRST_RUN, &json!({"done": true})).unwrap();
    });
    let (s, hands) = type_in_main_chat(dir.path(), "half a th").await;
    // Under the rest (10 s): still focused.
    tokio::time::sleep(Duration::from_secs(7)).await;
    assert_eq!(
        exec(
            &s,
            "return document.activeElement && document.activeElement.id"
        )
        .await,
        "chat-input",
        "the input keeps the focus while the user may still be typing"
    );
    // Past it (10 s after the last key): the focus is let go, the chat stays open.
    s.wait_script(
        "return document.activeElement !== document.getElementById('chat-input')",
        Duration::from_secs(8),
    )
    .await
    .expect("the idle input lets the focus (and its blinking caret) go");
    assert_eq!(
        exec(&s, "return document.getElementById('chat').hidden").await,
        false
    );
    // The user comes back and types on: every key lands in the input, after the earlier words.
    hands.type_text("ought").unwrap();
    s.wait_script(
        "return document.getElementById('chat-input').value === 'half a thought'
           && document.activeElement === document.getElementById('chat-input')",
        T,
    )
    .await
    .unwrap_or_else(|e| {
        panic!("the next keys go into the input where the caret was: {e}");
    });
}
