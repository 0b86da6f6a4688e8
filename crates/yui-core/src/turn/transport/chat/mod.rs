//! Chat Completions: its wire types ([`wire`]), its mapper ([`map`]) and its conversation
//! ([`ChatConversation`]: the message array, and what a round trip appends to it).

pub(crate) mod map;
pub mod wire;

use crate::tools::ToolOutput;
use crate::transcript::Entry;
use crate::turn::dispatch::{spoke, End, Round};
use crate::turn::error::BackendError;
use crate::turn::model::{Mapper, StopReason};
use crate::turn::request::{Backend, TurnDeps, TurnRequest, IMAGE_NOTE_MANY, IMAGE_NOTE_ONE};
use crate::turn::rounds::Conversation;
use crate::turn::sse::SseEvent;
use map::ChatMapper;
use serde_json::Value;
use wire as wchat;

/// The message array of a Chat Completions turn in flight.
/// Chat Completions, as the engine sees it: the recent transcript in each request, an
/// undeclared call the backend ran shows `done` when released.
pub(crate) const DESCRIPTOR: super::descriptor::Descriptor = super::descriptor::Descriptor {
    link: super::descriptor::Link::Requests,
    unregistered: crate::turn::dispatch::Unregistered::StatusDone,
    history: super::descriptor::History::Sent,
    sse_mapper: Some(mapper),
    not_found: None,
    probe: Some(probe),
};

/// A one-off conversation of `prompt` (the doctor's probes).
pub(crate) fn probe(
    b: &Backend,
    tools: Option<Value>,
    _names: Vec<String>,
    prompt: &str,
) -> Box<dyn Conversation> {
    Box::new(ChatConversation::on(
        b,
        None,
        tools,
        &[],
        prompt.to_string(),
    ))
}

fn mapper(_: &crate::tools::registry::ToolRegistry) -> Box<dyn Mapper<Frame = SseEvent>> {
    Box::new(ChatMapper::new())
}

pub(crate) struct ChatConversation {
    url: String,
    model: String,
    max_tokens: Option<u32>,
    temperature: Option<f64>,
    tools: Option<Value>,
    /// A call the first request asks for (the doctor's probes); round trips ask for none.
    tool_choice: Option<Value>,
    messages: Vec<wchat::Message>,
}

impl ChatConversation {
    pub fn new(req: &TurnRequest, tools: Option<Value>, history: &[Entry], user: String) -> Self {
        Self::on(
            &req.backend,
            req.instructions.as_deref(),
            tools,
            history,
            user,
        )
    }

    /// A conversation with `backend` from `history` and the user's words.
    pub fn on(
        backend: &Backend,
        instructions: Option<&str>,
        tools: Option<Value>,
        history: &[Entry],
        user: String,
    ) -> Self {
        let mut messages = Vec::with_capacity(history.len() + 2);
        if let Some(sys) = instructions {
            messages.push(wchat::Message::System {
                content: sys.to_string(),
            });
        }
        messages.extend(history.iter().map(history_message));
        messages.push(wchat::Message::User {
            content: wchat::UserContent::Text(user),
        });
        Self {
            url: backend.endpoint("chat/completions"),
            model: backend.model.clone(),
            max_tokens: backend.max_output_tokens,
            temperature: backend.temperature,
            tools,
            tool_choice: None,
            messages,
        }
    }
}

fn history_message(e: &Entry) -> wchat::Message {
    match e.role {
        crate::transcript::Role::User => wchat::Message::User {
            content: wchat::UserContent::Text(e.history_text().into_owned()),
        },
        crate::transcript::Role::Assistant => wchat::Message::Assistant {
            content: Some(e.text.clone()),
            tool_calls: Vec::new(),
        },
    }
}

impl Conversation for ChatConversation {
    fn url(&self) -> String {
        self.url.clone()
    }

    fn body(&self) -> Value {
        let r = wchat::Request {
            model: &self.model,
            stream: true,
            messages: &self.messages,
            tools: self.tools.as_ref(),
            tool_choice: self.tool_choice.as_ref(),
            max_tokens: self.max_tokens,
            temperature: self.temperature,
        };
        serde_json::to_value(r).unwrap_or(Value::Null)
    }

    fn mapper(&self) -> Box<dyn Mapper<Frame = SseEvent>> {
        Box::new(ChatMapper::new())
    }

    fn waited(&self, round: &Round) -> bool {
        round.stop == Some(StopReason::ToolCalls)
    }

    fn retry(&mut self, _: &TurnDeps, _: &BackendError) -> Result<bool, End> {
        Ok(false)
    }

    fn close(&mut self, _: &TurnDeps, _: &Round) -> Result<(), End> {
        Ok(())
    }

    fn force_tool(&mut self, name: Option<&str>) {
        self.tool_choice = name.map(wchat::tool_choice);
    }

    fn append(&mut self, round: Round) {
        self.tool_choice = None;
        let tool_calls = round
            .answered
            .iter()
            .map(|a| wchat::ToolCallOut {
                id: a.call_id.clone(),
                kind: "function",
                function: wchat::FunctionOut {
                    name: a.name.clone(),
                    arguments: a.arguments.clone(),
                },
            })
            .collect();
        let content = spoke(&round.text).then(|| round.text.clone());
        self.messages.push(wchat::Message::Assistant {
            content,
            tool_calls,
        });
        let mut images = Vec::new();
        for a in &round.answered {
            let content = match &a.result {
                ToolOutput::Text(t) => t.clone(),
                ToolOutput::Images { text, images: imgs } => {
                    images.extend(imgs.iter().map(|u| wchat::ImagePart::new(u)));
                    let note = if imgs.len() == 1 {
                        IMAGE_NOTE_ONE
                    } else {
                        IMAGE_NOTE_MANY
                    };
                    format!("{text}\n{note}")
                }
            };
            self.messages.push(wchat::Message::Tool {
                tool_call_id: a.call_id.clone(),
                content,
            });
        }
        if !images.is_empty() {
            self.messages.push(wchat::Message::User {
                content: wchat::UserContent::Images(images),
            });
        }
    }
}
