//! Realtime server events of one response → [`ModelEvent`]s. Pure and table-tested (no socket,
//! no clock): transcript and text deltas are the reply's speech; each `function_call` is
//! released once, on the first of `response.output_item.added` (when it carries its arguments
//! complete), `response.function_call_arguments.done`, `response.output_item.done` or, failing
//! all, `response.done` that carries them, so a generate_express cue plays at that point of the
//! transcript; `response.done` ends the response with a typed [`StopReason`]; an `error` event
//! ends it with the server's words; a connection that closes first is a lost connection.
//! Audio, the user's speech and everything else are not the mapper's: they map to nothing.

use super::wire::{Item, ServerEvent};
use crate::turn::model::{CallItem, ModelEvent, StopReason};
use crate::turn::transport::socket::{SocketMap, SocketMapper};

/// What a realtime turn whose connection closed before its response ended fails with.
pub const LOST: &str = "the connection to the realtime server was lost";

/// One call of the response, by item id (or call id when a server sends no item id).
#[derive(Debug, Default)]
struct Pending {
    key: String,
    call_id: Option<String>,
    name: Option<String>,
    args: String,
    fragments: usize,
    released: bool,
    seq: usize,
}

/// Maps one response's events.
pub(crate) type RealtimeMapper = SocketMapper<RealtimeMap>;

/// One response's events, as [`SocketMapper`] feeds them.
#[derive(Debug, Default)]
pub(crate) struct RealtimeMap {
    calls: Vec<Pending>,
}

impl SocketMap for RealtimeMap {
    type Frame = ServerEvent;
    const LOST: &'static str = LOST;

    fn parse(text: &str) -> Option<ServerEvent> {
        ServerEvent::parse(text).ok()
    }

    fn map(&mut self, ev: ServerEvent, out: &mut Vec<ModelEvent>) -> Option<StopReason> {
        self.map_event(ev, out)
    }
}

impl RealtimeMap {
    fn pending(&mut self, key: &str) -> &mut Pending {
        let i = match self.calls.iter().position(|p| p.key == key) {
            Some(i) => i,
            None => {
                let seq = self.calls.len();
                self.calls.push(Pending {
                    key: key.to_string(),
                    seq,
                    ..Pending::default()
                });
                seq
            }
        };
        &mut self.calls[i]
    }

    /// An item's call, updated from what the item carries; released when `complete`.
    fn item(&mut self, item: Item, complete: bool, out: &mut Vec<ModelEvent>) {
        if !item.is_call() {
            return;
        }
        let Some(key) = item.id.clone().or_else(|| item.call_id.clone()) else {
            return;
        };
        let p = self.pending(&key);
        if item.call_id.is_some() {
            p.call_id = item.call_id;
        }
        if item.name.is_some() {
            p.name = item.name;
        }
        let has_args = item.arguments.as_deref().is_some_and(|a| !a.is_empty());
        if let Some(a) = item.arguments.filter(|a| !a.is_empty()) {
            p.args = a;
        }
        // `added` carries complete arguments only when the item says it is complete.
        let done = complete || (has_args && item.status.as_deref() == Some("completed"));
        if done {
            release(p, out);
        }
    }

    fn map_event(&mut self, ev: ServerEvent, out: &mut Vec<ModelEvent>) -> Option<StopReason> {
        match ev {
            ServerEvent::TextDelta { delta, .. } | ServerEvent::TranscriptDelta { delta, .. } => {
                if !delta.is_empty() {
                    out.push(ModelEvent::Text {
                        text: delta,
                        spoken: true,
                    });
                }
            }
            ServerEvent::ResponseCreated {
                response_id: Some(id),
            } => out.push(ModelEvent::ResponseId(id)),
            ServerEvent::OutputItemAdded(item) => self.item(item, false, out),
            ServerEvent::OutputItemDone(item) => self.item(item, true, out),
            ServerEvent::ArgumentsDelta {
                item_id,
                call_id,
                delta,
            } => {
                if let Some(key) = item_id.or(call_id.clone()) {
                    let p = self.pending(&key);
                    if p.call_id.is_none() {
                        p.call_id = call_id;
                    }
                    if !p.released && !delta.is_empty() {
                        p.args.push_str(&delta);
                        p.fragments += 1;
                    }
                }
            }
            ServerEvent::ArgumentsDone {
                item_id,
                call_id,
                name,
                arguments,
            } => {
                if let Some(key) = item_id.or(call_id.clone()) {
                    let p = self.pending(&key);
                    if call_id.is_some() {
                        p.call_id = call_id;
                    }
                    if name.is_some() {
                        p.name = name;
                    }
                    if let Some(a) = arguments {
                        if !p.released {
                            p.args = a;
                        }
                    }
                    release(p, out);
                }
            }
            ServerEvent::ResponseDone {
                status,
                error,
                output,
                ..
            } => {
                if status != "cancelled" {
                    for item in output {
                        self.item(item, true, out);
                    }
                }
                return Some(match status.as_str() {
                    "cancelled" => StopReason::Stopped,
                    "incomplete" => StopReason::Length,
                    "failed" => StopReason::Error(error.unwrap_or_else(|| {
                        "the realtime server ended the response as failed".into()
                    })),
                    _ => StopReason::Done,
                });
            }
            ServerEvent::Error { message, .. } => return Some(StopReason::Error(message)),
            ServerEvent::Interrupted { .. } => return Some(StopReason::Stopped),
            ServerEvent::ResponseCreated { response_id: None }
            | ServerEvent::SessionCreated
            | ServerEvent::SessionUpdated
            | ServerEvent::AudioDelta { .. }
            | ServerEvent::SpeechStarted { .. }
            | ServerEvent::Committed { .. }
            | ServerEvent::InputTranscript { .. }
            | ServerEvent::Other(_)
            | ServerEvent::Unknown(_) => {}
        }
        None
    }
}

/// Release a call once. A call without a name or id cannot run or be answered: it is dropped
/// (logged).
fn release(p: &mut Pending, out: &mut Vec<ModelEvent>) {
    if p.released {
        return;
    }
    p.released = true;
    let (Some(call_id), Some(name)) = (p.call_id.clone(), p.name.clone()) else {
        tracing::warn!(item = %p.key, "realtime: a function call without a call id or name was dropped");
        return;
    };
    out.push(ModelEvent::Call(CallItem {
        call_id,
        name,
        arguments: std::mem::take(&mut p.args),
        seq: p.seq,
        fragments: p.fragments,
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::model::{Flow, Mapper};
    use serde_json::json;

    fn ev(v: serde_json::Value) -> ServerEvent {
        ServerEvent::parse(&v.to_string()).unwrap()
    }
    fn t(s: &str) -> ModelEvent {
        ModelEvent::Text {
            text: s.into(),
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
    fn run(events: Vec<serde_json::Value>) -> (Vec<ModelEvent>, bool) {
        let mut m = RealtimeMapper::new();
        let mut out = Vec::new();
        let mut ended = false;
        for e in events {
            ended = m.feed(ev(e), &mut out).unwrap() == Flow::End;
        }
        (out, ended && m.finish(&mut Vec::new()).is_ok())
    }
    fn added(id: &str, call: &str, args: &str, status: &str) -> serde_json::Value {
        json!({"type":"response.output_item.added","item":{"id":id,"type":"function_call","call_id":call,"name":"lookup","arguments":args,"status":status}})
    }

    #[test]
    fn realtime_mapper_table() {
        let done = json!({"type":"response.done","response":{"id":"r1","status":"completed"}});
        let cases: Vec<(&str, Vec<serde_json::Value>, Vec<ModelEvent>)> = vec![
            (
                "transcript, text and beta deltas are speech",
                vec![
                    json!({"type":"response.created","response":{"id":"r1"}}),
                    json!({"type":"response.output_audio_transcript.delta","item_id":"m","delta":"Hel"}),
                    json!({"type":"response.audio_transcript.delta","item_id":"m","delta":"lo "}),
                    json!({"type":"response.output_text.delta","item_id":"m","delta":"you"}),
                    json!({"type":"response.text.delta","item_id":"m","delta":"!"}),
                    json!({"type":"response.output_audio.delta","item_id":"m","delta":"AAAA"}),
                    done.clone(),
                ],
                vec![
                    ModelEvent::ResponseId("r1".into()),
                    t("Hel"),
                    t("lo "),
                    t("you"),
                    t("!"),
                    ModelEvent::Stop(StopReason::Done),
                ],
            ),
            (
                "a call runs once, at arguments.done, between the transcript's pieces",
                vec![
                    json!({"type":"response.output_audio_transcript.delta","delta":"Hi "}),
                    added("fc1", "c1", "", "in_progress"),
                    json!({"type":"response.function_call_arguments.delta","item_id":"fc1","call_id":"c1","delta":"{\"q\":"}),
                    json!({"type":"response.function_call_arguments.delta","item_id":"fc1","call_id":"c1","delta":"1}"}),
                    json!({"type":"response.function_call_arguments.done","item_id":"fc1","call_id":"c1","name":"lookup","arguments":"{\"q\":1}"}),
                    json!({"type":"response.output_audio_transcript.delta","delta":"there"}),
                    json!({"type":"response.output_item.done","item":{"id":"fc1","type":"function_call","call_id":"c1","name":"lookup","arguments":"{\"q\":1}","status":"completed"}}),
                    json!({"type":"response.done","response":{"status":"completed","output":[{"id":"fc1","type":"function_call","call_id":"c1","name":"lookup","arguments":"{\"q\":1}"}]}}),
                ],
                vec![
                    t("Hi "),
                    call("c1", "lookup", "{\"q\":1}", 0),
                    t("there"),
                    ModelEvent::Stop(StopReason::Done),
                ],
            ),
            (
                "complete arguments on added run there",
                vec![added("fc1", "c1", "{}", "completed"), done.clone()],
                vec![
                    call("c1", "lookup", "{}", 0),
                    ModelEvent::Stop(StopReason::Done),
                ],
            ),
            (
                "a call only response.done reports still runs",
                vec![
                    json!({"type":"response.done","response":{"status":"completed","output":[{"type":"message","id":"m"},{"id":"fc9","type":"function_call","call_id":"c9","name":"lookup","arguments":"{}"}]}}),
                ],
                vec![
                    call("c9", "lookup", "{}", 0),
                    ModelEvent::Stop(StopReason::Done),
                ],
            ),
            (
                "two parallel calls keep their order",
                vec![
                    added("a", "ca", "", "in_progress"),
                    added("b", "cb", "", "in_progress"),
                    json!({"type":"response.function_call_arguments.done","item_id":"b","call_id":"cb","name":"lookup","arguments":"{\"q\":2}"}),
                    json!({"type":"response.function_call_arguments.done","item_id":"a","call_id":"ca","name":"lookup","arguments":"{\"q\":1}"}),
                    done.clone(),
                ],
                vec![
                    call("cb", "lookup", "{\"q\":2}", 1),
                    call("ca", "lookup", "{\"q\":1}", 0),
                    ModelEvent::Stop(StopReason::Done),
                ],
            ),
            (
                "cancelled is stopped",
                vec![json!({"type":"response.done","response":{"status":"cancelled"}})],
                vec![ModelEvent::Stop(StopReason::Stopped)],
            ),
            (
                "failed keeps the server's words",
                vec![
                    json!({"type":"response.done","response":{"status":"failed","status_details":{"error":{"message":"overloaded"}}}}),
                ],
                vec![ModelEvent::Stop(StopReason::Error("overloaded".into()))],
            ),
            (
                "an error event ends the response in its words",
                vec![json!({"type":"error","error":{"message":"bad request"}})],
                vec![ModelEvent::Stop(StopReason::Error("bad request".into()))],
            ),
            (
                "unknown and ignored events map to nothing",
                vec![
                    json!({"type":"conversation.item.added","item":{}}),
                    json!({"type":"something.new","x":1}),
                    json!({"type":"input_audio_buffer.speech_started","item_id":"u"}),
                    done.clone(),
                ],
                vec![ModelEvent::Stop(StopReason::Done)],
            ),
        ];
        for (name, events, want) in cases {
            let (mut got, ended) = run(events);
            for g in got.iter_mut() {
                if let ModelEvent::Call(c) = g {
                    c.fragments = 0;
                }
            }
            assert_eq!(got, want, "{name}");
            assert!(ended, "{name}");
        }
    }

    #[test]
    fn a_response_without_its_end_is_lost() {
        let (out, ended) = run(vec![
            json!({"type":"response.output_text.delta","delta":"x"}),
        ]);
        assert_eq!(out, vec![t("x")]);
        assert!(!ended);
        let mut m = RealtimeMapper::new();
        let e = m.finish(&mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains(LOST), "{e}");
    }
}
