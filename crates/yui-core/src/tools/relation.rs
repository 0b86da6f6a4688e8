//! `rate_relation`: the model moves this character's relation toward the user or another open
//! character by one small step, with the reason. Argument checks and the exact result strings
//! live here; the rules (per turn, daily cap, range) live in [`crate::relations`].
//!
//! Results, exactly: the band word; `clamped: <band>`; `ignored: already rated <toward> this
//! turn`; `error: unknown target`; `error: invalid field delta`; `error: invalid field why`;
//! `error: reserved reason`; `error: relations are off`. A `why` over 80 characters (or empty)
//! answers `error: invalid field why` and changes nothing (docs/relations.md).

use super::input::{self, Field};
use super::{ClientTool, Switch, ToolContext, ToolError, ToolOutput, RATE_RELATION};
use crate::relations::{self, RateOutcome, TowardEntry};
use crate::settings;
use crate::store::Store;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

pub const OFF: &str = "error: relations are off";
pub const UNKNOWN_TARGET: &str = "error: unknown target";
pub const INVALID_DELTA: &str = "error: invalid field delta";
pub const INVALID_WHY: &str = "error: invalid field why";
pub const RESERVED: &str = "error: reserved reason";

/// The `rate_relation` client tool of one window (one preset).
pub struct RateRelationTool {
    store: Store,
    preset_id: String,
    /// The `toward` entries as of the last schema build: a call maps its `toward` through the
    /// list the model was offered, not through whatever is open when the call arrives.
    offered: Mutex<Option<Vec<TowardEntry>>>,
}

impl RateRelationTool {
    /// The tool for the window showing `preset_id`. The schema reads the open presets each time
    /// it is built.
    pub fn new(store: Store, preset_id: impl Into<String>) -> Self {
        Self {
            store,
            preset_id: preset_id.into(),
            offered: Mutex::new(None),
        }
    }

    /// [`Self::new`] as the registry holds it.
    pub fn shared(store: &Store, preset_id: &str) -> std::sync::Arc<dyn ClientTool> {
        std::sync::Arc::new(Self::new(store.clone(), preset_id))
    }

    fn entries_for(&self, preset_id: &str) -> Result<Vec<TowardEntry>, ToolError> {
        if preset_id == self.preset_id {
            if let Some(e) = self
                .offered
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
            {
                return Ok(e.clone());
            }
        }
        relations::toward_entries(&self.store, preset_id).map_err(ToolError::from)
    }
}

/// `rate_relation`'s arguments.
#[derive(Debug, Default, Deserialize)]
#[doc(hidden)]
pub struct RateInput {
    /// One of the offered `toward` labels.
    #[serde(default)]
    pub toward: Field<String>,
    /// An integer (a float with no fraction counts) in [`relations::DELTAS`].
    #[serde(default)]
    pub delta: Field<f64>,
    /// The reason, at most 80 characters.
    #[serde(default)]
    pub why: Field<String>,
}

/// The argument checks of a call, in the contract's order, against the `toward` entries
/// offered: `(target, delta, cleaned why)`, or the exact result string. No store access, so the
/// fuzz targets (`fuzz/fuzz_targets/tool_args.rs`) can run it alone.
#[doc(hidden)]
pub fn parse_args(
    args: &Value,
    entries: &[TowardEntry],
) -> Result<(relations::Target, i64, String), &'static str> {
    let input: RateInput = input::parse(args);
    let toward = input.toward.given().ok_or(UNKNOWN_TARGET)?;
    let target = entries
        .iter()
        .find(|e| e.label == toward)
        .map(|e| e.target.clone())
        .ok_or(UNKNOWN_TARGET)?;
    let delta = (input.delta.given().and_then(input::whole))
        .filter(|n| relations::DELTAS.contains(n))
        .ok_or(INVALID_DELTA)?;
    let why = input.why.given().ok_or(INVALID_WHY)?;
    if relations::is_reserved_reason(&why) {
        return Err(RESERVED);
    }
    let why = relations::clean_reason(&why).ok_or(INVALID_WHY)?;
    Ok((target, delta, why))
}

#[async_trait]
impl ClientTool for RateRelationTool {
    fn name(&self) -> &str {
        RATE_RELATION
    }

    fn description(&self) -> String {
        "Moves this character's relation toward the user or another open character by one small \
         step, with the reason. One call per target per turn; at most 4 points per target per day. \
         The result is the band after the change (hostile, cold, neutral, warm, close). The reason \
         is shown to the user."
            .into()
    }

    fn parameters(&self) -> Value {
        let entries = relations::toward_entries(&self.store, &self.preset_id).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "rate_relation: reading open presets failed");
            vec![TowardEntry {
                label: "user".into(),
                target: relations::Target::User,
            }]
        });
        let labels: Vec<&str> = entries.iter().map(|e| e.label.as_str()).collect();
        let schema = json!({
            "type": "object",
            "properties": {
                "toward": {
                    "type": "string",
                    "enum": labels,
                    "description": "user is the human; the other entries are the other open characters"
                },
                "delta": {
                    "type": "integer",
                    "enum": relations::DELTAS,
                    "description": "The step: -2, -1, 1 or 2"
                },
                "why": {
                    "type": "string",
                    "maxLength": relations::REASON_MAX_CHARS,
                    "description": "The reason, at most 80 characters, written for the user to read"
                }
            },
            "required": ["toward", "delta", "why"],
            "additionalProperties": false
        });
        *self.offered.lock().unwrap_or_else(|p| p.into_inner()) = Some(entries);
        schema
    }

    fn switch(&self) -> Option<Switch> {
        Some(Switch {
            id: "relations",
            key: settings::RELATIONS,
        })
    }

    async fn call(
        &self,
        args: Value,
        ctx: &ToolContext,
        _cancel: CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        // The switch is read when the call runs, before anything else.
        let on = settings::switch_on(&ctx.store, settings::RELATIONS).map_err(ToolError::from)?;
        if !on {
            return Ok(OFF.into());
        }
        let Some(toward) = input::parse::<RateInput>(&args).toward.given() else {
            return Ok(UNKNOWN_TARGET.into());
        };
        let entries = self.entries_for(&ctx.preset_id)?;
        let (target, delta, why) = match parse_args(&args, &entries) {
            Ok(parsed) => parsed,
            Err(answer) => return Ok(answer.into()),
        };
        let (store, clock) = (ctx.store.clone(), ctx.clock.clone());
        let (preset, turn) = (ctx.preset_id.clone(), ctx.turn_id.clone());
        // SQLite may wait on another process's lock: keep it off the async workers.
        let outcome = tokio::task::spawn_blocking(move || {
            relations::rate(&store, clock.as_ref(), &preset, &target, delta, &why, &turn)
        })
        .await
        .map_err(|e| ToolError::stopped("rate_relation", e))?
        .map_err(ToolError::from)?;
        Ok(match outcome {
            RateOutcome::Applied(band) => band.word().into(),
            RateOutcome::Clamped(band) => format!("clamped: {band}").into(),
            RateOutcome::Ignored => format!("ignored: already rated {toward} this turn").into(),
        })
    }
}
