//! `address_character`: names the other open character this reply speaks to, so that character
//! receives an addressed turn after the reply's playback.
//!
//! `to` lists the names of the other presets open when the schema is built (the registry is built
//! per turn). One call per reply: the first accepted call records the recipient on the turn; a
//! later one answers `ignored: already addressed <name>` with the name of the first.

use super::*;
use crate::events::Addressed;
use input::Field;
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, Mutex};

/// State the tools of one turn share with the turn engine (the registry is built per turn).
#[derive(Debug, Default)]
pub struct TurnToolState {
    /// Recorded by `address_character`; reported on `turn_end`.
    pub addressed: Mutex<Option<Addressed>>,
}

/// `address_character`'s arguments.
#[derive(Debug, Default, Deserialize)]
struct AddressInput {
    /// The name of the other open character (any other shape: `error: unknown target`).
    #[serde(default)]
    to: Field<String>,
}

pub struct AddressCharacter {
    /// (preset id, name) of every other open preset.
    targets: Vec<(String, String)>,
    state: Arc<TurnToolState>,
}

impl AddressCharacter {
    pub fn new(targets: Vec<(String, String)>, state: Arc<TurnToolState>) -> Self {
        Self { targets, state }
    }
}

#[async_trait]
impl ClientTool for AddressCharacter {
    fn name(&self) -> &str {
        ADDRESS_CHARACTER
    }
    fn description(&self) -> String {
        "Name the other open character this reply is for; that character gets a turn after your \
         reply has played. One per reply. Never the user."
            .to_string()
    }
    fn parameters(&self) -> Value {
        let names: Vec<&str> = self.targets.iter().map(|(_, n)| n.as_str()).collect();
        // Some providers refuse an empty enum: with nobody else open, `to` says so instead (and
        // any call answers `error: unknown target`).
        let to = if names.is_empty() {
            json!({"type": "string", "description": "No other character is open now."})
        } else {
            json!({"type": "string", "enum": names})
        };
        json!({
            "type": "object",
            "properties": {"to": to},
            "required": ["to"],
            "additionalProperties": false
        })
    }
    async fn call(
        &self,
        args: Value,
        _ctx: &ToolContext,
        _cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let mut slot = self
            .state
            .addressed
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // One call per reply: once a recipient is recorded, any later call (even one naming
        // nobody known) is the second call and changes nothing.
        if let Some(first) = slot.as_ref() {
            return Ok(ToolOutput::text(format!(
                "ignored: already addressed {}",
                first.name
            )));
        }
        let input: AddressInput = input::parse(&args);
        let to = input.to.given();
        let Some((id, name)) = to.and_then(|to| self.targets.iter().find(|(_, n)| *n == to)) else {
            return Ok(ToolOutput::text("error: unknown target"));
        };
        *slot = Some(Addressed {
            preset_id: id.clone(),
            name: name.clone(),
        });
        Ok(ToolOutput::text("ok"))
    }
}
