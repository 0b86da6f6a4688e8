//! Reminders in the real app (issue 44): a reminder the scripted model sets with `remind` rings
//! in the character's window at its time; a reminder that falls due while another app's window
//! is fullscreen (a game, a film) waits, held for that reason, and is said as soon as the
//! window closes. One app session, about 65 s (the `remind` tool counts in whole minutes).

use super::{fake_backend, launch_showing, open_quick, say_in_chat, seed};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::*;
use x11rb::wrapper::ConnectionExt as _;
use yui_core::backend::Transport;
use yui_core::settings;
use yui_testkit::sse::{self, Reply, Seen};

/// Another app's window shown fullscreen from the start (`_NET_WM_STATE_FULLSCREEN` before it
/// is mapped, which the window manager honours).
fn open_fullscreen() -> (x11rb::rust_connection::RustConnection, Window) {
    let (conn, screen) = x11rb::connect(None).expect("the e2e display");
    let root = conn.setup().roots[screen].root;
    let atom = |name: &str| {
        conn.intern_atom(false, name.as_bytes())
            .unwrap()
            .reply()
            .unwrap()
            .atom
    };
    let (state, full) = (atom("_NET_WM_STATE"), atom("_NET_WM_STATE_FULLSCREEN"));
    let id = conn.generate_id().unwrap();
    conn.create_window(
        x11rb::COPY_DEPTH_FROM_PARENT,
        id,
        root,
        0,
        0,
        640,
        480,
        0,
        WindowClass::INPUT_OUTPUT,
        x11rb::COPY_FROM_PARENT,
        &CreateWindowAux::new().background_pixel(0x0010_1010),
    )
    .unwrap();
    conn.change_property8(
        PropMode::REPLACE,
        id,
        AtomEnum::WM_CLASS,
        AtomEnum::STRING,
        b"film\0Film\0",
    )
    .unwrap();
    conn.change_property32(PropMode::REPLACE, id, state, AtomEnum::ATOM, &[full])
        .unwrap();
    conn.map_window(id).unwrap();
    conn.flush().unwrap();
    (conn, id)
}

fn text(t: &str) -> Value {
    json!({"choices":[{"index":0,"delta":{"content":t},"finish_reason":null}]})
}
fn finish(reason: &str) -> Value {
    json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}]})
}

/// The last user message of a request: this turn's client context and words.
fn last_user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The model: sets the tea reminder when asked, and says each reminder when it rings.
fn respond(seen: &Seen) -> Reply {
    let body = &seen.text;
    let now = last_user(&seen.body);
    let rings = |what: &str| {
        now.contains("proactive: reminder you set") && now.contains(&format!(": \"{what}\""))
    };
    let ev = if rings("stretch") {
        vec![text("Time to stretch!"), finish("stop")]
    } else if rings("tea") {
        vec![text("Tea time!"), finish("stop")]
    } else if body.contains("\"role\":\"tool\"") {
        vec![text("Sure, in a minute."), finish("stop")]
    } else if body.contains("remind me about tea") {
        let args = json!({"in_minutes": 1, "text": "tea"}).to_string();
        vec![
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_r","type":"function","function":{"name":"remind","arguments":args}}]},"finish_reason":null}]}),
            finish("tool_calls"),
        ]
    } else {
        vec![finish("stop")]
    };
    let mut parts = sse::events(&ev);
    parts.push(sse::done());
    Reply::Sse(parts)
}

const BUBBLE: &str =
    "const b = document.getElementById('bubble'); return b.hidden ? '' : b.textContent";

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_reminder_rings_at_its_time_and_one_due_during_a_fullscreen_window_waits_for_it_to_close()
{
    let dir = tempfile::tempdir().unwrap();
    let (server, mut requests) = fake_backend::serve(respond).await;
    let now = chrono::Utc::now();
    seed(dir.path(), |st| {
        fake_backend::point_at(st, &server.base_url, Transport::ChatCompletions);
        settings::set(st, settings::FIRST_RUN, &json!({"done": true})).unwrap();
        // No quiet hours: the suite may run at any hour.
        settings::set(st, yui_core::manners::QUIET_HOURS_KEY, &json!(null)).unwrap();
        // Set in an earlier session, due 25 s from now.
        yui_core::reminders::add(
            st,
            "yui",
            "stretch",
            now + chrono::Duration::seconds(25),
            now,
        )
        .unwrap();
    });
    let (x, film) = open_fullscreen();
    let s = launch_showing(dir.path(), &["main"]).await;

    // The user asks; the model sets the reminder (the tool's exact result goes back to it).
    say_in_chat(
        &s,
        "#character [data-emotion]",
        "Please remind me about tea in a minute",
    )
    .await;
    let set_at = loop {
        let r = tokio::time::timeout(Duration::from_secs(30), requests.recv())
            .await
            .expect("the model was asked in time")
            .unwrap();
        if r.text.contains("\"role\":\"tool\"") {
            assert!(
                r.text.contains("ok: reminder set for "),
                "the remind tool's result: {}",
                r.text
            );
            break Instant::now();
        }
    };

    // The stretch reminder falls due at +25 s under the fullscreen film: it waits, held.
    let due = Instant::now() + Duration::from_secs(25)
        - Duration::from_millis(set_at.elapsed().as_millis() as u64);
    tokio::time::sleep_until((due + Duration::from_secs(5)).into()).await;
    while let Ok(r) = requests.try_recv() {
        assert!(
            !last_user(&r.body).contains("stretch"),
            "the reminder was said over a fullscreen window"
        );
    }
    // The quick controls (which may read the manners) show it waiting, and why.
    open_quick(&s).await;
    let page = s.invoke("manners_get", json!({})).await.unwrap();
    assert_eq!(page["ok"], true, "{page}");
    let waiting = page["value"]["waiting"].to_string();
    assert!(
        waiting.contains("stretch") || waiting.contains("reminder"),
        "the reminder waits: {page}"
    );
    assert!(
        waiting.contains("held: fullscreen window"),
        "held by the fullscreen window: {page}"
    );
    s.switch_to_label("main").await.unwrap();

    // The film closes: the reminder is said within seconds.
    x.destroy_window(film).unwrap();
    x.flush().unwrap();
    let closed = Instant::now();
    loop {
        let r = tokio::time::timeout(Duration::from_secs(10), requests.recv())
            .await
            .expect("the waiting reminder was said after the window closed")
            .unwrap();
        if last_user(&r.body).contains(": \"stretch\"") {
            break;
        }
    }
    let said_after = closed.elapsed();
    s.wait_script(
        "return document.getElementById('bubble').textContent.includes('Time to stretch!')",
        Duration::from_secs(10),
    )
    .await
    .expect("the stretch reminder shows in the bubble");

    // The tea reminder rings at its time, a minute after it was set.
    let r = loop {
        let r = tokio::time::timeout(Duration::from_secs(75), requests.recv())
            .await
            .expect("the tea reminder rang")
            .unwrap();
        if last_user(&r.body).contains(": \"tea\"") {
            break r;
        }
    };
    let rang = set_at.elapsed();
    assert!(
        rang >= Duration::from_secs(55) && rang <= Duration::from_secs(62),
        "rang {rang:?} after it was set (in_minutes: 1)"
    );
    assert!(
        last_user(&r.body).contains("proactive: reminder you set, due "),
        "{}",
        r.text
    );
    s.wait_script(
        "return document.getElementById('bubble').textContent.includes('Tea time!')",
        Duration::from_secs(10),
    )
    .await
    .expect("the tea reminder shows in the bubble");
    let bubble = s.exec(BUBBLE, json!([])).await.unwrap();
    eprintln!(
        "stretch said {said_after:?} after the fullscreen window closed; tea rang {rang:?} after it was set; bubble {bubble}"
    );
    s.delete().await.ok();
}
