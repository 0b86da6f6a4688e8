//! The requests `yui doctor` makes, made by the turn's own code: the transport's conversation
//! builds every body (the first request, and the round trip with ping's result), the one read
//! loop reads each stream through the transport's mapper, and a recording sink ([`Recorder`])
//! keeps what the stream delivered (text, calls, their fragments) where a turn would dispatch.
//! "Test connection" thus tests exactly the code a turn runs.

use crate::backend::{Backend, Transport};
use crate::tools::ToolOutput;
use crate::turn::dispatch::{Answered, End, Round};
use crate::turn::error::{evidence, BackendError};
use crate::turn::model::ModelEvent;
use crate::turn::read::{read, Sink, SseSource};
use crate::turn::rounds::Conversation;
use crate::turn::sse::{self, Timeouts};
use crate::turn::transport::{chat, descriptor};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The tool every tool check declares.
pub const PING: &str = "ping";
pub const PING_DESCRIPTION: &str = "Answer a connection test. Call it once with any word.";
/// What the round trip sends back as ping's result.
pub const PONG: &str = "pong";

pub fn ping_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {"word": {"type": "string", "description": "any word"}},
        "required": ["word"]
    })
}

pub const PLAIN_PROMPT: &str = "This is a connection test. Reply with the single word OK.";
pub const TOOL_PROMPT: &str =
    "This is a connection test. Call the ping tool with the word \"hello\". Do not write anything else.";

/// One call as a stream delivered it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Call {
    pub name: String,
    pub arguments: String,
    /// Non-empty argument pieces the stream carried (1 = in one piece).
    pub fragments: usize,
}

/// What one streamed response delivered.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    pub text: String,
    pub text_chunks: usize,
    pub calls: Vec<Call>,
    /// Milliseconds from the request to the first thing the model did.
    pub first_ms: Option<u64>,
    /// The response as the conversation takes it back for a round trip (each call answered
    /// with [`PONG`]).
    pub round: Round,
}

/// The conversation of one probe on `t`: the prompt as the user's words, and with `ping` the
/// ping tool declared (and asked for, where `force`).
pub(crate) fn conversation(
    b: &Backend,
    t: Transport,
    prompt: &str,
    ping: bool,
    force: bool,
) -> Box<dyn Conversation> {
    let params = ping_parameters();
    // The doctor probes request transports only; anything else is probed as Chat Completions.
    let make = descriptor(t).probe.unwrap_or(chat::probe);
    let schema = t.tool_schema().unwrap_or(crate::schema::chat);
    let tools = ping.then(|| json!([schema(PING, PING_DESCRIPTION, &params)]));
    let mut conv = make(b, tools, vec![PING.to_string()], prompt);
    conv.force_tool((ping && force).then_some(PING));
    conv
}

/// A recording sink: what a turn's dispatch would show and run, kept instead.
pub(crate) struct Recorder {
    pub seen: Seen,
    t0: Instant,
}

impl Recorder {
    pub fn new() -> Self {
        Self {
            seen: Seen::default(),
            t0: Instant::now(),
        }
    }
}

impl Sink for Recorder {
    async fn apply(&mut self, ev: ModelEvent, round: &mut Round) -> Result<(), End> {
        if self.seen.first_ms.is_none() {
            self.seen.first_ms = Some(self.t0.elapsed().as_millis() as u64);
        }
        match ev {
            ModelEvent::Text { text, spoken: true } if !text.is_empty() => {
                self.seen.text.push_str(&text);
                self.seen.text_chunks += 1;
                round.text.push_str(&text);
            }
            ModelEvent::Call(c) => {
                self.seen.calls.push(Call {
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                    fragments: c.fragments,
                });
                round.answered.push(Answered {
                    call_id: c.call_id,
                    name: c.name,
                    arguments: c.arguments,
                    result: ToolOutput::text(PONG),
                    one_way: false,
                    seq: c.seq,
                });
            }
            ModelEvent::ResponseId(id) => round.response_id = Some(id),
            ModelEvent::Reasoning { seq, item } => round.reasoning.push((seq, item)),
            ModelEvent::Stop(r) => round.stop = Some(r),
            ModelEvent::Text { .. } | ModelEvent::Cue(_) | ModelEvent::BackendTool { .. } => {}
        }
        Ok(())
    }
}

/// Send the conversation's next request and read its stream as a turn does, bounded by
/// `limit` overall (a server that trickles forever ends too).
pub(crate) async fn stream(
    http: &reqwest::Client,
    key: Option<&str>,
    conv: &dyn Conversation,
    t: &Timeouts,
    limit: Duration,
) -> Result<Seen, BackendError> {
    let t0 = Instant::now();
    let exchange = async {
        let body = conv.body();
        let stream = sse::post_sse(http, &conv.url(), key, &body, t).await?;
        let mut rec = Recorder {
            seen: Seen::default(),
            t0,
        };
        let cancel = CancellationToken::new();
        let mut mapper = conv.mapper();
        let round = read(
            &mut rec,
            &cancel,
            &mut SseSource::new(stream),
            mapper.as_mut(),
        )
        .await
        .map_err(|e| match e {
            End::Backend(b) => b,
            End::Stopped => BackendError::Stream {
                message: "stopped".into(),
            },
            End::Failed(message) => BackendError::Stream { message },
        })?;
        rec.seen.round = round;
        Ok(rec.seen)
    };
    match tokio::time::timeout(limit, exchange).await {
        Ok(r) => r,
        Err(_) => Err(BackendError::Stall {
            waited_ms: limit.as_millis() as u64,
        }),
    }
}

fn parse(data: &str) -> Result<Value, BackendError> {
    serde_json::from_str(data).map_err(|e| BackendError::Parse {
        line: evidence(data),
        message: e.to_string(),
    })
}

/// The same request unstreamed (`stream: false`): the calls in the JSON answer, for telling a
/// model that cannot call tools from a server that only delivers calls without streaming.
pub async fn unstreamed_calls(
    http: &reqwest::Client,
    url: &str,
    key: Option<&str>,
    body: &Value,
    limit: Duration,
) -> Result<usize, BackendError> {
    let mut body = body.clone();
    body["stream"] = json!(false);
    let mut req = http.post(url).json(&body);
    if let Some(k) = key.filter(|k| !k.is_empty()) {
        req = req.bearer_auth(k);
    }
    let answer = async {
        let resp = req.send().await.map_err(|e| BackendError::Connect {
            url: url.to_string(),
            message: sse::error_chain(&e),
        })?;
        let status = resp.status().as_u16();
        let text = resp.text().await.map_err(|e| BackendError::Stream {
            message: sse::error_chain(&e),
        })?;
        if !(200..300).contains(&status) {
            return Err(BackendError::Http {
                status,
                body: evidence(text.trim()),
            });
        }
        parse(&text)
    };
    let v = match tokio::time::timeout(limit, answer).await {
        Ok(r) => r?,
        Err(_) => {
            return Err(BackendError::Stall {
                waited_ms: limit.as_millis() as u64,
            })
        }
    };
    let chat = v
        .pointer("/choices/0/message/tool_calls")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let resp = v.get("output").and_then(Value::as_array).map_or(0, |o| {
        o.iter()
            .filter(|i| i.get("type").and_then(Value::as_str) == Some("function_call"))
            .count()
    });
    Ok(chat + resp)
}
