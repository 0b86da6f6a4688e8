//! The round-trip rules, written once for the request transports: when results go back, the
//! round-trip cap, the retries a refused request gets, and what each transport appends for the
//! next request ([`Conversation`]: Chat Completions messages, Responses input items and chain).

use super::chain;
use super::dispatch::{spoke, Answered, Dispatch, End, Round};
use super::endpoints;
use super::engine::{TurnDeps, TurnRequest, IMAGE_NOTE_MANY, IMAGE_NOTE_ONE};
use super::map_chat::ChatMapper;
use super::map_responses::ResponsesMapper;
use super::model::{Mapper, StopReason};
use super::read::{read, SseSource};
use super::sse::{self, BackendError, SseEvent, SseStream};
use super::wire::{chat as wchat, responses as wresp};
use super::MAX_TOOL_ROUND_TRIPS;
use crate::tools::ToolOutput;
use crate::transcript::Entry;
use serde_json::{json, Value};

/// Whether the results of one response go back to the model: a question tool ran, or only
/// cue-only tools ran and the model stopped to wait for them (no text, and on Chat Completions
/// `finish_reason: "tool_calls"`, which `waited` carries).
pub(crate) fn results_go_back(answered: &[Answered], text: &str, waited: bool) -> bool {
    answered.iter().any(|a| !a.one_way) || (!answered.is_empty() && !spoke(text) && waited)
}

/// What a request transport keeps between the requests of one turn.
pub(crate) trait Conversation: Send {
    fn url(&self) -> String;
    /// The next request's body.
    fn body(&self) -> Value;
    fn mapper(&self) -> Box<dyn Mapper<Frame = SseEvent>>;
    /// Whether the model stopped to wait for its calls' results.
    fn waited(&self, round: &Round) -> bool;
    /// A request the server refused: adjust and answer `true` to send it again (at most once).
    fn retry(&mut self, deps: &TurnDeps, err: &BackendError) -> Result<bool, End>;
    /// The turn ends on this response.
    fn close(&mut self, deps: &TurnDeps, round: &Round) -> Result<(), End>;
    /// Results go back: append this response's exchange for the next request.
    fn append(&mut self, round: Round);
}

/// Run a request turn: request, read, dispatch, and round trips while the rules say so.
pub(crate) async fn request_turn(
    d: &mut Dispatch<'_>,
    deps: &TurnDeps,
    req: &TurnRequest,
    conv: &mut dyn Conversation,
) -> Result<(), End> {
    let url = conv.url();
    let mut round_trips = 0;
    loop {
        let body = conv.body();
        let stream = match open(d, deps, req, &url, &body).await {
            Err(End::Backend(e)) if conv.retry(deps, &e)? => continue,
            r => r?,
        };
        let mut mapper = conv.mapper();
        let cancel = d.cancel;
        let mut round = read(d, cancel, &mut SseSource::new(stream), mapper.as_mut()).await?;
        if round.response_id.is_none() {
            // A server that sends no id on a later response: the turn's last id chains.
            round.response_id = d.response_id.clone();
        }
        if !results_go_back(&round.answered, &round.text, conv.waited(&round))
            || round_trips >= MAX_TOOL_ROUND_TRIPS
        {
            return conv.close(deps, &round);
        }
        round_trips += 1;
        conv.append(round);
    }
}

async fn open(
    d: &Dispatch<'_>,
    deps: &TurnDeps,
    req: &TurnRequest,
    url: &str,
    body: &Value,
) -> Result<SseStream, End> {
    let key = req.backend.api_key.as_deref();
    tokio::select! {
        biased;
        _ = d.cancel.cancelled() => Err(End::Stopped),
        r = sse::post_sse(&deps.http, url, key, body, &req.timeouts) => r.map_err(End::from),
    }
}

fn store_failed(what: &str) -> impl Fn(crate::error::CoreError) -> End + '_ {
    move |e| End::Failed(format!("{what}: {e}"))
}

// ------------------------------------------------------------------ Chat Completions

/// The message array of a Chat Completions turn in flight.
pub(crate) struct ChatConversation {
    url: String,
    model: String,
    max_tokens: Option<u32>,
    temperature: Option<f64>,
    tools: Option<Value>,
    messages: Vec<wchat::Message>,
}

impl ChatConversation {
    pub fn new(req: &TurnRequest, tools: Option<Value>, history: &[Entry], user: String) -> Self {
        let mut messages = Vec::with_capacity(history.len() + 2);
        if let Some(sys) = &req.instructions {
            messages.push(wchat::Message::System {
                content: sys.clone(),
            });
        }
        messages.extend(history.iter().map(history_message));
        messages.push(wchat::Message::User {
            content: wchat::UserContent::Text(user),
        });
        Self {
            url: req.backend.endpoint("chat/completions"),
            model: req.backend.model.clone(),
            max_tokens: req.backend.max_output_tokens,
            temperature: req.backend.temperature,
            tools,
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

    fn append(&mut self, round: Round) {
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

// ------------------------------------------------------------------ Responses

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
        let user = wresp::message_item("user", &user);
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
        input.push(user.clone());
        Ok(Self {
            url: req.backend.endpoint("responses"),
            base_url: req.backend.base_url.clone(),
            model: req.backend.model.clone(),
            preset_id: req.preset_id.clone(),
            instructions: req.instructions.clone(),
            max_output_tokens: req.backend.max_output_tokens,
            temperature: req.backend.temperature,
            tools,
            client_tools,
            input,
            pending_len,
            prev_id,
            chaining,
            retried: false,
            history,
            user,
        })
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

    fn append(&mut self, round: Round) {
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
