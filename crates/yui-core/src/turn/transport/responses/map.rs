//! Responses wire → [`ModelEvent`]s: the streamed events, read by their `type` (unknown types
//! are ignored).
//!
//! Each `function_call` is released once, on the first of `output_item.added`,
//! `function_call_arguments.done`, `output_item.done` (or, failing all, `response.completed`)
//! that carries its complete arguments. A name that is not a client tool runs on the backend:
//! it shows `running` when its item is added and `done` when it completes. The stream's end is
//! `response.completed` or `response.incomplete` (`response.failed` and `error` are errors); a
//! body that closes before any of them is cut off, and calls not yet released are dropped.

use super::wire as wresp;
use crate::turn::error::{evidence, BackendError};
use crate::turn::model::{CallItem, Flow, Mapper, ModelEvent};
use crate::turn::sse::SseEvent;
use serde_json::{json, Value};

/// One Responses response being read.
pub struct ResponsesMapper {
    /// The client tools' names: any other call runs on the backend.
    client: Vec<String>,
    items: Vec<Track>,
    complete: bool,
}

impl ResponsesMapper {
    pub fn new(client_tools: Vec<String>) -> Self {
        Self {
            client: client_tools,
            items: Vec::new(),
            complete: false,
        }
    }

    fn is_client(&self, name: &str) -> bool {
        self.client.iter().any(|c| c == name)
    }

    /// An output item from `added`, `done`, or the completed response.
    fn item_seen(
        &mut self,
        output_index: Option<u64>,
        item: Value,
        done: bool,
        out: &mut Vec<ModelEvent>,
    ) {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        let item_id = item.get("id").and_then(Value::as_str).map(str::to_string);
        match kind {
            "function_call" => {
                let f: wresp::FunctionCallItem = serde_json::from_value(item).unwrap_or_default();
                let idx = match find_index(&self.items, f.id.as_deref(), output_index)
                    .or_else(|| find_call(&self.items, f.call_id.as_deref()))
                {
                    Some(i) => i,
                    None => {
                        self.items.push(Track::call(
                            output_index,
                            f.id.clone(),
                            f.call_id.clone(),
                            f.name.clone(),
                        ));
                        let i = self.items.len() - 1;
                        let name = f.name.clone().unwrap_or_default();
                        if !self.is_client(&name) {
                            // A backend-run tool: shown running from the moment it is added.
                            out.push(ModelEvent::BackendTool {
                                call_id: f.call_id.clone(),
                                name,
                                status: if done { "done" } else { "running" }.to_string(),
                            });
                            if let TrackKind::Call { status_done, .. } = &mut self.items[i].kind {
                                *status_done = done;
                            }
                        }
                        i
                    }
                };
                let complete = done
                    || f.status.as_deref() == Some("completed")
                    || f.arguments.as_deref().is_some_and(|a| {
                        !a.trim().is_empty()
                            && serde_json::from_str::<serde::de::IgnoredAny>(a).is_ok()
                    });
                if let TrackKind::Call {
                    call_id,
                    name,
                    args,
                    ran,
                    ..
                } = &mut self.items[idx].kind
                {
                    if call_id.is_empty() {
                        if let Some(c) = f.call_id {
                            *call_id = c;
                        }
                    }
                    if name.is_empty() {
                        if let Some(n) = f.name {
                            *name = n;
                        }
                    }
                    if !*ran {
                        if let Some(a) = f.arguments.filter(|a| !a.is_empty()) {
                            *args = a;
                        }
                    }
                }
                if complete {
                    self.release(idx, out);
                }
                if done {
                    self.backend_done(idx, out);
                }
            }
            "reasoning" => match find_index(&self.items, item_id.as_deref(), output_index) {
                Some(i) => {
                    // Sent once, however often it is reported done (the completed response
                    // repeats every item).
                    if let TrackKind::Reasoning { sent } = &mut self.items[i].kind {
                        if done && !*sent {
                            *sent = true;
                            out.push(ModelEvent::Reasoning { seq: i, item });
                        }
                    }
                }
                None => {
                    self.items.push(Track {
                        output_index,
                        item_id,
                        kind: TrackKind::Reasoning { sent: done },
                    });
                    if done {
                        let seq = self.items.len() - 1;
                        out.push(ModelEvent::Reasoning { seq, item });
                    }
                }
            },
            "message" | "" => {}
            other => {
                // Server-side tool items (web_search_call, mcp_call…) run on the backend.
                let name = item
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or(other)
                    .to_string();
                let known = find_index(&self.items, item_id.as_deref(), output_index).is_some();
                if !known {
                    self.items.push(Track {
                        output_index,
                        item_id: item_id.clone(),
                        kind: TrackKind::Backend,
                    });
                }
                if !known || done {
                    out.push(ModelEvent::BackendTool {
                        call_id: item_id,
                        name,
                        status: if done { "done" } else { "running" }.to_string(),
                    });
                }
            }
        }
    }

    /// A backend-run function call completed: show it done, once.
    fn backend_done(&mut self, idx: usize, out: &mut Vec<ModelEvent>) {
        let client = &self.client;
        if let TrackKind::Call {
            call_id,
            name,
            status_done,
            ..
        } = &mut self.items[idx].kind
        {
            if !*status_done && !client.iter().any(|c| c == name) {
                *status_done = true;
                out.push(ModelEvent::BackendTool {
                    call_id: Some(call_id.clone()),
                    name: name.clone(),
                    status: "done".to_string(),
                });
            }
        }
    }

    /// Release a tracked call once.
    fn release(&mut self, idx: usize, out: &mut Vec<ModelEvent>) {
        if let TrackKind::Call {
            call_id,
            name,
            args,
            ran,
            pieces,
            ..
        } = &mut self.items[idx].kind
        {
            if !*ran {
                *ran = true;
                out.push(ModelEvent::Call(CallItem {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    arguments: args.clone(),
                    seq: idx,
                    fragments: (*pieces).max(usize::from(!args.is_empty())),
                }));
            }
        }
    }
}

impl Mapper for ResponsesMapper {
    type Frame = SseEvent;

    fn feed(&mut self, ev: SseEvent, out: &mut Vec<ModelEvent>) -> Result<Flow, BackendError> {
        let ev = &ev;
        let data = ev.data.trim();
        if data.is_empty() || data == "[DONE]" {
            // `[DONE]` is not a Responses end: only the lifecycle events are.
            return Ok(if data.is_empty() {
                Flow::More
            } else {
                Flow::End
            });
        }
        let bad = |e: serde_json::Error| BackendError::Parse {
            line: evidence(data),
            message: e.to_string(),
        };
        // Text deltas are nearly every event: read them without buffering the whole object
        // (an internally tagged enum does), by their type first.
        let head: wresp::Head<'_> = serde_json::from_str(data).map_err(bad)?;
        if head.kind.is_empty() {
            // No type: an unknown event, ignored like any other.
            return Ok(Flow::More);
        }
        if head.kind == "response.output_text.delta" {
            if let Some(text) = head.delta.filter(|d| !d.is_empty()) {
                out.push(ModelEvent::Text { text, spoken: true });
            }
            return Ok(Flow::More);
        }
        let event: wresp::Event = serde_json::from_str(data).map_err(bad)?;
        match event {
            wresp::Event::Created { response } | wresp::Event::InProgress { response } => {
                if let Some(id) = response.and_then(|r| r.id) {
                    out.push(ModelEvent::ResponseId(id));
                }
            }
            wresp::Event::ItemAdded { output_index, item } => {
                self.item_seen(output_index, item, false, out)
            }
            wresp::Event::ItemDone { output_index, item } => {
                self.item_seen(output_index, item, true, out)
            }
            wresp::Event::BareCall { mut item } => {
                item["type"] = json!("function_call");
                self.item_seen(None, item, true, out);
            }
            wresp::Event::ArgsDelta {
                item_id,
                output_index,
                delta,
            } => {
                if let Some(i) = find_index(&self.items, item_id.as_deref(), output_index) {
                    if let TrackKind::Call {
                        args, ran, pieces, ..
                    } = &mut self.items[i].kind
                    {
                        if !*ran {
                            *pieces += usize::from(!delta.is_empty());
                            args.push_str(&delta);
                        }
                    }
                }
            }
            wresp::Event::ArgsDone {
                item_id,
                output_index,
                arguments,
                name,
            } => {
                let idx = match find_index(&self.items, item_id.as_deref(), output_index) {
                    Some(i) => i,
                    None => {
                        self.items
                            .push(Track::call(output_index, item_id.clone(), None, name));
                        self.items.len() - 1
                    }
                };
                if let TrackKind::Call { args, .. } = &mut self.items[idx].kind {
                    if let Some(a) = arguments {
                        *args = a;
                    }
                }
                self.release(idx, out);
            }
            wresp::Event::Completed { response } | wresp::Event::Incomplete { response } => {
                if let Some(r) = response {
                    if let Some(id) = r.id {
                        out.push(ModelEvent::ResponseId(id));
                    }
                    for item in r.output.into_iter().flatten() {
                        self.item_seen(None, item, true, out);
                    }
                }
                self.complete = true;
                return Ok(Flow::End);
            }
            wresp::Event::Failed { response } => {
                let body = response
                    .as_ref()
                    .and_then(|r| r.get("error"))
                    .unwrap_or(&Value::Null)
                    .to_string();
                return Err(BackendError::Server {
                    body: evidence(&body),
                });
            }
            wresp::Event::Error { body } => {
                return Err(BackendError::Server {
                    body: evidence(&body.to_string()),
                })
            }
            wresp::Event::Unknown => {}
        }
        Ok(Flow::More)
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), BackendError> {
        if !self.complete {
            return Err(BackendError::CutOff {
                expected: "response.completed",
            });
        }
        // A completed response runs every call it delivered, complete arguments or not.
        for idx in 0..self.items.len() {
            self.release(idx, out);
        }
        Ok(())
    }
}

/// A Responses output item being followed.
struct Track {
    output_index: Option<u64>,
    item_id: Option<String>,
    kind: TrackKind,
}

enum TrackKind {
    Call {
        call_id: String,
        name: String,
        args: String,
        /// Non-empty argument deltas seen.
        pieces: usize,
        ran: bool,
        status_done: bool,
    },
    Reasoning {
        sent: bool,
    },
    Backend,
}

impl Track {
    fn call(
        output_index: Option<u64>,
        item_id: Option<String>,
        call_id: Option<String>,
        name: Option<String>,
    ) -> Self {
        Self {
            output_index,
            item_id,
            kind: TrackKind::Call {
                call_id: call_id.unwrap_or_default(),
                name: name.unwrap_or_default(),
                args: String::new(),
                pieces: 0,
                ran: false,
                status_done: false,
            },
        }
    }
}

fn find_index(items: &[Track], item_id: Option<&str>, output_index: Option<u64>) -> Option<usize> {
    if let Some(id) = item_id {
        if let Some(i) = items.iter().position(|t| t.item_id.as_deref() == Some(id)) {
            return Some(i);
        }
    }
    let oi = output_index?;
    items.iter().position(|t| t.output_index == Some(oi))
}

fn find_call(items: &[Track], call_id: Option<&str>) -> Option<usize> {
    let call_id = call_id?;
    items
        .iter()
        .position(|t| matches!(&t.kind, TrackKind::Call { call_id: c, .. } if c == call_id))
}

#[cfg(test)]
mod tests {
    //! Table tests of the mapping, no sockets.
    use super::*;

    fn run(lines: &[Value]) -> (Vec<ModelEvent>, Result<(), BackendError>) {
        let mut m = ResponsesMapper::new(vec!["lookup".into()]);
        let mut out = Vec::new();
        for l in lines {
            let ev = SseEvent {
                event: "message".into(),
                data: l.to_string(),
            };
            match m.feed(ev, &mut out) {
                Ok(Flow::More) => {}
                Ok(Flow::End) => break,
                Err(e) => return (out, Err(e)),
            }
        }
        let end = m.finish(&mut out);
        (out, end)
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
    fn responses_mapper_table() {
        let fc = |oi: u64, args: &str| json!({"type":"response.output_item.added","output_index":oi,"item":{"type":"function_call","id":format!("fc{oi}"),"call_id":format!("c{oi}"),"name":"lookup","arguments":args}});
        let completed = json!({"type":"response.completed","response":{"id":"r1"}});
        let cases: Vec<(&str, Vec<Value>, Vec<ModelEvent>, bool)> = vec![
            (
                "text and id",
                vec![
                    json!({"type":"response.created","response":{"id":"r1"}}),
                    json!({"type":"response.output_text.delta","delta":"Hi"}),
                    completed.clone(),
                ],
                vec![
                    ModelEvent::ResponseId("r1".into()),
                    ModelEvent::Text {
                        text: "Hi".into(),
                        spoken: true,
                    },
                    ModelEvent::ResponseId("r1".into()),
                ],
                true,
            ),
            (
                "call released on args.done, once",
                vec![
                    fc(0, ""),
                    json!({"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"q\""}),
                    json!({"type":"response.function_call_arguments.done","output_index":0,"arguments":"{\"q\":1}"}),
                    json!({"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc0","call_id":"c0","name":"lookup","arguments":"{\"q\":1}"}}),
                    completed.clone(),
                ],
                vec![
                    call("c0", "lookup", "{\"q\":1}", 0),
                    ModelEvent::ResponseId("r1".into()),
                ],
                true,
            ),
            (
                "complete arguments on added release at once",
                vec![fc(0, "{}"), completed.clone()],
                vec![
                    call("c0", "lookup", "{}", 0),
                    ModelEvent::ResponseId("r1".into()),
                ],
                true,
            ),
            (
                "backend call shows running then done",
                vec![
                    json!({"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc0","call_id":"c0","name":"web","arguments":""}}),
                    json!({"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc0","call_id":"c0","name":"web","arguments":"{}"}}),
                    completed.clone(),
                ],
                vec![
                    ModelEvent::BackendTool {
                        call_id: Some("c0".into()),
                        name: "web".into(),
                        status: "running".into(),
                    },
                    call("c0", "web", "{}", 0),
                    ModelEvent::BackendTool {
                        call_id: Some("c0".into()),
                        name: "web".into(),
                        status: "done".into(),
                    },
                    ModelEvent::ResponseId("r1".into()),
                ],
                true,
            ),
            (
                "reasoning item kept at its place",
                vec![
                    json!({"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}),
                    completed.clone(),
                ],
                vec![
                    ModelEvent::Reasoning {
                        seq: 0,
                        item: json!({"type":"reasoning","id":"rs_1","summary":[]}),
                    },
                    ModelEvent::ResponseId("r1".into()),
                ],
                true,
            ),
        ];
        for (name, lines, want, complete) in cases {
            let (got, end) = run(&lines);
            assert_eq!(got, want, "{name}");
            assert_eq!(end.is_ok(), complete, "{name}: {end:?}");
        }
    }

    #[test]
    fn responses_cut_stream_releases_no_pending_call() {
        let (got, end) = run(&[
            json!({"type":"response.created","response":{"id":"r_cut"}}),
            json!({"type":"response.output_text.delta","delta":"Half"}),
            json!({"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc1","call_id":"c1","name":"lookup","arguments":""}}),
            json!({"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"q"}),
        ]);
        assert!(
            !got.iter().any(|e| matches!(e, ModelEvent::Call(_))),
            "{got:?}"
        );
        assert!(matches!(end, Err(BackendError::CutOff { .. })), "{end:?}");
    }

    #[test]
    fn responses_failed_and_error_events_are_errors() {
        let (_, end) =
            run(&[json!({"type":"response.failed","response":{"error":{"message":"no"}}})]);
        assert!(matches!(end, Err(BackendError::Server { ref body }) if body.contains("no")));
        let (_, end) = run(&[json!({"type":"error","message":"bad"})]);
        assert!(matches!(end, Err(BackendError::Server { .. })));
    }
}
