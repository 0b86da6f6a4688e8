//! Responses: its wire types ([`wire`]), its mapper ([`map`]) and its conversation
//! ([`ResponsesConversation`]: the input items, the stored chain, the stateless fallback, and
//! what a round trip appends).

pub(crate) mod map;
pub mod wire;

use crate::tools::ToolOutput;
use crate::transcript::Entry;
use crate::turn::chain;
use crate::turn::dispatch::{spoke, Answered, End, Round};
use crate::turn::endpoints;
use crate::turn::error::BackendError;
use crate::turn::model::Mapper;
use crate::turn::request::{Backend, TurnDeps, TurnRequest};
use crate::turn::rounds::{store_failed, Conversation};
use crate::turn::sse::SseEvent;
use map::ResponsesMapper;
use serde_json::{json, Value};
use wire as wresp;

/// Responses, as the engine sees it: an undeclared call the backend ran reports its own status;
/// a 404 means the server has no Responses API.
pub(crate) const DESCRIPTOR: super::descriptor::Descriptor = super::descriptor::Descriptor {
    link: super::descriptor::Link::Requests,
    unregistered: crate::turn::dispatch::Unregistered::Silent,
    history: super::descriptor::History::Sent,
    sse_mapper: Some(mapper),
    not_found: Some("does not offer the Responses API — choose Chat Completions as the transport"),
    probe: Some(probe),
};

/// A one-off conversation of `prompt` (the doctor's probes).
fn probe(
    b: &Backend,
    tools: Option<Value>,
    names: Vec<String>,
    prompt: &str,
) -> Box<dyn Conversation> {
    Box::new(ResponsesConversation::on(b, tools, names, prompt))
}

fn mapper(registry: &crate::tools::registry::ToolRegistry) -> Box<dyn Mapper<Frame = SseEvent>> {
    let names = registry.names().into_iter().map(str::to_string).collect();
    Box::new(ResponsesMapper::new(names))
}

fn responses_output(a: &Answered) -> Value {
    let output = match &a.result {
        ToolOutput::Text(t) => json!(t),
        ToolOutput::Images { text, images } => {
            let mut parts = vec![json!({"type": "input_text", "text": text})];
            parts.extend(
                images
                    .iter()
                    .map(|u| json!({"type": "input_image", "image_url": u, "detail": "auto"})),
            );
            Value::Array(parts)
        }
    };
    json!({"type": "function_call_output", "call_id": a.call_id, "output": output})
}

/// The input items and chain of a Responses turn in flight.
pub(crate) struct ResponsesConversation {
    url: String,
    base_url: String,
    model: String,
    preset_id: String,
    instructions: Option<String>,
    max_output_tokens: Option<u32>,
    temperature: Option<f64>,
    tools: Option<Value>,
    /// A call the first request asks for (the doctor's probes); round trips ask for none.
    tool_choice: Option<Value>,
    client_tools: Vec<String>,
    /// `[history or stored outputs…, user message, round trips…]`.
    input: Vec<Value>,
    /// How many leading items of `input` are the stored chain's outputs.
    pending_len: usize,
    prev_id: Option<String>,
    /// The endpoint chains on `previous_response_id` (else the input carries the history).
    chaining: bool,
    retried: bool,
    /// For a stateless request: the conversation rebuilt from the transcript.
    history: Vec<Value>,
    user: Value,
}

impl ResponsesConversation {
    pub fn new(
        deps: &TurnDeps,
        req: &TurnRequest,
        tools: Option<Value>,
        client_tools: Vec<String>,
        history: &[Entry],
        user: String,
    ) -> Result<Self, End> {
        let store = &deps.store;
        let chaining = endpoints::chains(store, &req.backend.base_url, &req.backend.model)
            .map_err(store_failed("the endpoint notes could not be read"))?;
        let history: Vec<Value> = history
            .iter()
            .map(|e| wresp::history_item(e.role, &e.history_text()))
            .collect();
        let mut conv = Self::on(&req.backend, tools, client_tools, &user);
        let stored = if chaining {
            chain::load(store, &req.preset_id)
                .map_err(store_failed("the response chain could not be read"))?
        } else {
            None
        };
        // A request with no previous_response_id is stateless: whatever the reason (the endpoint
        // refuses chaining, no chain yet, a reset), it carries the conversation rebuilt from the
        // transcript, under the same history budget as Chat Completions.
        let (prev_id, mut input, pending_len) = match stored {
            Some(c) => {
                let n = c.pending.len();
                (Some(c.response_id), c.pending, n)
            }
            None => (None, history.clone(), 0),
        };
        input.push(conv.user.clone());
        conv.preset_id = req.preset_id.clone();
        conv.instructions = req.instructions.clone();
        conv.input = input;
        conv.pending_len = pending_len;
        conv.prev_id = prev_id;
        conv.chaining = chaining;
        conv.history = history;
        Ok(conv)
    }

    /// A stateless conversation with `backend` from the user's words alone: no chain read or
    /// stored, no history (the doctor's probes).
    pub fn on(
        backend: &Backend,
        tools: Option<Value>,
        client_tools: Vec<String>,
        user: &str,
    ) -> Self {
        let user = wresp::message_item("user", user);
        Self {
            url: backend.endpoint("responses"),
            base_url: backend.base_url.clone(),
            model: backend.model.clone(),
            preset_id: String::new(),
            instructions: None,
            max_output_tokens: backend.max_output_tokens,
            temperature: backend.temperature,
            tools,
            tool_choice: None,
            client_tools,
            input: vec![user.clone()],
            pending_len: 0,
            prev_id: None,
            chaining: false,
            retried: false,
            history: Vec::new(),
            user,
        }
    }
}

/// A refusal that names `previous_response_id`: the server does not chain at all.
fn refuses_chaining(err: &BackendError) -> bool {
    matches!(err, BackendError::Http { status, body }
        if (400..500).contains(status) && *status != 404 && body.contains("previous_response_id"))
}

impl Conversation for ResponsesConversation {
    fn url(&self) -> String {
        self.url.clone()
    }

    fn body(&self) -> Value {
        let r = wresp::Request {
            model: &self.model,
            stream: true,
            input: &self.input,
            tools: self.tools.as_ref(),
            tool_choice: self.tool_choice.as_ref(),
            instructions: self.instructions.as_deref(),
            previous_response_id: self.prev_id.as_deref(),
            max_output_tokens: self.max_output_tokens,
            temperature: self.temperature,
        };
        serde_json::to_value(r).unwrap_or(Value::Null)
    }

    fn mapper(&self) -> Box<dyn Mapper<Frame = SseEvent>> {
        Box::new(ResponsesMapper::new(self.client_tools.clone()))
    }

    fn waited(&self, _: &Round) -> bool {
        // Responses has no finish_reason: a response with no text waited.
        true
    }

    fn retry(&mut self, deps: &TurnDeps, err: &BackendError) -> Result<bool, End> {
        if self.prev_id.is_none() || self.retried {
            return Ok(false);
        }
        let store = &deps.store;
        if err.status() == Some(404) {
            // The server forgot the stored id: reset the chain, retry once without it.
            tracing::info!(preset = %self.preset_id, "previous_response_id unknown (404): chain reset");
            chain::reset(store, &self.preset_id)
                .map_err(store_failed("the response chain could not be reset"))?;
        } else if refuses_chaining(err) {
            // The server never chains: note it, send the conversation from the transcript.
            tracing::info!(preset = %self.preset_id, error = %err, "the endpoint refuses previous_response_id: going stateless");
            chain::reset(store, &self.preset_id)
                .map_err(store_failed("the response chain could not be reset"))?;
            endpoints::note_no_chain(
                store,
                &self.base_url,
                &self.model,
                &err.to_string(),
                deps.clock.now(),
            )
            .map_err(store_failed("the endpoint note could not be stored"))?;
            self.chaining = false;
        } else {
            return Ok(false);
        }
        // Stateless now: the stored outputs go with the id, the transcript's conversation comes
        // in front of the user's message (and of any round trip already made).
        let rounds: Vec<Value> = self.input.drain(self.pending_len + 1..).collect();
        self.input = self.history.clone();
        self.input.push(self.user.clone());
        self.input.extend(rounds);
        self.retried = true;
        self.prev_id = None;
        self.pending_len = 0;
        Ok(true)
    }

    fn close(&mut self, deps: &TurnDeps, round: &Round) -> Result<(), End> {
        // The id of the turn's last response, with the outputs of the calls it left unanswered.
        let Some(id) = round.response_id.as_ref() else {
            return Ok(());
        };
        if !self.chaining {
            return Ok(());
        }
        let outputs: Vec<Value> = round.answered.iter().map(responses_output).collect();
        chain::save(&deps.store, &self.preset_id, id, &outputs, deps.clock.now())
            .map_err(store_failed("the response chain could not be stored"))
    }

    fn force_tool(&mut self, name: Option<&str>) {
        self.tool_choice = name.map(wresp::tool_choice);
    }

    fn append(&mut self, round: Round) {
        self.tool_choice = None;
        if spoke(&round.text) {
            self.input
                .push(wresp::message_item("assistant", &round.text));
        }
        // Reasoning items and the executed calls, in the order the response produced them.
        let mut items: Vec<(usize, Value)> = round.reasoning;
        items.extend(round.answered.iter().map(|a| {
            (
                a.seq,
                wresp::function_call_item(&a.call_id, &a.name, &a.arguments),
            )
        }));
        items.sort_by_key(|(seq, _)| *seq);
        self.input.extend(items.into_iter().map(|(_, v)| v));
        self.input
            .extend(round.answered.iter().map(responses_output));
    }
}
