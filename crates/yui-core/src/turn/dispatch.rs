//! The one dispatch every transport's model events go through: speech (joined by the rule),
//! cues, client calls (run under their waits, the switches read at call time), backend tool
//! status. The read loop (`read`) feeds it one response's model events.

use super::call::{call_tool, parse_call_arguments};
use super::error::BackendError;
use super::model::{CallItem, ModelEvent, StopReason};
use crate::events::TurnEvent;
use crate::tools::registry::ToolRegistry;
use crate::tools::{ClientTool, ToolContext, ToolOutput, GENERATE_EXPRESS};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Why a turn stopped early.
#[derive(Debug)]
pub(crate) enum End {
    Stopped,
    Backend(BackendError),
    Failed(String),
}

impl From<BackendError> for End {
    fn from(e: BackendError) -> Self {
        Self::Backend(e)
    }
}

/// What a call to a name outside the registry gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unregistered {
    /// Chat Completions: the backend ran it; show `done` when it is released.
    StatusDone,
    /// Responses: the backend ran it; its status comes from its own items.
    Silent,
    /// Push: the client was asked to run a tool this window did not declare.
    Refuse,
    /// Realtime: the session declares every tool of the window, generate_express included;
    /// any other name is refused like push's.
    Answer,
}

/// The result a call to an undeclared tool answers on push.
pub const UNKNOWN_TOOL: &str = "error: unknown tool";

/// A client call that ran (or failed to parse) and has a result for the model.
#[derive(Debug, Clone)]
pub(crate) struct Answered {
    pub call_id: String,
    pub name: String,
    pub arguments: String,
    pub result: ToolOutput,
    pub one_way: bool,
    pub seq: usize,
}

/// What one response produced.
#[derive(Debug, Default)]
pub(crate) struct Round {
    /// This response's speech (without the separator the turn's text puts before it).
    pub text: String,
    /// Why the server ended the response, when it said.
    pub stop: Option<StopReason>,
    pub answered: Vec<Answered>,
    /// Reasoning items with their place among the output items.
    pub reasoning: Vec<(usize, Value)>,
    pub response_id: Option<String>,
}

/// Whether a response said something. Whitespace alone (some models emit a newline before
/// their calls) is no text.
pub(crate) fn spoke(text: &str) -> bool {
    !text.trim().is_empty()
}

/// The speech-join rule: responses of a turn are joined with one space, unless the earlier text
/// ends in whitespace or 。！？ or the later text starts with whitespace.
pub fn join_speech(earlier: &str, later: &str) -> String {
    format!("{earlier}{}{later}", separator(earlier, later))
}

fn separator(earlier: &str, later: &str) -> &'static str {
    let no_space = earlier.is_empty()
        || later.is_empty()
        || earlier.ends_with(char::is_whitespace)
        || earlier.ends_with(['。', '！', '？'])
        || later.starts_with(char::is_whitespace);
    if no_space {
        ""
    } else {
        " "
    }
}

/// Append `n` in decimal.
fn push_decimal(s: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        s.push(d as char);
    }
}

/// One turn's dispatch: the events out, the tools, and the turn's speech so far.
pub(crate) struct Dispatch<'a> {
    pub tx: &'a mpsc::Sender<TurnEvent>,
    pub registry: &'a ToolRegistry,
    pub cancel: &'a CancellationToken,
    pub tool_ctx: ToolContext,
    pub unregistered: Unregistered,
    /// The turn's speech so far, joined by the rule.
    pub text: String,
    /// The last response id seen (Responses).
    pub response_id: Option<String>,
    cues: u64,
    /// The start of a reply held back while it can still become [`SILENT`].
    held: String,
    /// The reply was exactly [`SILENT`]: nothing is shown, spoken or stored.
    pub silenced: bool,
    /// The user spoke over the reply (realtime barge-in): what they heard of it. The engine
    /// stores the reply as this plus the interrupted marker.
    pub heard: Option<String>,
}

/// A reply that is exactly this (trimmed) ends an exchange between characters and is neither
/// shown, spoken nor stored.
pub const SILENT: &str = "[SILENT]";

/// Whether `held` (the reply so far) can still become [`SILENT`].
fn may_be_silent(held: &str) -> bool {
    let t = held.trim_start();
    let core = t.trim_end();
    if core.len() == t.len() {
        SILENT.starts_with(core)
    } else {
        // Whitespace after it: only a complete [SILENT] can still be the whole reply.
        core == SILENT
    }
}

impl<'a> Dispatch<'a> {
    pub fn new(
        tx: &'a mpsc::Sender<TurnEvent>,
        registry: &'a ToolRegistry,
        cancel: &'a CancellationToken,
        tool_ctx: ToolContext,
        unregistered: Unregistered,
    ) -> Self {
        Self {
            tx,
            registry,
            cancel,
            tool_ctx,
            unregistered,
            text: String::new(),
            response_id: None,
            cues: 0,
            held: String::new(),
            silenced: false,
            heard: None,
        }
    }

    pub async fn emit(&self, ev: TurnEvent) {
        // A reader that went away does not stop the turn: its speech is still stored.
        let _ = self.tx.send(ev).await;
    }

    /// Apply one model event to the turn and the response it belongs to.
    pub async fn apply(&mut self, ev: ModelEvent, round: &mut Round) -> Result<(), End> {
        match ev {
            ModelEvent::Text { text, spoken: true } => self.speech(&mut round.text, text).await,
            ModelEvent::Text {
                text,
                spoken: false,
            } => {
                if !text.is_empty() {
                    self.emit(TurnEvent::Render { text }).await;
                }
            }
            ModelEvent::Cue(cue) => {
                self.cues += 1;
                // Built by hand: `format!` cost more than the rest of the cue's dispatch.
                let turn_id = &self.tool_ctx.turn_id;
                let mut call_id = String::with_capacity(turn_id.len() + 25);
                call_id.push_str(turn_id);
                call_id.push_str("-cue-");
                push_decimal(&mut call_id, self.cues);
                self.emit(TurnEvent::Cue {
                    call_id,
                    name: GENERATE_EXPRESS.to_string(),
                    cue,
                })
                .await;
            }
            ModelEvent::Call(call) => {
                if let Some(a) = self.release(call).await? {
                    round.answered.push(a);
                }
            }
            ModelEvent::BackendTool {
                call_id,
                name,
                status,
            } => {
                self.emit(TurnEvent::ToolStatus {
                    call_id,
                    name,
                    status,
                })
                .await
            }
            ModelEvent::ResponseId(id) => {
                self.response_id = Some(id.clone());
                round.response_id = Some(id);
            }
            ModelEvent::Reasoning { seq, item } => round.reasoning.push((seq, item)),
            ModelEvent::Stop(reason) => round.stop = Some(reason),
        }
        Ok(())
    }

    async fn speech(&mut self, response_text: &mut String, delta: String) {
        if delta.is_empty() {
            return;
        }
        // Hold the start of the reply back while it may still be [SILENT], so it never flashes.
        if self.text.is_empty() && !self.silenced {
            self.held.push_str(&delta);
            if may_be_silent(&self.held) {
                return;
            }
            let held = std::mem::take(&mut self.held);
            return self.emit_speech(response_text, held).await;
        }
        self.emit_speech(response_text, delta).await
    }

    /// The response ended: a held reply that is exactly [`SILENT`] is dropped (the turn is
    /// silenced); any other held start is released as speech.
    pub async fn end_of_response(&mut self, response_text: &mut String) {
        let held = std::mem::take(&mut self.held);
        if held.trim() == SILENT {
            self.silenced = true;
        } else if !held.is_empty() {
            self.emit_speech(response_text, held).await;
        }
    }

    /// `delta` is moved into the event: no copy per text delta.
    async fn emit_speech(&mut self, response_text: &mut String, delta: String) {
        let sep = if response_text.is_empty() {
            separator(&self.text, &delta)
        } else {
            ""
        };
        response_text.push_str(&delta);
        self.text.push_str(sep);
        self.text.push_str(&delta);
        let piece = if sep.is_empty() {
            delta
        } else {
            format!("{sep}{delta}")
        };
        self.emit(TurnEvent::Speech { delta: piece }).await;
    }

    /// Run one delivered call: a cue for any name ending in generate_express, the registered
    /// tool for a registered name (answered), and for any other name what the transport says.
    pub async fn release(&mut self, call: CallItem) -> Result<Option<Answered>, End> {
        // Push declares no generate_express (its cues come in segments): a call to it is a call
        // to a tool the window did not declare.
        if self.unregistered == Unregistered::Refuse && call.name == GENERATE_EXPRESS {
            return Ok(self.unregistered(call).await);
        }
        let parsed = parse_call_arguments(&call.arguments);
        // The cue plays first, registered or not: any name ending in generate_express is one.
        if call.name.ends_with(GENERATE_EXPRESS) {
            if let Ok(args) = &parsed {
                self.emit(TurnEvent::Cue {
                    call_id: call.call_id.clone(),
                    name: call.name.clone(),
                    cue: crate::tools::express::cue_of(args),
                })
                .await;
            }
        }
        let Some(tool) = self.registry.get(&call.name).cloned() else {
            return Ok(self.unregistered(call).await);
        };
        self.emit(TurnEvent::ToolCall {
            call_id: call.call_id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        })
        .await;
        let result = match parsed {
            Err(unparsed) => unparsed,
            Ok(args) => self.run_tool(&tool, args, &call.call_id).await?,
        };
        self.emit(TurnEvent::ToolResult {
            call_id: call.call_id.clone(),
            name: call.name.clone(),
            result: result.clone(),
            failed: tool.failed(&result),
        })
        .await;
        Ok(Some(Answered {
            call_id: call.call_id,
            name: call.name,
            arguments: call.arguments,
            result,
            one_way: tool.one_way(),
            seq: call.seq,
        }))
    }

    pub async fn unregistered(&mut self, call: CallItem) -> Option<Answered> {
        match self.unregistered {
            Unregistered::Silent => None,
            Unregistered::StatusDone => {
                self.emit(TurnEvent::ToolStatus {
                    call_id: Some(call.call_id),
                    name: call.name,
                    status: "done".to_string(),
                })
                .await;
                None
            }
            Unregistered::Refuse | Unregistered::Answer => {
                let result = ToolOutput::text(UNKNOWN_TOOL);
                self.emit(TurnEvent::ToolResult {
                    call_id: call.call_id.clone(),
                    name: call.name.clone(),
                    result: result.clone(),
                    failed: true,
                })
                .await;
                Some(Answered {
                    call_id: call.call_id,
                    name: call.name,
                    arguments: call.arguments,
                    result,
                    one_way: false,
                    seq: call.seq,
                })
            }
        }
    }

    async fn run_tool(
        &self,
        tool: &Arc<dyn ClientTool>,
        args: Value,
        call_id: &str,
    ) -> Result<ToolOutput, End> {
        // The call's status lines (a command tool's `ready.presentation`) go out as tool status.
        let mut ctx = self.tool_ctx.clone();
        ctx.call = crate::tools::CallScope::to_events(call_id, tool.name(), self.tx);
        call_tool(tool, args, &ctx, self.cancel)
            .await
            .ok_or(End::Stopped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_decimal_writes_what_display_writes() {
        for n in [0u64, 7, 10, 99, 1234567890, u64::MAX] {
            let mut s = String::from("t-cue-");
            push_decimal(&mut s, n);
            assert_eq!(s, format!("t-cue-{n}"));
        }
    }
}
