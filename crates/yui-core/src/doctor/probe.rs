//! The requests `yui doctor` makes, read with the turn's own streaming client
//! ([`crate::turn::sse::post_sse`]): what each stream delivered (text, calls, fragments).

use crate::turn::sse::{self, evidence, BackendError, SseStream, Timeouts};
use crate::turn::wire::chat as wchat;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

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
pub struct Call {
    /// Responses: the item id (or `#<output_index>`) the argument events name.
    pub key: String,
    pub call_id: String,
    pub name: String,
    pub arguments: String,
    /// Non-empty argument pieces the stream carried (1 = in one piece).
    pub fragments: usize,
}

/// What one streamed response delivered.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    pub text: String,
    pub text_chunks: usize,
    pub calls: Vec<Call>,
    pub response_id: Option<String>,
    /// Milliseconds from the request to the first event.
    pub first_ms: Option<u64>,
}

/// Read a whole stream, bounded by `limit` overall (a server that trickles forever ends too).
async fn read_all(
    mut stream: SseStream,
    limit: Duration,
    t0: Instant,
    mut on: impl FnMut(&str, &mut Seen) -> Result<bool, BackendError>,
) -> Result<Seen, BackendError> {
    let mut seen = Seen::default();
    let read = async {
        while let Some(ev) = stream.next().await {
            let ev = ev?;
            if seen.first_ms.is_none() {
                seen.first_ms = Some(t0.elapsed().as_millis() as u64);
            }
            if ev.event == "error" {
                return Err(BackendError::Server {
                    body: evidence(&ev.data),
                });
            }
            let data = ev.data.trim();
            if data == "[DONE]" {
                break;
            }
            if data.is_empty() {
                continue;
            }
            if !on(data, &mut seen)? {
                break;
            }
        }
        Ok(())
    };
    match tokio::time::timeout(limit, read).await {
        Ok(Ok(())) => Ok(seen),
        Ok(Err(e)) => Err(e),
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

/// POST a streamed Chat Completions body and read it.
pub async fn chat_stream(
    http: &reqwest::Client,
    url: &str,
    key: Option<&str>,
    body: &Value,
    t: &Timeouts,
    limit: Duration,
) -> Result<Seen, BackendError> {
    let t0 = Instant::now();
    let stream = sse::post_sse(http, url, key, body, t).await?;
    read_all(stream, limit, t0, |data, seen| {
        let chunk: wchat::Chunk = serde_json::from_str(data).map_err(|e| BackendError::Parse {
            line: evidence(data),
            message: e.to_string(),
        })?;
        if let Some(err) = chunk.error {
            return Err(BackendError::Server {
                body: evidence(&err.to_string()),
            });
        }
        for choice in chunk
            .choices
            .into_iter()
            .filter(|c| c.index.unwrap_or(0) == 0)
        {
            let Some(delta) = choice.delta else { continue };
            if let Some(c) = delta.content.filter(|c| !c.is_empty()) {
                seen.text.push_str(&c);
                seen.text_chunks += 1;
            }
            for tc in delta.tool_calls.into_iter().flatten() {
                let idx = tc.index.unwrap_or(seen.calls.len().saturating_sub(1));
                while seen.calls.len() <= idx.min(15) {
                    seen.calls.push(Call::default());
                }
                let call = &mut seen.calls[idx.min(15)];
                if let Some(id) = tc.id.filter(|i| !i.is_empty()) {
                    call.call_id = id;
                }
                if let Some(f) = tc.function {
                    if let Some(n) = f.name.filter(|n| !n.is_empty()) {
                        if call.name != n {
                            call.name.push_str(&n);
                        }
                    }
                    if let Some(a) = f.arguments.filter(|a| !a.is_empty()) {
                        call.arguments.push_str(&a);
                        call.fragments += 1;
                    }
                }
            }
        }
        Ok(true)
    })
    .await
}

/// POST a streamed Responses body and read it.
pub async fn responses_stream(
    http: &reqwest::Client,
    url: &str,
    key: Option<&str>,
    body: &Value,
    t: &Timeouts,
    limit: Duration,
) -> Result<Seen, BackendError> {
    let t0 = Instant::now();
    let stream = sse::post_sse(http, url, key, body, t).await?;
    read_all(stream, limit, t0, |data, seen| {
        let v = parse(data)?;
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        let item_key = |v: &Value| {
            v.get("item_id")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| v.get("output_index").map(|i| format!("#{i}")))
        };
        match kind {
            "response.output_text.delta" => {
                if let Some(d) = v
                    .get("delta")
                    .and_then(Value::as_str)
                    .filter(|d| !d.is_empty())
                {
                    seen.text.push_str(d);
                    seen.text_chunks += 1;
                }
            }
            "response.created" | "response.in_progress" => {
                if let Some(id) = v.pointer("/response/id").and_then(Value::as_str) {
                    seen.response_id = Some(id.to_string());
                }
            }
            "response.output_item.added" | "response.output_item.done" => {
                if let Some(item) = v.get("item") {
                    resp_item(seen, item, v.get("output_index"));
                }
            }
            "response.function_call_arguments.delta" => {
                let key = item_key(&v);
                let d = v.get("delta").and_then(Value::as_str).unwrap_or("");
                if !d.is_empty() {
                    let call = resp_call(seen, key.as_deref());
                    call.arguments.push_str(d);
                    call.fragments += 1;
                }
            }
            "response.function_call_arguments.done" => {
                let key = item_key(&v);
                if let Some(a) = v.get("arguments").and_then(Value::as_str) {
                    let call = resp_call(seen, key.as_deref());
                    if call.fragments == 0 && !a.is_empty() {
                        call.fragments = 1;
                    }
                    call.arguments = a.to_string();
                }
            }
            "response.completed" | "response.incomplete" => {
                if let Some(id) = v.pointer("/response/id").and_then(Value::as_str) {
                    seen.response_id = Some(id.to_string());
                }
                for item in v
                    .pointer("/response/output")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    resp_item(seen, item, None);
                }
                return Ok(false);
            }
            "response.failed" | "error" => {
                let body = v
                    .pointer("/response/error")
                    .or_else(|| v.get("error"))
                    .unwrap_or(&v)
                    .to_string();
                return Err(BackendError::Server {
                    body: evidence(&body),
                });
            }
            _ => {}
        }
        Ok(true)
    })
    .await
    .map(|mut s| {
        s.calls
            .retain(|c| !c.name.is_empty() || !c.arguments.is_empty());
        s
    })
}

/// The call tracked under an item key (`fc_1` or `#0`); created on first sight.
fn resp_call<'s>(seen: &'s mut Seen, key: Option<&str>) -> &'s mut Call {
    let key = key.unwrap_or("").to_string();
    match seen.calls.iter().position(|c| c.key == key) {
        Some(p) => &mut seen.calls[p],
        None => {
            seen.calls.push(Call {
                key,
                ..Call::default()
            });
            seen.calls.last_mut().expect("just pushed")
        }
    }
}

fn resp_item(seen: &mut Seen, item: &Value, output_index: Option<&Value>) {
    if item.get("type").and_then(Value::as_str) != Some("function_call") {
        return;
    }
    let s = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
    let id = s("id");
    let call_id = s("call_id");
    let oi = output_index.map(|i| format!("#{i}"));
    let pos = seen.calls.iter().position(|c| {
        Some(&c.key) == id.as_ref()
            || Some(&c.key) == oi.as_ref()
            || (!c.call_id.is_empty() && Some(&c.call_id) == call_id.as_ref())
    });
    let call = match pos {
        Some(p) => &mut seen.calls[p],
        None => {
            seen.calls.push(Call {
                key: id.clone().or(oi).unwrap_or_default(),
                ..Call::default()
            });
            seen.calls.last_mut().expect("just pushed")
        }
    };
    if let Some(c) = call_id {
        call.call_id = c;
    }
    if let Some(n) = s("name") {
        call.name = n;
    }
    if let Some(a) = s("arguments").filter(|a| !a.is_empty()) {
        if call.arguments.is_empty() {
            call.arguments = a;
            call.fragments = call.fragments.max(1);
        }
    }
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
