//! Expression in the real app. A scripted Responses turn says "Hello! ", plays a
//! `generate_express` cue (emotion `happy`, motion `wave`), holds the stream until the test lets
//! it go on, then says "Nice to see you.". The main character's rendered emotion changes at the
//! cue's point in the stream: in the DOM (`data-emotion`, `data-motion` on the character) and in
//! pixels (WebDriver screenshots before and after, compared inside the character's box). And
//! "playback finished" (`yui://playback-finished`, mirrored by the window as
//! `#stage[data-playback-finished]`) arrives only once the bubble shows the whole reply.

use super::webdriver::Session;
use super::{fake_backend, launch};
use base64::Engine as _;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, Notify};
use yui_core::backend::Transport;
use yui_testkit::sse::{self, Part, Reply, ScriptServer, Seen};

const FIRST: &str = "Hello! ";
const SECOND: &str = "Nice to see you.";
const CUE_ARGS: &str = r#"{"emotion_id":"happy","motion_id":"wave"}"#;

/// A fake Responses backend on 127.0.0.1. Every request gets: `response.created`, the text
/// [`FIRST`], a `generate_express` call with [`CUE_ARGS`]; then the stream waits for `release`
/// (at most a minute) and ends with the text [`SECOND`] and `response.completed`. Hands back
/// the request bodies.
async fn scripted_backend() -> (ScriptServer, mpsc::UnboundedReceiver<Seen>, Arc<Notify>) {
    let release = Arc::new(Notify::new());
    let gate = release.clone();
    let (srv, rx) = fake_backend::serve(move |_| {
        let call = json!({"type":"function_call","id":"fc_1","call_id":"call_1","name":"generate_express","arguments":CUE_ARGS});
        let mut parts = sse::events(&[
            json!({"type":"response.created","response":{"id":"resp_e2e","status":"in_progress","output":[]}}),
            json!({"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":FIRST}),
            json!({"type":"response.output_item.added","output_index":1,"item":call}),
            json!({"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":1,"arguments":CUE_ARGS}),
            json!({"type":"response.output_item.done","output_index":1,"item":call}),
        ]);
        parts.push(Part::Gate(gate.clone(), Duration::from_secs(60)));
        parts.extend(sse::events(&[
            json!({"type":"response.output_text.delta","item_id":"msg_2","output_index":2,"content_index":0,"delta":SECOND}),
            json!({"type":"response.completed","response":{"id":"resp_e2e","status":"completed"}}),
        ]));
        Reply::Sse(parts)
    })
    .await;
    (srv, rx, release)
}

/// Record, in the page, every change of the bubble's text, of the character's `data-emotion` and
/// `data-motion`, of `#stage[data-playback-finished]`, and every `yui://playback-finished` event,
/// each with the bubble's text at that moment, in order.
const RECORDER: &str = r#"
const done = arguments[arguments.length - 1];
const log = (window.__e2eLog = []);
const stage = document.getElementById('stage');
const bubble = document.getElementById('bubble');
const ch = document.querySelector('#character [data-emotion]');
const rec = (kind, value) => log.push({kind, value: value ?? null, bubble: bubble.textContent, t: performance.now()});
new MutationObserver(() => rec('bubble', bubble.textContent))
  .observe(bubble, {childList: true, characterData: true, subtree: true});
new MutationObserver((ms) => { for (const m of ms) rec(m.attributeName, ch.getAttribute(m.attributeName)); })
  .observe(ch, {attributes: true, attributeFilter: ['data-emotion', 'data-motion']});
new MutationObserver(() => rec('data-playback-finished', stage.dataset.playbackFinished))
  .observe(stage, {attributes: true, attributeFilter: ['data-playback-finished']});
window.__TAURI__.event.listen('yui://playback-finished', (e) => rec('event', e.payload && e.payload.turn_id))
  .then(() => done(true), (err) => done(String(err)));
"#;

/// The character's box in screenshot pixels: `(x, y, w, h)`.
async fn character_box(s: &Session) -> (u32, u32, u32, u32) {
    let r = s
        .exec(
            "const r = document.querySelector('#character .yui-char').getBoundingClientRect();
             const d = window.devicePixelRatio || 1;
             return [r.left * d, r.top * d, r.width * d, r.height * d].map(Math.round);",
            json!([]),
        )
        .await
        .expect("character box");
    let n = |i: usize| r[i].as_i64().unwrap_or(0).max(0) as u32;
    (n(0), n(1), n(2), n(3))
}

/// A WebDriver screenshot of the current window, decoded, taken with every animation of the
/// character stopped and the bubble, chat input and menu hidden (layout unchanged): what differs
/// between two such shots is what the character draws, not a breath or a blink caught mid-way.
async fn still_shot(s: &Session) -> image::RgbaImage {
    let frozen = s
        .exec_async(
            "const done = arguments[arguments.length - 1];
             const st = document.createElement('style');
             st.id = 'e2e-still';
             // Ambient motions step through data-frame values from timers (no CSS animation):
             // shown at rest too.
             const f = '.yui-char:not([data-frame=\\'\\'])';
             st.textContent = '.yui-char, .yui-char * { animation: none !important; transition: none !important; }'
               + ` ${f} .yui-breath, ${f} .yui-face .eyes, ${f} .yui-whole, ${f} .yui-marks .zzz { transform: none !important; }`
               + ' #bubble, #chat, #menu { visibility: hidden !important; }';
             document.head.appendChild(st);
             requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => done(true), 100)));",
            json!([]),
        )
        .await
        .expect("freeze the character");
    assert_eq!(frozen, true);
    let b64 = s.screenshot().await.expect("WebDriver screenshot");
    s.exec(
        "document.getElementById('e2e-still')?.remove(); return true;",
        json!([]),
    )
    .await
    .expect("unfreeze");
    let png = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .expect("screenshot is base64");
    assert!(png.starts_with(b"\x89PNG"), "the screenshot is a PNG");
    image::load_from_memory(&png)
        .expect("decode the screenshot")
        .to_rgba8()
}

/// How many pixels inside `area` differ (any channel by more than 24) between `a` and `b`.
fn changed_pixels(
    a: &image::RgbaImage,
    b: &image::RgbaImage,
    (x, y, w, h): (u32, u32, u32, u32),
) -> usize {
    assert_eq!(a.dimensions(), b.dimensions(), "same window size");
    let (iw, ih) = a.dimensions();
    let mut n = 0;
    for py in y..(y + h).min(ih) {
        for px in x..(x + w).min(iw) {
            let (p, q) = (a.get_pixel(px, py).0, b.get_pixel(px, py).0);
            if p.iter().zip(q.iter()).any(|(u, v)| u.abs_diff(*v) > 24) {
                n += 1;
            }
        }
    }
    n
}

/// Index of the first log entry matching `kind` (and `value`, when given).
fn find(log: &[Value], kind: &str, value: Option<&str>) -> Option<usize> {
    log.iter().position(|e| {
        e["kind"] == kind
            && match value {
                Some(v) => e["value"] == v,
                None => true,
            }
    })
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_cue_changes_the_rendered_emotion_and_playback_finishes_after_the_bubble() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, mut requests, release) = scripted_backend().await;
    let base_url = srv.base_url.clone();
    fake_backend::seed_backend(dir.path(), &base_url, Transport::Responses);
    let s = launch(dir.path()).await;
    s.wait_for_label("main", Duration::from_secs(30))
        .await
        .expect("main window");
    s.wait_script(
        "return !!document.querySelector('#character [data-emotion]')",
        Duration::from_secs(20),
    )
    .await
    .expect("character drawn");
    let emotion = "return document.querySelector('#character [data-emotion]').dataset.emotion";
    assert_eq!(s.exec(emotion, json!([])).await.unwrap(), "neutral");
    assert_eq!(
        s.exec_async(RECORDER, json!([])).await.unwrap(),
        true,
        "recorder installed"
    );

    // Open the chat (a click on the character), then the "before" pictures: two still shots
    // agree with each other, so any later difference is the character's doing.
    s.click(&s.find("#character").await.unwrap()).await.unwrap();
    s.wait_script(
        "return !document.getElementById('chat').hidden",
        Duration::from_secs(5),
    )
    .await
    .expect("chat opens on click");
    let area = character_box(&s).await;
    assert!(area.2 > 50 && area.3 > 50, "character box {area:?}");
    let before = still_shot(&s).await;
    let again = still_shot(&s).await;
    let noise = changed_pixels(&before, &again, area);
    assert_eq!(
        noise, 0,
        "two still shots of the neutral character differ in {noise} pixels"
    );

    let input = s.find("#chat-input").await.unwrap();
    s.send_keys(&input, "Hi Yui\u{E007}").await.unwrap();

    // Mid-reply: the stream is held after the cue. The face is happy, the bubble shows the first
    // sentence only, and playback has not finished.
    s.wait_script(
        &format!(
            "return document.querySelector('#character [data-emotion]').dataset.emotion === 'happy'
               && document.getElementById('bubble').textContent === {}",
            json!(FIRST)
        ),
        Duration::from_secs(20),
    )
    .await
    .expect("the cue reached the character mid-reply");
    if let Some(path) = std::env::var_os("YUI_E2E_CUE_SCREENSHOT") {
        // The whole screen, mid-wave, as a user sees it (not frozen).
        tokio::time::sleep(Duration::from_millis(500)).await;
        let st = std::process::Command::new("import")
            .args(["-window", "root"])
            .arg(&path)
            .status()
            .expect("run import (imagemagick)");
        assert!(st.success(), "screenshot failed");
    }
    let pending = s
        .exec(
            "return document.getElementById('stage').dataset.playbackFinished ?? null",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(pending, Value::Null, "no playback finished mid-reply");

    release.notify_one();
    let full = format!("{FIRST}{SECOND}");
    s.wait_script(
        &format!(
            "return document.getElementById('bubble').textContent === {}",
            json!(full)
        ),
        Duration::from_secs(20),
    )
    .await
    .expect("the rest of the reply streams into the bubble");
    s.wait_script(
        "const st = document.getElementById('stage').dataset;
         return !!st.turnId && st.playbackFinished === st.turnId",
        Duration::from_secs(20),
    )
    .await
    .expect("playback finished for the turn");
    let turn_id = s
        .exec(
            "return document.getElementById('stage').dataset.turnId",
            json!([]),
        )
        .await
        .unwrap();
    let turn_id = turn_id.as_str().expect("turn id").to_string();

    // Order: the cue played after the first sentence and before the second; playback finished
    // (event and DOM) only after the bubble showed the whole reply.
    let log = s.exec("return window.__e2eLog", json!([])).await.unwrap();
    let log = log.as_array().expect("log").clone();
    let dump = serde_json::to_string_pretty(&log).unwrap();
    let happy = find(&log, "data-emotion", Some("happy")).expect("emotion change logged");
    assert_eq!(
        log[happy]["bubble"], FIRST,
        "cue in order with speech: {dump}"
    );
    let wave = find(&log, "data-motion", Some("wave")).expect("wave motion logged");
    assert_eq!(
        log[wave]["bubble"], FIRST,
        "motion in order with speech: {dump}"
    );
    let first = find(&log, "bubble", Some(FIRST)).expect("first sentence logged");
    let whole = find(&log, "bubble", Some(&full)).expect("whole reply logged");
    assert!(first < happy && happy < whole, "{dump}");
    let event = find(&log, "event", Some(&turn_id)).expect("playback-finished event heard");
    let attr = find(&log, "data-playback-finished", Some(&turn_id)).expect("attribute set");
    for i in [event, attr] {
        assert!(
            whole < i,
            "playback finished before the bubble was whole: {dump}"
        );
        assert_eq!(log[i]["bubble"], full.as_str(), "{dump}");
        assert!(log[i]["t"].as_f64() >= log[whole]["t"].as_f64(), "{dump}");
    }
    assert_eq!(
        log.iter()
            .filter(|e| e["kind"] == "event" && e["value"] == turn_id.as_str())
            .count(),
        1,
        "one playback-finished per turn: {dump}"
    );

    // Pixels: after the turn the character keeps the happy face; inside its box it differs from
    // the neutral one (same box, same layout).
    assert_eq!(s.exec(emotion, json!([])).await.unwrap(), "happy");
    assert_eq!(character_box(&s).await, area, "the layout did not move");
    let after = still_shot(&s).await;
    let changed = changed_pixels(&before, &after, area);
    eprintln!(
        "expression e2e: {changed} of {} pixels changed in the character box {area:?}",
        area.2 * area.3
    );
    assert!(
        changed >= 150,
        "the happy face must differ visibly from the neutral one: {changed} pixels changed"
    );

    // One request (a cue with speech needs no round trip), which declared generate_express.
    let body: Value = requests.recv().await.expect("one request").body;
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    let express = tools
        .iter()
        .find(|t| t["name"] == "generate_express")
        .unwrap_or_else(|| panic!("generate_express declared: {}", body["tools"]));
    let emotions = express["parameters"]["properties"]["emotion_id"]["enum"].to_string();
    assert!(emotions.contains("\"happy\""), "{emotions}");
    assert!(
        requests.try_recv().is_err(),
        "no round trip for a cue with speech"
    );
    s.delete().await.ok();
}
