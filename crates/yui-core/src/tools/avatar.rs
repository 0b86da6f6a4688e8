//! `body_action` and `look`: the avatar tools of the main window, over the process's
//! [`Avatar`] (none installed: `body_action` answers `unsupported`, `look` answers
//! `error: unsupported`, except `perch_targets`, which says so in its JSON).
//!
//! Arguments are checked before anything moves: `error: missing field <name>` /
//! `error: invalid field <name>`. `look at: screen` reads the `yui.screen` switch at call time.

use super::*;
use crate::avatar::body::{perch_word, Action};
use crate::avatar::{self, geometry as geo, Avatar, HostError};
use crate::settings;
use input::Field;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// `look`'s answer when no avatar executor is available.
pub const UNSUPPORTED: &str = "error: unsupported";
/// `body_action`'s answer when no avatar executor is available (its refusals are bare words).
pub const BODY_UNSUPPORTED: &str = "unsupported";
/// `look at: screen` while the screen switch is off.
pub const SCREEN_OFF: &str = "error: screen capture is off";
/// How long the character's own windows stay hidden before the capture, so the windows under
/// them have repainted.
pub const HIDE_SETTLE: Duration = Duration::from_millis(120);

/// `look at: screen` is gated by the screen switch (read when a call runs).
pub const SCREEN_SWITCH: Switch = Switch {
    id: "screen",
    key: settings::SCREEN,
};

fn missing(name: &str) -> ToolOutput {
    ToolOutput::text(format!("error: missing field {name}"))
}
fn invalid(name: &str) -> ToolOutput {
    ToolOutput::text(format!("error: invalid field {name}"))
}

/// `body_action`'s and `look`'s arguments (one struct: `look` reads `at` and `monitor`).
#[derive(Debug, Default, Deserialize)]
#[doc(hidden)]
pub struct AvatarInput {
    #[serde(default)]
    pub action: Field<String>,
    #[serde(default)]
    pub app: Field<String>,
    #[serde(default)]
    pub side: Field<String>,
    #[serde(default)]
    pub spot: Field<String>,
    /// A display number: a positive integer (a float with no fraction counts).
    #[serde(default)]
    pub monitor: Field<f64>,
    #[serde(default)]
    pub at: Field<String>,
}

/// A string field: `Ok(None)` when absent, `Err` answer when present but not a non-empty string.
fn string_field(field: Field<String>, name: &str) -> Result<Option<String>, ToolOutput> {
    match field.nonblank() {
        Field::Absent => Ok(None),
        Field::Given(s) => Ok(Some(s)),
        Field::Invalid => Err(invalid(name)),
    }
}

/// A display number: a positive integer (a float with no fraction counts).
fn monitor_field(field: Field<f64>) -> Result<Option<u32>, ToolOutput> {
    match field {
        Field::Absent => Ok(None),
        field => (field.given().and_then(input::whole))
            .filter(|n| *n >= 1)
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| invalid("monitor")),
    }
}

/// Parse `body_action`'s arguments into an action.
pub fn parse_action(args: &Value) -> Result<Action, ToolOutput> {
    let input: AvatarInput = input::parse(args);
    let action = string_field(input.action, "action")?.ok_or_else(|| missing("action"))?;
    let need =
        |field: Field<String>, name: &str| string_field(field, name)?.ok_or_else(|| missing(name));
    Ok(match action.as_str() {
        "sit_on_window" => Action::SitOnWindow {
            app: need(input.app, "app")?.trim().to_string(),
        },
        "peek" => Action::Peek {
            side: geo::Side::parse(&need(input.side, "side")?).ok_or_else(|| invalid("side"))?,
        },
        "move_to" => Action::MoveTo {
            spot: need(input.spot, "spot")?,
            monitor: monitor_field(input.monitor)?,
        },
        "stand" => Action::Stand,
        "go_to_bed" => Action::GoToBed,
        _ => return Err(invalid("action")),
    })
}

/// `body_action` (main window only).
pub struct BodyActionTool {
    avatar: Option<Arc<Avatar>>,
}

impl BodyActionTool {
    pub fn shared(avatar: Option<Arc<Avatar>>) -> Arc<dyn ClientTool> {
        Arc::new(Self { avatar })
    }
}

#[async_trait]
impl ClientTool for BodyActionTool {
    fn name(&self) -> &str {
        BODY_ACTION
    }
    fn description(&self) -> String {
        "Move your body on the user's desktop: sit on a window's top edge \
            (sit_on_window, with app), peek around the screen edge (peek, with side), move to a \
            named spot (move_to, with spot and an optional monitor), stand up (stand), or lie \
            down on the bed (go_to_bed). Answers ok, or one word: not_found, blocked, \
            interrupted, busy, unsupported, timeout."
            .to_string()
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["sit_on_window", "peek", "move_to", "stand", "go_to_bed"]},
                "app": {"type": "string", "description": "sit_on_window: the app whose window to sit on"},
                "side": {"type": "string", "enum": ["left", "right"], "description": "peek: which screen edge"},
                "spot": {"type": "string", "description": "move_to: the named spot"},
                "monitor": {"type": "integer", "description": "move_to: display number"}
            },
            "required": ["action"],
            "additionalProperties": false
        })
    }
    /// Refusals are bare words, not `error:` strings.
    fn failed(&self, result: &ToolOutput) -> bool {
        result.as_text() != "ok"
    }
    fn wait(&self) -> Duration {
        Duration::from_secs(10)
    }
    async fn call(
        &self,
        args: Value,
        _ctx: &ToolContext,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let action = match parse_action(&args) {
            Ok(a) => a,
            Err(answer) => return Ok(answer),
        };
        let Some(avatar) = self.avatar.clone().filter(|a| a.can_move()) else {
            return Ok(ToolOutput::text(BODY_UNSUPPORTED));
        };
        // The move itself runs on: a stopped turn does not leave the body half-way.
        let run = tokio::spawn(async move { avatar.act(action).await });
        tokio::select! {
            r = run => Ok(ToolOutput::text(r.map(|o| o.answer()).unwrap_or("interrupted"))),
            _ = cancel.cancelled() => Ok(ToolOutput::text("interrupted")),
        }
    }
}

/// `look` (main window only). Its `screen` target is gated by the screen switch.
pub struct LookTool {
    avatar: Option<Arc<Avatar>>,
}

impl LookTool {
    pub fn shared(avatar: Option<Arc<Avatar>>) -> Arc<dyn ClientTool> {
        Arc::new(Self { avatar })
    }
}

#[async_trait]
impl ClientTool for LookTool {
    fn name(&self) -> &str {
        LOOK
    }
    fn description(&self) -> String {
        "Read your body state (body), the windows you can perch on \
            (perch_targets), or a screenshot of a display (screen, with an optional monitor; \
            needs screen capture on)."
            .to_string()
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "at": {"type": "string", "enum": ["body", "perch_targets", "screen"]},
                "monitor": {"type": "integer", "description": "screen: display number; omit for the display you are on"}
            },
            "required": ["at"],
            "additionalProperties": false
        })
    }
    fn switch(&self) -> Option<Switch> {
        Some(SCREEN_SWITCH)
    }
    async fn call(
        &self,
        args: Value,
        ctx: &ToolContext,
        _cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let input: AvatarInput = input::parse(&args);
        let at = match string_field(input.at, "at") {
            Ok(Some(at)) => at,
            Ok(None) => return Ok(missing("at")),
            Err(answer) => return Ok(answer),
        };
        match at.as_str() {
            "body" => Ok(self.body(ctx)),
            "perch_targets" => Ok(self.perch_targets().await),
            "screen" => self.screen(input.monitor, ctx).await,
            _ => Ok(invalid("at")),
        }
    }
}

impl LookTool {
    /// The live state where the body is here; else the last state the app wrote.
    fn body(&self, ctx: &ToolContext) -> ToolOutput {
        let Some(avatar) = &self.avatar else {
            return ToolOutput::text(UNSUPPORTED);
        };
        let live = avatar.body_window().is_some();
        let mut v = if live {
            serde_json::to_value(avatar.state()).unwrap_or(Value::Null)
        } else {
            match settings::get(&ctx.store, avatar::BODY_KEY) {
                Ok(v) if v.is_object() => v,
                _ => json!({"state": "unknown"}),
            }
        };
        if let Some(o) = v.as_object_mut() {
            o.insert("live".into(), Value::Bool(live));
        }
        ToolOutput::text(v.to_string())
    }

    async fn perch_targets(&self) -> ToolOutput {
        let unsupported = |reason: &str| {
            ToolOutput::text(
                json!({"supported": false, "reason": reason, "windows": []}).to_string(),
            )
        };
        let Some(avatar) = &self.avatar else {
            return unsupported("no desktop host: windows cannot be seen on this platform");
        };
        if avatar.desktop_host().is_none() {
            return unsupported("windows cannot be seen here (Wayland, or no X11 display)");
        }
        let desk = match avatar.snapshot().await {
            Ok(d) => d,
            Err(e) => return unsupported(&format!("the desktop cannot be read: {e}")),
        };
        if let Some(why) = avatar.desktop_host().and_then(|h| h.windows_reason()) {
            // No window is seen (the overlay layer): say why, and where the body can go.
            let monitors: Vec<Value> = desk
                .monitors
                .iter()
                .map(|m| json!({"monitor": m.number, "name": m.name}))
                .collect();
            return ToolOutput::text(
                json!({"supported": false, "reason": why, "windows": [], "monitors": monitors})
                    .to_string(),
            );
        }
        let size = avatar
            .body_window()
            .map(|b| b.size())
            .unwrap_or(DEFAULT_BODY);
        let windows: Vec<Value> = desk
            .windows
            .iter()
            .enumerate()
            .rev() // topmost first
            .filter(|(_, w)| !w.own)
            .map(|(i, w)| {
                let status = geo::perch_status(&desk, i, size);
                json!({
                    "app": if w.class.is_empty() { &w.instance } else { &w.class },
                    "instance": w.instance,
                    "title": w.title,
                    "monitor": geo::monitor_of(&desk.monitors, w.frame).map(|m| m.number),
                    "visible": status.is_visible(),
                    "can_sit": status.is_free(),
                    "status": perch_word(status),
                })
            })
            .collect();
        ToolOutput::text(json!({"supported": true, "windows": windows}).to_string())
    }

    async fn screen(
        &self,
        monitor: Field<f64>,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        if !settings::switch_on(&ctx.store, settings::SCREEN).unwrap_or(false) {
            return Ok(ToolOutput::text(SCREEN_OFF));
        }
        let monitor = match monitor_field(monitor) {
            Ok(m) => m,
            Err(answer) => return Ok(answer),
        };
        let Some(avatar) = self.avatar.clone().filter(|a| a.desktop_host().is_some()) else {
            return Ok(ToolOutput::text(UNSUPPORTED));
        };
        let desk = avatar.snapshot().await.map_err(|source| ToolError::Host {
            what: "screen capture",
            source,
        })?;
        let number = match monitor {
            Some(n) => n,
            None => avatar.current_monitor(&desk).unwrap_or(1),
        };
        let Some(m) = desk.monitors.iter().find(|m| m.number == number).cloned() else {
            return Ok(invalid("monitor"));
        };
        let url = capture(&avatar, m.rect).await?;
        Ok(ToolOutput::Images {
            text: format!("screenshot of display {number}"),
            images: vec![url],
        })
    }
}

/// The body size assumed without a body window (the main window's default, physical px).
const DEFAULT_BODY: (u32, u32) = (220, 300);

/// Capture `area` with YUI's own windows hidden and the character showing that it looks, then
/// encode it (all in memory).
async fn capture(avatar: &Arc<Avatar>, area: geo::Rect) -> Result<String, ToolError> {
    const WHAT: &str = "screen capture";
    let failed = |source| ToolError::Host { what: WHAT, source };
    let host = avatar
        .desktop_host()
        .cloned()
        .ok_or_else(|| failed(HostError::unavailable("no desktop host")))?;
    let body = avatar.body_window().cloned();
    if let Some(b) = &body {
        b.show_looking(true);
        b.hide_own_windows(true);
        tokio::time::sleep(HIDE_SETTLE).await;
    }
    let shot = tokio::task::spawn_blocking(move || host.capture(area)).await;
    if let Some(b) = &body {
        b.hide_own_windows(false);
        b.show_looking(false);
    }
    let cap = shot
        .map_err(|e| ToolError::stopped(WHAT, e))?
        .map_err(|e| match e {
            // The contract's word, and why (no screenshot portal on a Wayland desktop).
            HostError::Unsupported(why) => ToolError::Failed(format!("unsupported: {why}")),
            e => failed(e),
        })?;
    tokio::task::spawn_blocking(move || avatar::capture::to_data_url(cap))
        .await
        .map_err(|e| ToolError::stopped(WHAT, e))?
        .map_err(|e| ToolError::Failed(format!("{WHAT} failed: {e}")))
}
