//! Chat Completions wire → [`ModelEvent`]s: `chat.completion.chunk` SSE events as servers really
//! send them.
//!
//! Tool-call fragments are accumulated per call index and held until a chunk carries a
//! `finish_reason`; the held calls are then released in index order. The stream's end is a
//! `finish_reason` or `[DONE]`; a body that closes before either is cut off, and the calls still
//! held are dropped (their arguments may be incomplete). `hermes.tool.progress` telemetry is
//! backend tool status.

use super::wire as wchat;
use crate::turn::error::{evidence, BackendError};
use crate::turn::model::{CallItem, Flow, Mapper, ModelEvent, StopReason};
use crate::turn::sse::SseEvent;

/// One Chat Completions response being read.
#[derive(Default)]
pub struct ChatMapper {
    calls: ChatCalls,
    /// A `finish_reason` or `[DONE]` arrived: the server ended the response itself.
    complete: bool,
}

impl ChatMapper {
    pub fn new() -> Self {
        Self::default()
    }

    fn release(&mut self, out: &mut Vec<ModelEvent>) {
        out.extend(self.calls.take().into_iter().map(ModelEvent::Call));
    }
}

impl Mapper for ChatMapper {
    type Frame = SseEvent;

    fn feed(&mut self, ev: SseEvent, out: &mut Vec<ModelEvent>) -> Result<Flow, BackendError> {
        let ev = &ev;
        match &*ev.event {
            "hermes.tool.progress" => {
                hermes_progress(&ev.data, out);
                return Ok(Flow::More);
            }
            "error" => {
                return Err(BackendError::Server {
                    body: evidence(&ev.data),
                })
            }
            _ => {}
        }
        let data = ev.data.trim();
        if data == "[DONE]" {
            self.complete = true;
            return Ok(Flow::End);
        }
        if data.is_empty() {
            return Ok(Flow::More);
        }
        let chunk: wchat::Chunk = serde_json::from_str(data).map_err(|e| BackendError::Parse {
            line: evidence(data),
            message: e.to_string(),
        })?;
        if let Some(err) = chunk.error {
            return Err(BackendError::Server {
                body: evidence(&err.to_string()),
            });
        }
        for choice in chunk.choices {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                if let Some(c) = delta.content.filter(|c| !c.is_empty()) {
                    out.push(ModelEvent::Text {
                        text: c,
                        spoken: true,
                    });
                }
                for tc in delta.tool_calls.into_iter().flatten() {
                    self.calls.add(tc);
                }
            }
            // Some servers send `"finish_reason": ""` on every chunk: only a value counts.
            if let Some(fr) = choice.finish_reason.filter(|f| !f.is_empty()) {
                self.complete = true;
                self.release(out);
                out.push(ModelEvent::Stop(StopReason::from_finish_reason(&fr)));
            }
        }
        Ok(Flow::More)
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), BackendError> {
        if !self.complete {
            return Err(BackendError::CutOff {
                expected: "a finish_reason or [DONE]",
            });
        }
        // Fragments after the finish_reason (rare) still belong to a finished response.
        self.release(out);
        Ok(())
    }
}

fn hermes_progress(data: &str, out: &mut Vec<ModelEvent>) {
    match serde_json::from_str::<wchat::HermesProgress>(data) {
        Ok(p) => out.push(ModelEvent::BackendTool {
            call_id: None,
            name: p.name.unwrap_or_default(),
            status: p.status.unwrap_or_default(),
        }),
        // Telemetry: a malformed one is logged, never fatal.
        Err(e) => tracing::warn!(error = %e, line = %evidence(data), "bad hermes.tool.progress"),
    }
}

/// Chat Completions tool-call fragments, accumulated per call index.
#[derive(Default)]
struct ChatCalls {
    slots: Vec<Slot>,
}

struct Slot {
    index: usize,
    id: String,
    name: String,
    arguments: String,
    pieces: usize,
}

impl ChatCalls {
    fn add(&mut self, d: wchat::ToolCallDelta) {
        let pos = match d.index {
            // A new id under an index already in use is a new call: some servers send every
            // whole call with index 0.
            Some(i) => self.slots.iter().position(|s| {
                s.index == i
                    && !matches!(&d.id, Some(id) if !id.is_empty() && !s.id.is_empty() && *id != s.id)
            }),
            // No index: the id names the call; a fragment with neither continues the last call.
            None => match &d.id {
                Some(id) => self.slots.iter().position(|s| &s.id == id),
                None => self.slots.len().checked_sub(1),
            },
        };
        let pos = match pos {
            Some(p) => p,
            None => {
                // The index comes from the server: no overflow on `usize::MAX`.
                let next = self
                    .slots
                    .iter()
                    .map(|s| s.index.saturating_add(1))
                    .max()
                    .unwrap_or(0);
                let index = match d.index {
                    Some(i) if self.slots.iter().all(|s| s.index != i) => i,
                    _ => next,
                };
                self.slots.push(Slot {
                    index,
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                    pieces: 0,
                });
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[pos];
        if let Some(id) = d.id.filter(|i| !i.is_empty()) {
            if slot.id.is_empty() {
                slot.id = id;
            }
        }
        if let Some(f) = d.function {
            if let Some(n) = f.name.filter(|n| !n.is_empty()) {
                // Names usually come whole once; some servers repeat them, a few split them.
                if slot.name != n {
                    slot.name.push_str(&n);
                }
            }
            if let Some(a) = f.arguments {
                slot.pieces += usize::from(!a.is_empty());
                slot.arguments.push_str(&a);
            }
        }
    }

    /// The held calls in index order; ids filled in for servers that send none.
    fn take(&mut self) -> Vec<CallItem> {
        let mut slots = std::mem::take(&mut self.slots);
        slots.sort_by_key(|s| s.index);
        slots
            .into_iter()
            .enumerate()
            .map(|(seq, s)| CallItem {
                call_id: if s.id.is_empty() {
                    format!("call_{}", s.index)
                } else {
                    s.id
                },
                name: s.name,
                arguments: s.arguments,
                seq,
                fragments: s.pieces,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    //! Table tests of the mapping, no sockets: SSE data lines in, model events out.
    use super::*;
    use serde_json::json;

    fn ev(data: &str) -> SseEvent {
        SseEvent {
            event: "message".into(),
            data: data.into(),
        }
    }

    fn run(lines: &[&str]) -> (Vec<ModelEvent>, Result<(), BackendError>) {
        let mut m = ChatMapper::new();
        let mut out = Vec::new();
        for l in lines {
            match m.feed(ev(l), &mut out) {
                Ok(Flow::More) => {}
                Ok(Flow::End) => break,
                Err(e) => return (out, Err(e)),
            }
        }
        let end = m.finish(&mut out);
        (out, end)
    }

    fn text(t: &str) -> ModelEvent {
        ModelEvent::Text {
            text: t.into(),
            spoken: true,
        }
    }

    fn call(id: &str, name: &str, args: &str, seq: usize) -> ModelEvent {
        ModelEvent::Call(CallItem {
            call_id: id.into(),
            name: name.into(),
            arguments: args.into(),
            seq,
            fragments: 0,
        })
    }

    #[test]
    fn chat_mapper_table() {
        let c = |v: serde_json::Value| v.to_string();
        let cases: Vec<(&str, Vec<String>, Vec<ModelEvent>, bool)> = vec![
            (
                "text then stop",
                vec![
                    c(json!({"choices":[{"index":0,"delta":{"content":"Hi"}}]})),
                    c(json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})),
                ],
                vec![text("Hi"), ModelEvent::Stop(StopReason::Done)],
                true,
            ),
            (
                "fragments held until finish_reason, index order",
                vec![
                    c(
                        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"y","arguments":"{}"}}]}}]}),
                    ),
                    c(
                        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":"{\"q\":"}}]}}]}),
                    ),
                    c(
                        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}),
                    ),
                    c(json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})),
                ],
                vec![
                    call("a", "x", "{\"q\":1}", 0),
                    call("b", "y", "{}", 1),
                    ModelEvent::Stop(StopReason::ToolCalls),
                ],
                true,
            ),
            (
                "[DONE] without finish_reason releases the held calls",
                vec![
                    c(
                        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"x","arguments":"{}"}}]}}]}),
                    ),
                    "[DONE]".into(),
                ],
                vec![call("call_0", "x", "{}", 0)],
                true,
            ),
            (
                "empty finish_reason is no finish",
                vec![c(
                    json!({"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":""}]}),
                )],
                vec![text("a")],
                false,
            ),
            (
                "other choices ignored",
                vec![
                    c(json!({"choices":[{"index":1,"delta":{"content":"no"}}]})),
                    "[DONE]".into(),
                ],
                vec![],
                true,
            ),
        ];
        for (name, lines, want, complete) in cases {
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            let (got, end) = run(&refs);
            assert_eq!(got, want, "{name}");
            assert_eq!(end.is_ok(), complete, "{name}: {end:?}");
        }
    }

    #[test]
    fn chat_cut_stream_drops_held_calls_with_their_partial_arguments() {
        let line = json!({"choices":[{"index":0,"delta":{"content":"Half a sen","tool_calls":[{"index":0,"id":"c","function":{"name":"rate_relation","arguments":"{\"tow"}}]}}]}).to_string();
        let (got, end) = run(&[&line]);
        assert_eq!(got, vec![text("Half a sen")]);
        assert!(matches!(end, Err(BackendError::CutOff { .. })), "{end:?}");
    }

    #[test]
    fn chat_errors_keep_their_evidence() {
        let (_, end) = run(&["{not json"]);
        assert!(
            matches!(end, Err(BackendError::Parse { ref line, .. }) if line == "{not json"),
            "{end:?}"
        );
        let (_, end) = run(&[r#"{"error":{"message":"boom"}}"#]);
        assert!(matches!(end, Err(BackendError::Server { ref body }) if body.contains("boom")));
    }
}
