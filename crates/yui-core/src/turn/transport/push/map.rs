//! Push frames of one turn → [`ModelEvent`]s. Pure and table-tested: a segment becomes its text
//! cut at each cue's `at` (Unicode code points), with the cue between the pieces, so each cue
//! plays when the text reaches it. The turn's end (`turn_end`, an `error` frame) is a typed
//! [`StopReason`]; a connection that closes before it is a lost connection.

use super::wire::{arguments_text, SegmentCue, ServerFrame};
use crate::events::Cue;
use crate::turn::model::{CallItem, ModelEvent, StopReason};
use crate::turn::transport::socket::{SocketMap, SocketMapper};

/// What a push turn whose connection closed before its end fails with.
pub const LOST: &str = "the connection to the push backend was lost";

/// Maps one turn's frames.
pub(crate) type PushMapper = SocketMapper<PushMap>;

/// One turn's frames, as [`SocketMapper`] feeds them.
#[derive(Default)]
pub(crate) struct PushMap {
    calls: usize,
}

impl SocketMap for PushMap {
    type Frame = ServerFrame;
    const LOST: &'static str = LOST;

    fn parse(text: &str) -> Option<ServerFrame> {
        ServerFrame::parse(text).ok()
    }

    /// Map one frame of this turn. `Some` when the frame ends the turn (and why).
    fn map(&mut self, frame: ServerFrame, out: &mut Vec<ModelEvent>) -> Option<StopReason> {
        match frame {
            ServerFrame::Segment {
                kind, text, cues, ..
            } => {
                segment(kind != "render", &text, cues, out);
                None
            }
            ServerFrame::ToolCall {
                call_id,
                name,
                arguments,
                ..
            } => {
                out.push(ModelEvent::Call(CallItem {
                    call_id,
                    name,
                    arguments: arguments_text(&arguments),
                    seq: self.calls,
                    fragments: 1,
                }));
                self.calls += 1;
                None
            }
            ServerFrame::ToolStatus { name, status, .. } => {
                out.push(ModelEvent::BackendTool {
                    call_id: None,
                    name,
                    status,
                });
                None
            }
            ServerFrame::TurnEnd { status, error, .. } => Some(match status.as_str() {
                "ok" => StopReason::Done,
                "stopped" => StopReason::Stopped,
                _ => StopReason::Error(
                    error
                        .filter(|e| !e.trim().is_empty())
                        .unwrap_or_else(|| format!("the push backend ended the turn {status:?}")),
                ),
            }),
            ServerFrame::Error { message } => Some(StopReason::Error(message)),
            ServerFrame::Welcome { .. } | ServerFrame::Ping | ServerFrame::Unknown => None,
        }
    }
}

fn segment(spoken: bool, text: &str, mut cues: Vec<SegmentCue>, out: &mut Vec<ModelEvent>) {
    // Stable: cues at the same point keep the server's order.
    cues.sort_by_key(|c| c.at);
    let mut rest = text;
    let mut pos: u64 = 0;
    for c in cues {
        if c.at > pos {
            let want = (c.at - pos) as usize;
            let cut = rest
                .char_indices()
                .nth(want)
                .map(|(i, _)| i)
                .unwrap_or(rest.len());
            let (piece, tail) = rest.split_at(cut);
            if !piece.is_empty() {
                out.push(ModelEvent::Text {
                    text: piece.to_string(),
                    spoken,
                });
            }
            pos += piece.chars().count() as u64;
            rest = tail;
        }
        out.push(ModelEvent::Cue(Cue {
            emotion_id: c.emotion_id,
            motion_id: c.motion_id,
            emotion_text: c.emotion_text,
            caption: c.caption,
        }));
    }
    if !rest.is_empty() {
        out.push(ModelEvent::Text {
            text: rest.to_string(),
            spoken,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::model::{Flow, Mapper};
    use serde_json::json;

    fn frame(v: serde_json::Value) -> ServerFrame {
        ServerFrame::parse(&v.to_string()).unwrap()
    }
    fn t(s: &str) -> ModelEvent {
        ModelEvent::Text {
            text: s.into(),
            spoken: true,
        }
    }
    fn cue(e: &str) -> ModelEvent {
        ModelEvent::Cue(Cue {
            emotion_id: Some(e.into()),
            ..Cue::default()
        })
    }

    #[test]
    fn push_mapper_table() {
        let cases: Vec<(&str, serde_json::Value, Vec<ModelEvent>, Option<StopReason>)> = vec![
            (
                "cues cut the text at code points",
                json!({"type":"segment","turn_id":"t","kind":"speech","text":"héllo wörld","cues":[{"at":6,"emotion_id":"b"},{"at":0,"emotion_id":"a"}]}),
                vec![cue("a"), t("héllo "), cue("b"), t("wörld")],
                None,
            ),
            (
                "a cue past the end plays after the text",
                json!({"type":"segment","turn_id":"t","kind":"speech","text":"hi","cues":[{"at":99,"emotion_id":"x"}]}),
                vec![t("hi"), cue("x")],
                None,
            ),
            (
                "render is shown, not spoken",
                json!({"type":"segment","turn_id":"t","kind":"render","text":"*waves*"}),
                vec![ModelEvent::Text {
                    text: "*waves*".into(),
                    spoken: false,
                }],
                None,
            ),
            (
                "arguments as an object",
                json!({"type":"tool_call","turn_id":"t","call_id":"c1","name":"look","arguments":{"at":"body"}}),
                vec![ModelEvent::Call(CallItem {
                    call_id: "c1".into(),
                    name: "look".into(),
                    arguments: r#"{"at":"body"}"#.into(),
                    seq: 0,
                    fragments: 1,
                })],
                None,
            ),
            (
                "arguments as a string",
                json!({"type":"tool_call","turn_id":"t","call_id":"c1","name":"look","arguments":"{\"at\":\"body\"}"}),
                vec![ModelEvent::Call(CallItem {
                    call_id: "c1".into(),
                    name: "look".into(),
                    arguments: r#"{"at":"body"}"#.into(),
                    seq: 0,
                    fragments: 1,
                })],
                None,
            ),
            (
                "backend tool status",
                json!({"type":"tool_status","turn_id":"t","name":"web","status":"running"}),
                vec![ModelEvent::BackendTool {
                    call_id: None,
                    name: "web".into(),
                    status: "running".into(),
                }],
                None,
            ),
            (
                "turn_end ok",
                json!({"type":"turn_end","turn_id":"t","status":"ok"}),
                vec![],
                Some(StopReason::Done),
            ),
            (
                "turn_end error keeps the server's words",
                json!({"type":"turn_end","turn_id":"t","status":"error","error":"model overloaded"}),
                vec![],
                Some(StopReason::Error("model overloaded".into())),
            ),
            (
                "unknown fields are ignored",
                json!({"type":"turn_end","turn_id":"t","status":"stopped","extra":1}),
                vec![],
                Some(StopReason::Stopped),
            ),
        ];
        for (name, f, want, end) in cases {
            let mut m = PushMapper::new();
            let mut out = Vec::new();
            let flow = m.feed(frame(f), &mut out).unwrap();
            let got_end = match out.last() {
                Some(ModelEvent::Stop(r)) => Some(r.clone()),
                _ => None,
            };
            if got_end.is_some() {
                out.pop();
            }
            assert_eq!(out, want, "{name}");
            assert_eq!(got_end, end, "{name}");
            assert_eq!(flow == Flow::End, end.is_some(), "{name}");
            assert_eq!(
                m.finish(&mut out).is_ok(),
                end.is_some(),
                "{name}: a turn without its end is lost"
            );
        }
    }

    #[test]
    fn segments_parse_the_same_by_the_fast_path_and_the_enum() {
        let v = json!({"type":"segment","turn_id":"t","kind":"render","text":"hé","cues":[{"at":1,"caption":"soft"}],"extra":1});
        let slow: ServerFrame = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(frame(v), slow);
        assert!(
            ServerFrame::parse(r#"{"type":"segment"}"#).is_err(),
            "turn_id is required"
        );
    }

    #[test]
    fn unknown_frame_types_parse_as_unknown() {
        assert_eq!(
            frame(json!({"type":"telemetry","x":1})),
            ServerFrame::Unknown
        );
    }
}
