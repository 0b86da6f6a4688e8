//! Characters look like themselves, end to end: a PNG card imported with its expression pack
//! (SillyTavern labels) shows the card's picture on the desktop, and a cue changes the image
//! (`happy` ← `joy.png`), in the DOM and in pixels. The character's menu (Look…) opens settings
//! at that character's look picker, with each emotion previewed; a built-in palette can be
//! chosen back. `YUI_E2E_LOOKS_SHOTS=dir` saves the screenshots (docs/img/card-look.png and
//! docs/img/look-picker.png are two).

use super::webdriver::Session;
use super::{fake_backend, launch_showing, read_store, seed};
use base64::Engine as _;
use serde_json::json;
use std::path::Path;
use std::time::Duration;
use yui_core::backend::Transport;
use yui_core::looks::{self, CardImport};
use yui_core::presets;
use yui_testkit::sse::{self, Reply};

const T: Duration = Duration::from_secs(20);
const CUE_ARGS: &str = r#"{"emotion_id":"happy"}"#;

/// A small drawn figure, `w`×`h`, transparent around it: pink hair, a face with amber eyes, a
/// black dress; `smile` gives it an open smile and yellow cheeks (the "joy" image).
pub(super) fn figure(smile: bool) -> Vec<u8> {
    let (w, h) = (300u32, 450u32);
    let img = image::RgbaImage::from_fn(w, h, |x, y| {
        let d = |cx: f32, cy: f32| ((x as f32 - cx).powi(2) + (y as f32 - cy).powi(2)).sqrt();
        let px = |r: u8, g: u8, b: u8| image::Rgba([r, g, b, 255]);
        if d(120.0, 150.0) < 11.0 || d(180.0, 150.0) < 11.0 {
            return px(230, 150, 20); // amber eyes
        }
        let mouth = d(150.0, 175.0);
        if smile && (30.0..37.0).contains(&mouth) && y > 185 {
            return px(150, 30, 60);
        }
        if !smile && (145..155).contains(&x) && (200..204).contains(&y) {
            return px(150, 30, 60);
        }
        if smile && (d(105.0, 185.0) < 14.0 || d(195.0, 185.0) < 14.0) {
            return px(255, 210, 40);
        }
        if d(150.0, 165.0) < 78.0 {
            return px(255, 224, 200); // face
        }
        if d(150.0, 140.0) < 112.0 && y < 260 {
            return px(240, 120, 175); // hair
        }
        let half = 40.0 + (y as f32 - 250.0) * 0.45;
        if y >= 250 && (x as f32 - 150.0).abs() < half {
            return px(20, 20, 24); // dress
        }
        image::Rgba([0, 0, 0, 0])
    });
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    png
}

/// CRC-32 as PNG uses it.
fn crc(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// A Character Card V2 PNG: the picture with the card in a `chara` text chunk.
pub(super) fn png_card(picture: &[u8], name: &str) -> Vec<u8> {
    let card = json!({"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": name, "description": "{{char}} is a guardian of a forest glade.",
        "personality": "kind, protective", "first_mes": "Welcome, traveller."}});
    let data = format!(
        "chara\0{}",
        base64::engine::general_purpose::STANDARD.encode(card.to_string())
    );
    let mut chunk = (data.len() as u32).to_be_bytes().to_vec();
    let mut body = b"tEXt".to_vec();
    body.extend_from_slice(data.as_bytes());
    chunk.extend_from_slice(&body);
    chunk.extend_from_slice(&crc(&body).to_be_bytes());
    let iend = picture.len() - 12;
    let mut out = picture[..iend].to_vec();
    out.extend_from_slice(&chunk);
    out.extend_from_slice(&picture[iend..]);
    out
}

/// A decoded WebDriver screenshot of the current window.
async fn shot(s: &Session) -> image::RgbaImage {
    let b64 = s.screenshot().await.expect("WebDriver screenshot");
    let png = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .unwrap();
    image::load_from_memory(&png).unwrap().to_rgba8()
}

fn save_shot(name: &str, img: &image::RgbaImage) {
    if let Some(dir) = std::env::var_os("YUI_E2E_LOOKS_SHOTS") {
        let path = Path::new(&dir).join(name);
        img.save(&path).expect("save the screenshot");
        eprintln!("looks: saved {}", path.display());
    }
}

const SPRITE: &str = "const c = document.querySelector('#character .yui-char');
   const img = c.querySelector('img.yui-sprite');
   return [c.dataset.sprite, img.hidden ? '' : img.getAttribute('src') || ''];";

#[tokio::test]
#[ignore = "needs Xvfb + tauri-driver: run tests/e2e/run.sh"]
async fn an_imported_card_shows_its_picture_and_a_cue_changes_the_image() {
    let dir = tempfile::tempdir().unwrap();
    let cards = tempfile::tempdir().unwrap();
    let pack = cards.path().join("Seraphina");
    std::fs::create_dir(&pack).unwrap();
    std::fs::write(pack.join("joy.png"), figure(true)).unwrap();
    std::fs::write(pack.join("neutral.png"), figure(false)).unwrap();
    let (srv, _requests) = fake_backend::serve(|_| {
        let call = json!({"type":"function_call","id":"fc_1","call_id":"call_1","name":"generate_express","arguments":CUE_ARGS});
        Reply::Sse(sse::events(&[
            json!({"type":"response.created","response":{"id":"resp_look","status":"in_progress","output":[]}}),
            json!({"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Welcome back!"}),
            json!({"type":"response.output_item.added","output_index":1,"item":call}),
            json!({"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":1,"arguments":CUE_ARGS}),
            json!({"type":"response.output_item.done","output_index":1,"item":call}),
            json!({"type":"response.completed","response":{"id":"resp_look","status":"completed"}}),
        ]))
    })
    .await;
    let base_url = srv.base_url.clone();
    let data_dir = dir.path().to_path_buf();
    seed(dir.path(), |st| {
        fake_backend::point_at(st, &base_url, Transport::Responses);
        let bytes = png_card(&figure(false), "Seraphina");
        let imported = looks::import_card(
            st,
            &data_dir,
            &CardImport {
                bytes: &bytes,
                open: true,
                card_dir: None,
                sprites: Some(&pack),
            },
        )
        .expect("import the card");
        assert!(imported.picture, "{:?}", imported.notes);
        presets::set_main(st, "seraphina").unwrap();
    });

    let s = launch_showing(dir.path(), &["main"]).await;
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return document.title === 'YUI — Seraphina'
           && document.querySelector('#character .yui-char')?.dataset.sprite === 'emotion:neutral'",
        T,
    )
    .await
    .expect("the main window shows Seraphina's own image");
    let before = s.exec(SPRITE, json!([])).await.unwrap();
    let neutral_src = before[1].as_str().unwrap().to_string();
    assert!(
        neutral_src.starts_with("data:image/png;base64,"),
        "{before}"
    );
    assert!(
        neutral_src.len() < 200_000,
        "scaled at import: {} bytes of data URL",
        neutral_src.len()
    );
    let quiet = shot(&s).await;

    // A cue: happy ← joy.png.
    super::say_in_chat(&s, "#character .yui-char", "Hello Seraphina").await;
    s.wait_script(
        "return document.querySelector('#character .yui-char').dataset.sprite === 'emotion:happy'",
        T,
    )
    .await
    .expect("the cue changed the image");
    let after = s.exec(SPRITE, json!([])).await.unwrap();
    let happy_src = after[1].as_str().unwrap();
    assert!(happy_src.starts_with("data:image/png;base64,"));
    assert_ne!(happy_src, neutral_src, "another image");
    tokio::time::sleep(Duration::from_millis(700)).await; // the face's pop settles
    let cued = shot(&s).await;
    let r = s
        .exec(
            "const r = document.querySelector('#character img.yui-sprite').getBoundingClientRect();
             const d = window.devicePixelRatio || 1;
             return [r.left * d, r.top * d, r.width * d, r.height * d].map(Math.round);",
            json!([]),
        )
        .await
        .unwrap();
    let n = |i: usize| r[i].as_u64().unwrap_or(0) as u32;
    let (x, y, w, h) = (n(0), n(1), n(2), n(3));
    assert!(w > 50 && h > 50, "image box {r}");
    let mut differ = 0;
    for py in y..(y + h).min(cued.height()) {
        for px in x..(x + w).min(cued.width()) {
            let (p, q) = (quiet.get_pixel(px, py).0, cued.get_pixel(px, py).0);
            if p.iter().zip(q.iter()).any(|(u, v)| u.abs_diff(*v) > 24) {
                differ += 1;
            }
        }
    }
    assert!(
        differ > 200,
        "the picture on screen changed in {differ} pixels"
    );
    // Before and after, side by side.
    let mut both = image::RgbaImage::new(quiet.width() * 2, quiet.height());
    image::imageops::overlay(&mut both, &quiet, 0, 0);
    image::imageops::overlay(&mut both, &cued, quiet.width() as i64, 0);
    save_shot("card-look.png", &both);

    // The character's menu: Look… opens settings at this character's look picker.
    s.exec(
        "document.getElementById('menu-look').click(); return true;",
        json!([]),
    )
    .await
    .unwrap();
    s.wait_for_label("settings", T)
        .await
        .expect("settings opens");
    s.wait_script(
        "return document.body.dataset.section === 'character'
           && document.getElementById('backend').hidden
           && document.getElementById('look-picker')?.dataset.presetId === 'seraphina'
           && !!document.querySelector('.look-option[data-look=\"pack\"][aria-checked=\"true\"]')
           && document.querySelectorAll('.look-preview .look-emotion .yui-char').length >= 8",
        T,
    )
    .await
    .expect("the look picker shows Seraphina's pack, with each emotion");
    let offered = s
        .exec(
            "return [...document.querySelectorAll('.look-option')].map(b => b.dataset.look)",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(
        offered,
        json!([
            "palette:rose",
            "palette:sky",
            "palette:mint",
            "palette:amber",
            "palette:lilac",
            "palette:slate",
            "picture",
            "pack"
        ])
    );
    // Each emotion as it will look: happy from joy.png, the rest the card's picture.
    let preview = s
        .exec(
            "return Object.fromEntries([...document.querySelectorAll('.look-emotion')]
               .map(f => [f.dataset.emotion, f.querySelector('.yui-char').dataset.sprite]))",
            json!([]),
        )
        .await
        .unwrap();
    assert_eq!(preview["happy"], "emotion:happy", "{preview}");
    assert_eq!(preview["neutral"], "emotion:neutral", "{preview}");
    assert_eq!(preview["angry"], "picture", "{preview}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    save_shot("look-picker.png", &shot(&s).await);

    // Back to a built-in palette: the main window draws the built-in character.
    s.click(
        &s.find(".look-option[data-look=\"palette:sky\"]")
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    s.wait_script(
        "return document.querySelector('.look-preview')?.dataset.look === 'palette:sky'
           && document.querySelectorAll('.look-preview .yui-char').length >= 8",
        T,
    )
    .await
    .expect("the preview shows the palette");
    s.click(&s.find("#look-use").await.unwrap()).await.unwrap();
    s.wait_script(
        "return /now looks like this|error/.test(document.getElementById('status').textContent)
           || document.getElementById('status').classList.contains('error')",
        T,
    )
    .await
    .expect("the save answered");
    let status = s
        .exec(
            "return document.getElementById('status').textContent",
            json!([]),
        )
        .await
        .unwrap();
    let store = read_store(dir.path());
    let mut stored = json!(null);
    for _ in 0..50 {
        stored = presets::get(&store, "seraphina").unwrap().avatar;
        if stored["kind"] == "builtin" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        stored,
        json!({"kind": "builtin", "palette": "sky"}),
        "settings said: {status}"
    );
    s.switch_to_label("main").await.unwrap();
    s.wait_script(
        "return document.querySelector('#character .yui-char').dataset.sprite === ''",
        T,
    )
    .await
    .expect("the main window draws the built-in character again");

    // Settings already open on another section: Look… takes it to the character's look.
    s.switch_to_label("settings").await.unwrap();
    s.exec("location.hash = '#backend'; return true;", json!([]))
        .await
        .unwrap();
    s.wait_script("return document.body.dataset.section === 'backend'", T)
        .await
        .expect("backend shows");
    s.switch_to_label("main").await.unwrap();
    s.exec(
        "document.getElementById('menu-look').click(); return true;",
        json!([]),
    )
    .await
    .unwrap();
    s.switch_to_label("settings").await.unwrap();
    s.wait_script(
        "return document.body.dataset.section === 'character'
           && !document.getElementById('look-picker').hidden",
        T,
    )
    .await
    .expect("the open settings window went to the look");
    s.delete().await.ok();
}
