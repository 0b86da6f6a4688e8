//! Declared tools without an executor yet (`body_action`, `look`: the avatar executor). Each
//! carries the tool's real name, description, schema and switch, so the declared set is already
//! right (and byte-identical in every switch state); a call answers `error: unsupported`, the
//! contract's answer for a declared tool whose executor is not available.
//!
//! Giving a tool its executor is one line in [`super::registry::executor`].

use super::*;
use crate::settings;
use serde_json::json;
use std::sync::Arc;

/// The contract's answer of a declared tool whose executor is not available.
pub const UNSUPPORTED: &str = "error: unsupported";

/// A declared tool that answers `error: unsupported`.
pub struct Unsupported {
    pub name: &'static str,
    pub description: String,
    pub parameters: Value,
    pub switch: Option<Switch>,
}

#[async_trait]
impl ClientTool for Unsupported {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> String {
        self.description.clone()
    }
    fn parameters(&self) -> Value {
        self.parameters.clone()
    }
    fn switch(&self) -> Option<Switch> {
        self.switch
    }
    async fn call(
        &self,
        _args: Value,
        _ctx: &ToolContext,
        _cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(UNSUPPORTED))
    }
}

/// `look at: screen` is gated by the screen switch (read when a call runs).
pub const SCREEN_SWITCH: Switch = Switch {
    id: "screen",
    key: settings::SCREEN,
};

/// `body_action` (main window only; the avatar executor).
pub fn body_action() -> Arc<dyn ClientTool> {
    Arc::new(Unsupported {
        name: BODY_ACTION,
        description: "Move your body on the user's desktop: sit on a window's top edge \
            (sit_on_window, with app), peek around the screen edge (peek, with side), move to a \
            named spot (move_to, with spot and an optional monitor), stand up (stand), or lie \
            down on the bed (go_to_bed). Answers ok, or one word: not_found, blocked, \
            interrupted, busy, unsupported, timeout."
            .to_string(),
        parameters: json!({
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
        }),
        switch: None,
    })
}

/// `look` (main window only). Its `screen` target is gated by the screen switch.
pub fn look() -> Arc<dyn ClientTool> {
    Arc::new(Unsupported {
        name: LOOK,
        description: "Read your body state (body), the windows you can perch on \
            (perch_targets), or a screenshot of a display (screen, with an optional monitor; \
            needs screen capture on)."
            .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "at": {"type": "string", "enum": ["body", "perch_targets", "screen"]},
                "monitor": {"type": "integer", "description": "screen: display number; omit for the display you are on"}
            },
            "required": ["at"],
            "additionalProperties": false
        }),
        switch: Some(SCREEN_SWITCH),
    })
}
