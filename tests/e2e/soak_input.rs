//! How a soak turn's words go in: by default as a user types them, a click into the window's
//! chat and key presses on the X display (XTest, `xinput.rs`); WebDriver's send-keys and a
//! scripted submit are kept for comparison (docs/PERFORMANCE.md, "Typed as a user types").

use super::super::{webdriver::Session, xinput};
use serde_json::json;
use std::time::{Duration, Instant};

/// How a soak turn's message goes in (`YUI_SOAK_INPUT`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Input {
    /// `x11` (the default): a click and key presses on the X display (XTest), as a user types.
    X11,
    /// `webdriver`: WebDriver's element click and send-keys. WebKit's automation grows the web
    /// process by itself (docs/PERFORMANCE.md, "Typed as a user types"): for comparison only.
    WebDriver,
    /// `page`: the page's form submitted by a script, no key events at all.
    Page,
}

impl Input {
    pub fn from_env() -> Self {
        match std::env::var("YUI_SOAK_INPUT").as_deref() {
            Ok("webdriver") => Self::WebDriver,
            Ok("page") => Self::Page,
            _ => Self::X11,
        }
    }
}

/// Where a user clicks to type in the window: the chat input when the chat is open, else the
/// character's body (a click there opens the chat).
const CLICK_TARGET: &str = "const chat = document.getElementById('chat');
  const el = chat.hidden ? document.getElementById('character') : document.getElementById('chat-input');
  const r = el.getBoundingClientRect();
  return {x: Math.round(r.x + r.width / 2), y: Math.round(r.y + r.height * (chat.hidden ? 0.8 : 0.5))};";

/// Turns whose typed words had to be typed again (printed with the report).
pub static RETYPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The chat is open and its input has the keyboard.
const CHAT_READY: &str = "const chat = document.getElementById('chat');
  return !chat.hidden && document.hasFocus()
    && document.activeElement === document.getElementById('chat-input');";

/// Click into the chat input of the window titled `title` on the X display, as a user does (the
/// first click of a window opens its chat), until the window has the keyboard and the input the
/// focus. Every turn clicks: the keyboard is wherever the last turn left it, and a page may still
/// think it has the focus after another window took it.
pub async fn click_into_chat(
    s: &Session,
    hands: &xinput::Hands,
    title: &str,
) -> Result<(), String> {
    let window = hands.window(title)?;
    for _ in 0..3 {
        let at = s.exec(CLICK_TARGET, json!([])).await?;
        let (ox, oy) = hands.origin(window)?;
        let coord = |k: &str| at[k].as_i64().unwrap_or(0) as i16;
        hands.click(ox + coord("x"), oy + coord("y"))?;
        let t = Instant::now();
        while !hands.has_focus(window)? && t.elapsed() < Duration::from_secs(3) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // The chat just opened: the next round clicks into its input.
        if hands.has_focus(window)?
            && s.wait_script(CHAT_READY, Duration::from_secs(3))
                .await
                .is_ok()
            && s.exec(CLICK_TARGET, json!([])).await? == at
        {
            return Ok(());
        }
    }
    Err(format!("{title}: the chat input did not get the keyboard"))
}

/// Type `text` and Return into the chat of the window titled `title` as a user does
/// ([`click_into_chat`], then keys).
pub async fn type_as_user(
    s: &Session,
    hands: &xinput::Hands,
    title: &str,
    text: &str,
) -> Result<(), String> {
    for _ in 0..3 {
        click_into_chat(s, hands, title).await?;
        // Return only once the words are in the input: keys sent right after the focus moved
        // were sometimes lost (about one turn in 20, with the page and X both saying the window
        // had the focus), and the user would see that and type again too.
        hands.type_text(text)?;
        let typed = format!(
            "return document.getElementById('chat-input').value === {};",
            serde_json::to_string(text).unwrap_or_default()
        );
        if s.wait_script(&typed, Duration::from_secs(2)).await.is_ok() {
            return hands.type_text("\n");
        }
        RETYPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        s.exec(
            "document.getElementById('chat-input').value = ''; return true;",
            json!([]),
        )
        .await?;
    }
    Err(format!("{title}: the typed words did not reach the input"))
}
