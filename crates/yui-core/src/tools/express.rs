//! generate_express: the cue-only tool that places an expression cue (face, body motion, voice
//! tone) on the speech around the call. Its description and parameters are built from the
//! vocabulary loaded at the moment they are asked for, so a vocabulary edit reaches the schema of
//! the next turn with no restart. The result is always `ok`; playing the cue is the turn
//! engine's job (`events::Cue`, emitted before the call runs).

use super::*;
use crate::events::Cue;
use crate::vocab::{self, Vocab};
use input::Field;
use serde::Deserialize;
use std::borrow::Cow;
use std::sync::Arc;

/// The generate_express tool over the store's vocabulary.
pub struct ExpressTool {
    store: Store,
    /// The vocabulary loaded when the turn's registry was built ([`ExpressTool::for_turn`]), so
    /// description and parameters come from one read. `None`: read at every use.
    snapshot: Option<Vocab>,
}

impl ExpressTool {
    /// A tool that reads the vocabulary at every description / parameters request.
    pub fn new(store: Store) -> Self {
        Self {
            store,
            snapshot: None,
        }
    }

    /// The tool for this turn over the vocabulary loaded now, or `None` when that vocabulary is
    /// empty (then the window declares no generate_express). The registry is built per turn, so
    /// an edit reaches the next turn.
    pub fn for_turn(store: &Store) -> Option<Arc<dyn ClientTool>> {
        let vocab = load_or_default(store);
        if vocab::vocab_is_empty(&vocab) {
            return None;
        }
        Some(Arc::new(Self {
            store: store.clone(),
            snapshot: Some(vocab),
        }))
    }

    /// The vocabulary this tool declares (the snapshot, else the stored one read now).
    pub fn vocab(&self) -> Cow<'_, Vocab> {
        if let Some(v) = &self.snapshot {
            return Cow::Borrowed(v);
        }
        Cow::Owned(load_or_default(&self.store))
    }
}

/// `generate_express`'s arguments: every field optional; one that is not a string is left out
/// of the cue (the call still answers `ok`).
#[derive(Debug, Default, Deserialize)]
struct ExpressInput {
    #[serde(default)]
    emotion_id: Field<String>,
    #[serde(default)]
    motion_id: Field<String>,
    #[serde(default)]
    emotion_text: Field<String>,
    #[serde(default)]
    caption: Field<String>,
}

/// The cue a call's arguments place (the turn engine emits it before the call runs).
pub fn cue_of(args: &Value) -> Cue {
    let input: ExpressInput = input::parse(args);
    Cue {
        emotion_id: input.emotion_id.given(),
        motion_id: input.motion_id.given(),
        emotion_text: input.emotion_text.given(),
        caption: input.caption.given(),
    }
}

/// The stored vocabulary; one that no longer parses falls back to the defaults (with a log line)
/// rather than dropping expression from the turn.
fn load_or_default(store: &Store) -> Vocab {
    vocab::load(store).unwrap_or_else(|e| {
        tracing::warn!("generate_express: stored vocabulary unusable, using defaults: {e}");
        Vocab::default()
    })
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
