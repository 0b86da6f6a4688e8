//! generate_express: the cue-only tool that places an expression cue (face, body motion, voice
//! tone) on the speech around the call. Its description and parameters are built from the
//! vocabulary loaded at the moment they are asked for, so a vocabulary edit reaches the schema of
//! the next turn with no restart. The result is always `ok`; playing the cue is the turn
//! engine's job (it reads the arguments with [`Cue::from_args`]).

use super::*;
use crate::vocab::{self, Vocab};
use std::sync::Arc;

/// The generate_express tool over the store's vocabulary.
pub struct ExpressTool {
    store: Store,
}

impl ExpressTool {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// The tool for this turn, or `None` when the vocabulary loaded now is empty (then the
    /// window declares no generate_express).
    pub fn for_turn(store: &Store) -> Option<Arc<dyn ClientTool>> {
        let tool = Self::new(store.clone());
        if vocab::vocab_is_empty(&tool.vocab()) {
            None
        } else {
            Some(Arc::new(tool))
        }
    }

    /// The vocabulary loaded now. A stored vocabulary that no longer parses falls back to the
    /// defaults (with a log line) rather than dropping expression from the turn.
    pub fn vocab(&self) -> Vocab {
        match vocab::load(&self.store) {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!("generate_express: stored vocabulary unusable, using defaults: {e}");
                Vocab::default()
            }
        }
    }
}

#[async_trait]
impl ClientTool for ExpressTool {
    fn name(&self) -> &str {
        GENERATE_EXPRESS
    }
    fn description(&self) -> String {
        vocab::tool_description(&self.vocab())
    }
    fn parameters(&self) -> Value {
        vocab::parameters(&self.vocab())
    }
    fn one_way(&self) -> bool {
        true
    }
    async fn call(
        &self,
        _args: Value,
        _ctx: &ToolContext,
        _cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ok"))
    }
}

/// One expression cue, read leniently from the call's arguments: a missing or non-string field
/// is absent. Ids are not checked here: a deselected motion still renders, and the window
/// ignores an unknown id with a log line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Cue {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emotion_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub motion_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emotion_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
}

impl Cue {
    pub fn from_args(args: &Value) -> Self {
        let field = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        Self {
            emotion_id: field("emotion_id"),
            motion_id: field("motion_id"),
            emotion_text: field("emotion_text"),
            caption: field("caption"),
        }
    }

    /// Whether the cue carries nothing to play.
    pub fn is_empty(&self) -> bool {
        self.emotion_id.is_none()
            && self.motion_id.is_none()
            && self.emotion_text.is_none()
            && self.caption.is_none()
    }
}
