//! VRM characters, end to end (docs/vrm.md): the main character wears a generated VRM 1.0 model
//! (yui-testkit's humanoid with every expression) and appears drawn by three.js on Mesa's
//! software GL under Xvfb; a cue changes its face (pixels differ); its voice moves its mouth
//! (pixels differ, frames run while it speaks); the drawn pet never loads the 3D renderer;
//! minimized it draws no frame; resting it draws only short bursts; asleep it draws nothing
//! (frames counted in the page). A model three-vrm cannot draw falls back to the previous look
//! with one sentence, and the log says why. `YUI_E2E_VRM_SHOTS=dir` saves the screenshots
//! (docs/img/vrm-*.png).

use super::webdriver::Session;
use super::{fake_backend, launch_showing, seed};
use base64::Engine as _;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{AtomEnum, ClientMessageEvent, ConnectionExt as _, EventMask};
use yui_core::backend::Transport;
use yui_core::{presets, settings, vrm};
use yui_testkit::speech::{patterned_tone, SpeechReply, SpeechServer};
use yui_testkit::vrm::{Fixture, Version};

const T: Duration = Duration::from_secs(40);
const CUE_ARGS: &str = r#"{"emotion_id":"happy"}"#;
const PATTERN: [f32; 16] = [
    0.8, 0.2, 0.9, 0.9, 0.05, 0.7, 0.8, 0.05, 0.9, 0.6, 0.05, 0.8, 0.9, 0.3, 0.7, 0.05,
];
pub(super) const VRM: &str = "#character .yui-vrm";

/// The main window, once its VRM character has drawn its first frame.
pub(super) async fn vrm_appears(s: &Session, what: &str) {
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        &format!("return Number(document.querySelector('{VRM}')?.dataset.frames) > 0"),
        T,
    )
    .await
    .expect(what);
}

async fn shot(s: &Session) -> image::RgbaImage {
    let b64 = s.screenshot().await.expect("WebDriver screenshot");
    let png = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .unwrap();
    image::load_from_memory(&png).unwrap().to_rgba8()
}

fn save(name: &str, img: &image::RgbaImage) {
    if let Some(dir) = std::env::var_os("YUI_E2E_VRM_SHOTS") {
        let path = Path::new(&dir).join(name);
        img.save(&path).expect("save the screenshot");
        eprintln!("vrm: saved {}", path.display());
    }
}

/// Frames the VRM character has drawn so far (-1: no VRM character in this window).
async fn frames(s: &Session) -> i64 {
    let v = s
        .exec(
            &format!("return Number(document.querySelector('{VRM}')?.dataset.frames ?? -1)"),
            json!([]),
        )
        .await
        .unwrap();
    v.as_i64().unwrap_or(-1)
}

/// The canvas's box in screenshot pixels.
async fn canvas_box(s: &Session) -> (u32, u32, u32, u32) {
    let r = s
        .exec(
            &format!(
                "const r = document.querySelector('{VRM} canvas').getBoundingClientRect();
                 const d = window.devicePixelRatio || 1;
                 return [r.left * d, r.top * d, r.width * d, r.height * d].map(Math.round);"
            ),
            json!([]),
        )
        .await
        .unwrap();
    let n = |i: usize| r[i].as_u64().unwrap_or(0) as u32;
    (n(0), n(1), n(2), n(3))
}

fn differ(a: &image::RgbaImage, b: &image::RgbaImage, (x, y, w, h): (u32, u32, u32, u32)) -> usize {
    let mut n = 0;
    for py in y..(y + h).min(a.height()).min(b.height()) {
        for px in x..(x + w).min(a.width()).min(b.width()) {
            let (p, q) = (a.get_pixel(px, py).0, b.get_pixel(px, py).0);
            if p.iter().zip(q.iter()).any(|(u, v)| u.abs_diff(*v) > 24) {
                n += 1;
            }
        }
    }
    n
}

/// Pixels of the box that are not the desktop's (the model drawn over a black root window).
fn drawn(img: &image::RgbaImage, (x, y, w, h): (u32, u32, u32, u32)) -> usize {
    let mut n = 0;
    for py in y..(y + h).min(img.height()) {
        for px in x..(x + w).min(img.width()) {
            if img.get_pixel(px, py).0[..3].iter().any(|c| *c > 40) {
                n += 1;
            }
        }
    }
    n
}

/// Give the main character (Yui) the generated model; the pet (Kai) stays drawn.
fn seed_model(dir: &Path, bytes: &[u8]) {
    let file = dir.join("fixture.vrm");
    std::fs::write(&file, bytes).unwrap();
    let data_dir = dir.to_path_buf();
    seed(dir, |st| {
        settings::set(st, settings::FIRST_RUN, &json!({"done": true})).unwrap();
        vrm::look::set_for(st, &data_dir, "yui", &file).expect("give Yui the model");
        assert_eq!(presets::get(st, "yui").unwrap().avatar["kind"], "vrm");
    });
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver + the null sink: run tests/e2e/run.sh"]
async fn a_vrm_character_appears_changes_its_face_on_a_cue_and_its_mouth_as_it_speaks() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, _requests) = fake_backend::serve(|_| {
        fake_backend::cue_then_text(
            "resp_vrm",
            CUE_ARGS,
            "Hello there! I am glad to see you again today.",
        )
    })
    .await;
    let speech = SpeechServer::start(
        vec![],
        Some(Box::new(|_| {
            SpeechReply::wav(22_050, &patterned_tone(22_050, &PATTERN))
        })),
    );
    seed_model(dir.path(), &Fixture::full(Version::V1).build());
    let (model_url, speech_url) = (srv.base_url.clone(), speech.base_url.clone());
    seed(dir.path(), |st| {
        fake_backend::point_at(st, &model_url, Transport::Responses);
        settings::set(
            st,
            "yui.voice",
            &json!({"enabled": true, "engine": "openai"}),
        )
        .unwrap();
        settings::set(
            st,
            "yui.voice.tts",
            &json!({"base_url": speech_url, "use_backend_key": false}),
        )
        .unwrap();
    });

    let opened = Instant::now();
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    vrm_appears(&s, "the VRM character appears").await;
    let load = s
        .exec(
            &format!("const d = document.querySelector('{VRM}').dataset; return [d.loadMs, d.firstFrameMs, document.documentElement.dataset.vrmRenderer];"),
            json!([]),
        )
        .await
        .unwrap();
    eprintln!(
        "vrm: on screen {:?} after launch; load {load}",
        opened.elapsed()
    );
    assert_eq!(load[2], "loaded");
    // The drawn pet never loads the 3D renderer.
    s.switch_to_label("pet-kai").await.unwrap();
    s.wait_script(
        "return !!document.querySelector('#character .yui-char svg')",
        T,
    )
    .await
    .expect("Kai drawn");
    let pet = s
        .exec("return [document.documentElement.dataset.vrmRenderer ?? '', performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('vrm')).length]", json!([]))
        .await
        .unwrap();
    assert_eq!(pet, json!(["", 0]), "the drawn pet loaded the VRM renderer");
    s.switch_to_label("main").await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await; // the first bursts settle
    let rect = canvas_box(&s).await;
    let quiet = shot(&s).await;
    assert!(drawn(&quiet, rect) > 1500, "the model is drawn: {rect:?}");
    save("vrm-neutral.png", &quiet);

    // A cue (happy) and the reply spoken.
    super::voice::watch_mouth(&s).await;
    let before_turn = frames(&s).await;
    super::say_in_chat(&s, VRM, "Hello!").await;
    s.wait_script(
        &format!("return document.querySelector('{VRM}').dataset.emotion === 'happy'"),
        T,
    )
    .await
    .expect("the cue reaches the character");
    s.wait_script(
        &format!("return Number(document.querySelector('{VRM}').dataset.mouth) > 0.8"),
        T,
    )
    .await
    .expect("the voice opens the mouth");
    // The voice's loudness changes every 100 ms: a few shots while it speaks, the most open kept.
    let mut speaking = Vec::new();
    for _ in 0..8 {
        speaking.push(shot(&s).await);
    }
    s.wait_script(
        "return !!document.getElementById('stage').dataset.speechEnded",
        T,
    )
    .await
    .expect("the speech ends");
    tokio::time::sleep(Duration::from_millis(600)).await;
    let during = frames(&s).await - before_turn;
    let cued = shot(&s).await;
    save("vrm-happy.png", &cued);
    // The head: the top 45 % of the canvas (the camera frames head and upper body).
    let (x, y, w, h) = rect;
    let head = (x, y, w, h * 45 / 100);
    eprintln!("vrm: canvas {rect:?}, head {head:?}");
    let face = differ(&quiet, &cued, head);
    let (mouth, open) = speaking
        .iter()
        .map(|img| (differ(&cued, img, head), img))
        .max_by_key(|(n, _)| *n)
        .unwrap();
    save("vrm-speaking.png", open);
    eprintln!(
        "vrm: the cue changed {face} pixels, the open mouth {mouth}; {during} frames over the turn"
    );
    assert!(
        face > 60,
        "the cue changed the face on screen: {face} pixels"
    );
    assert!(
        mouth > 20,
        "the voice moved the mouth on screen: {mouth} pixels"
    );
    assert!(during > 20, "frames ran while it spoke: {during}");
    let mouths = s.exec("return window.__mouths", json!([])).await.unwrap();
    let opened_shut = mouths
        .as_array()
        .map_or(0, |m| m.iter().filter(|v| v.as_str() == Some("0")).count());
    assert!(opened_shut >= 2, "the mouth opened and shut: {mouths}");

    // Minimized: no frame, even for a cue's worth of waiting; shown again: it draws.
    let x = X::connect();
    let w = x.window("YUI — Yui");
    x.minimize(w);
    s.wait_script(
        "return document.getElementById('stage').dataset.hidden === 'true'",
        T,
    )
    .await
    .expect("the page hears it is hidden");
    let hidden_at = frames(&s).await;
    tokio::time::sleep(Duration::from_secs(8)).await;
    let hidden_frames = frames(&s).await - hidden_at;
    eprintln!("vrm: {hidden_frames} frames in 8 s minimized");
    assert_eq!(hidden_frames, 0, "frames drawn while minimized");
    x.map(w);
    s.wait_script(
        "return document.getElementById('stage').dataset.hidden === 'false'",
        T,
    )
    .await
    .expect("shown again");
    s.wait_script(
        &format!("return Number(document.querySelector('{VRM}').dataset.frames) > {hidden_at}"),
        T,
    )
    .await
    .expect("it draws again once shown");

    // Look…: the picker shows the VRM look, each emotion drawn with where it comes from, and
    // the model's licence.
    s.exec(
        "document.getElementById('menu-look').click(); return true;",
        json!([]),
    )
    .await
    .unwrap();
    s.wait_for_label("settings", T)
        .await
        .expect("settings opens");
    if let Err(e) = s
        .wait_script(
            "return document.getElementById('look-picker')?.dataset.presetId === 'yui'
           && !!document.querySelector('.look-option[data-look=\"vrm\"][aria-checked=\"true\"]')
           && document.querySelectorAll('.look-vrm-faces .look-emotion img').length === 8",
            T,
        )
        .await
    {
        let seen = s
            .exec(
                "return [document.getElementById('look-picker')?.dataset.presetId,
                   [...document.querySelectorAll('.look-option')].map(b => b.dataset.look + ':' + b.getAttribute('aria-checked')),
                   document.querySelector('.look-preview')?.innerText]",
                json!([]),
            )
            .await;
        panic!("the look picker shows the VRM look's faces: {e}; it shows {seen:?}");
    }
    let shown = s
        .exec(
            "return { faces: [...document.querySelectorAll('.look-vrm-faces figcaption')].map(f => f.textContent),
                      licence: [...document.querySelectorAll('.look-vrm-licence li')].map(l => l.textContent),
                      pictures: [...document.querySelectorAll('.look-vrm-faces img')].map(i => i.src) }",
            json!([]),
        )
        .await
        .unwrap();
    let faces: Vec<&str> = shown["faces"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        faces.contains(&"happythe model's happy expression"),
        "{shown}"
    );
    assert!(
        faces.contains(&"shynearest: relaxed (the model has no shy)"),
        "{shown}"
    );
    let licence = shown["licence"].to_string();
    assert!(licence.contains("Avatar use: everyone"), "{shown}");
    let pictures: Vec<&str> = shown["pictures"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        pictures
            .iter()
            .all(|p| p.starts_with("data:image/png;base64,") && p.len() > 300),
        "every face is a picture"
    );
    // neutral and happy (the vocabulary's first two) are different pictures.
    assert_ne!(pictures[0], pictures[1], "the faces differ");
    save("vrm-look-picker.png", &shot(&s).await);
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn at_rest_a_vrm_character_draws_short_bursts_and_asleep_nothing() {
    let dir = tempfile::tempdir().unwrap();
    seed_model(dir.path(), &Fixture::full(Version::V0).build());
    seed(dir.path(), |st| {
        settings::set(st, settings::SLEEP, &json!({"after_minutes": 2})).unwrap();
    });
    let s = launch_showing(dir.path(), &["main", "pet-kai"]).await;
    vrm_appears(&s, "the VRM 0.x character appears").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Rest: blinks and glances only, each a short burst; counted over an idle minute (the goal:
    // at most 60 frames).
    let start = frames(&s).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let rest = frames(&s).await - start;
    eprintln!("vrm: {rest} frames in an idle minute (VRM 0.x)");
    assert!(rest > 0, "it blinks now and then");
    assert!(
        rest <= 60,
        "at rest it draws only short bursts: {rest} frames in a minute"
    );
    // Asleep (no input on the display for a minute): nothing at all.
    s.wait_script(
        &format!("return document.querySelector('{VRM}').dataset.asleep === 'true'"),
        Duration::from_secs(150),
    )
    .await
    .expect("it falls asleep");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let asleep_at = frames(&s).await;
    tokio::time::sleep(Duration::from_secs(15)).await;
    let asleep = frames(&s).await - asleep_at;
    eprintln!("vrm: {asleep} frames in 15 s asleep");
    assert_eq!(asleep, 0, "frames drawn asleep");
    save("vrm-asleep.png", &shot(&s).await);
}

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn a_model_that_cannot_be_drawn_falls_back_to_the_previous_look_and_the_log_says_why() {
    let dir = tempfile::tempdir().unwrap();
    // A valid VRM to the core whose geometry points at a buffer view that is not there.
    let good = Fixture::full(Version::V1).build();
    let glb = vrm::glb::parse(&good).unwrap();
    let mut json: Value = glb.json.clone();
    json["accessors"][0]["bufferView"] = json!(999);
    let broken = vrm::glb::write(&vrm::glb::Glb { json, bin: glb.bin });
    seed_model(dir.path(), &broken);
    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return document.getElementById('stage').dataset.vrmFallback === 'true'
           && !!document.querySelector('#character .yui-char svg')",
        T,
    )
    .await
    .expect("the previous (drawn) look shows");
    let bubble = s
        .exec(
            "return document.getElementById('bubble').textContent",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(
        bubble,
        "This character's 3D model cannot be shown here, so it wears its previous look."
    );
    let logs = dir.path().join("logs");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text: String = std::fs::read_dir(&logs)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .collect();
        if text.contains("the VRM model cannot be drawn") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the log does not say why: {text}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The X display: find a window by title, minimize it and map it again.
struct X {
    conn: x11rb::rust_connection::RustConnection,
    root: u32,
}

impl X {
    fn connect() -> Self {
        let (conn, screen) = x11rb::connect(None).expect("X display (run through run.sh)");
        let root = conn.setup().roots[screen].root;
        Self { conn, root }
    }

    fn atom(&self, name: &str) -> u32 {
        self.conn
            .intern_atom(false, name.as_bytes())
            .unwrap()
            .reply()
            .unwrap()
            .atom
    }

    fn window(&self, title: &str) -> u32 {
        let (list, name, utf8) = (
            self.atom("_NET_CLIENT_LIST"),
            self.atom("_NET_WM_NAME"),
            self.atom("UTF8_STRING"),
        );
        let clients = self
            .conn
            .get_property(false, self.root, list, AtomEnum::WINDOW, 0, 4096)
            .unwrap()
            .reply()
            .unwrap();
        let ids: Vec<u32> = clients.value32().into_iter().flatten().collect();
        ids.into_iter()
            .find(|&w| {
                self.conn
                    .get_property(false, w, name, utf8, 0, 1024)
                    .ok()
                    .and_then(|c| c.reply().ok())
                    .is_some_and(|p| p.value == title.as_bytes())
            })
            .unwrap_or_else(|| panic!("no window titled {title:?}"))
    }

    fn minimize(&self, w: u32) {
        let event =
            ClientMessageEvent::new(32, w, self.atom("WM_CHANGE_STATE"), [3u32, 0, 0, 0, 0]);
        self.conn
            .send_event(
                false,
                self.root,
                EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
                event,
            )
            .unwrap();
        self.conn.flush().unwrap();
    }

    fn map(&self, w: u32) {
        self.conn.map_window(w).unwrap();
        self.conn.flush().unwrap();
    }
}
