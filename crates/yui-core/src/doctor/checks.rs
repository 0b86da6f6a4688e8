//! The doctor's requests on one transport: a streamed plain reply, a `ping` tool call (asked
//! again without `tool_choice`, and unstreamed, to tell the failures apart) and the round trip
//! of ping's result.

use super::*;

impl Doctor<'_> {
    pub(super) fn url(&self, t: Transport) -> String {
        match t {
            Transport::Responses => self.b.endpoint("responses"),
            _ => self.b.endpoint("chat/completions"),
        }
    }

    pub(super) fn body(&self, t: Transport, prompt: &str, tools: bool, choice: bool) -> Value {
        let mut body = match t {
            Transport::Responses => json!({
                "model": self.b.model, "stream": true,
                "input": [{"role": "user", "content": prompt}],
            }),
            _ => json!({
                "model": self.b.model, "stream": true,
                "messages": [{"role": "user", "content": prompt}],
            }),
        };
        if tools {
            body["tools"] = json!([self.ping_schema(t)]);
            if choice {
                body["tool_choice"] = match t {
                    Transport::Responses => json!({"type": "function", "name": probe::PING}),
                    _ => json!({"type": "function", "function": {"name": probe::PING}}),
                };
            }
        }
        crate::backend::Sampling {
            max_output_tokens: self.b.max_output_tokens,
            temperature: self.b.temperature,
        }
        .apply(t, &mut body);
        body
    }

    pub(super) fn ping_schema(&self, t: Transport) -> Value {
        match t {
            Transport::Responses => json!({
                "type": "function", "name": probe::PING,
                "description": probe::PING_DESCRIPTION, "parameters": probe::ping_parameters(),
            }),
            _ => crate::turn::wire::chat::tool_schema(
                probe::PING,
                probe::PING_DESCRIPTION,
                &probe::ping_parameters(),
            ),
        }
    }

    pub(super) async fn stream(
        &self,
        t: Transport,
        body: &Value,
    ) -> Result<probe::Seen, BackendError> {
        let (url, timeouts, limit) = (self.url(t), self.timeouts(), self.limit());
        match t {
            Transport::Responses => {
                probe::responses_stream(&self.http, &url, self.key(), body, &timeouts, limit).await
            }
            _ => probe::chat_stream(&self.http, &url, self.key(), body, &timeouts, limit).await,
        }
    }

    /// A streamed plain reply on `t`.
    pub(super) async fn plain(&mut self, name: &str, t: Transport) -> bool {
        if let Some(why) = self.blocked() {
            self.checks.push(skip(name, why));
            return false;
        }
        let body = self.body(t, probe::PLAIN_PROMPT, false, false);
        match self.stream(t, &body).await {
            Ok(seen) if !seen.text.trim().is_empty() => {
                self.checks.push(pass(
                    name,
                    format!(
                        "streamed {:?} in {} chunk(s), the first after {} ms",
                        short(&seen.text),
                        seen.text_chunks,
                        seen.first_ms.unwrap_or(0)
                    ),
                ));
                true
            }
            Ok(_) => {
                self.checks.push(fail(
                    name,
                    "the stream ended without any text — the model may need more max_output_tokens, or it does not stream",
                ));
                false
            }
            Err(e) => {
                let c = self.failed_on(name, &e, t);
                self.checks.push(c);
                false
            }
        }
    }

    /// A tool call on the lane's transport: streamed, then (if none) unstreamed.
    pub(super) async fn tool(&mut self, name: &str, lane: &mut Lane) {
        let t = lane.transport;
        if let Some(why) = self.blocked() {
            self.checks.push(skip(name, why));
            return;
        }
        let mut body = self.body(t, probe::TOOL_PROMPT, true, true);
        let mut res = self.stream(t, &body).await;
        // tool_choice "where supported": a server that refuses it is asked again without it.
        if let Err(BackendError::Http {
            status: 400 | 422, ..
        }) = &res
        {
            if self.blocked().is_none() {
                body = self.body(t, probe::TOOL_PROMPT, true, false);
                res = self.stream(t, &body).await;
            }
        }
        let seen = match res {
            Ok(s) => s,
            Err(e) => {
                lane.tools = if matches!(e, BackendError::Http { .. } | BackendError::Server { .. })
                {
                    Tools::Refused
                } else {
                    Tools::Unknown
                };
                let c = self.failed_on(name, &e, t);
                self.checks.push(c);
                return;
            }
        };
        lane.response_id = seen.response_id.clone();
        if let Some(call) = seen.calls.first() {
            let args_ok = call.arguments.trim().is_empty()
                || serde_json::from_str::<Value>(&call.arguments).is_ok();
            let pieces = match call.fragments {
                0 | 1 => "its arguments came in one piece".to_string(),
                n => format!("its arguments came in {n} fragments"),
            };
            let called = if call.name == probe::PING {
                format!("ping was called while streaming; {pieces}")
            } else {
                format!(
                    "a tool named {:?} was called instead of ping; {pieces}",
                    call.name
                )
            };
            if args_ok {
                lane.tools = Tools::Streamed;
                lane.call = Some(call.clone());
                self.checks.push(pass(name, called));
            } else {
                lane.tools = Tools::Refused;
                self.checks.push(fail(
                    name,
                    format!(
                        "{called}, but they are not JSON: {:?}",
                        short(&call.arguments)
                    ),
                ));
            }
            return;
        }
        // No call while streaming: does the model call tools at all?
        if self.blocked().is_some() {
            lane.tools = Tools::NoCall;
            self.checks.push(fail(
                name,
                "the model answered in text and did not call the ping tool",
            ));
            return;
        }
        let url = self.url(t);
        let unstreamed =
            probe::unstreamed_calls(&self.http, &url, self.key(), &body, self.limit()).await;
        match unstreamed {
            Ok(n) if n > 0 => {
                lane.tools = Tools::OnlyUnstreamed;
                self.checks.push(fail(
                    name,
                    "ping is called only without streaming; YUI streams, so expression cues would not arrive",
                ));
            }
            other => {
                if let Err(BackendError::Stall { .. }) = other {
                    self.stalls += 1;
                }
                lane.tools = Tools::NoCall;
                self.checks.push(fail(
                    name,
                    format!(
                        "the model answered in text ({:?}) and did not call the ping tool: it does not call tools",
                        short(&seen.text)
                    ),
                ));
            }
        }
    }

    /// Request 2: ping's result sent back on `t`; the server must take it and answer.
    pub(super) async fn round_trip(
        &mut self,
        t: Transport,
        call: Option<probe::Call>,
        response_id: Option<String>,
    ) -> bool {
        if let Some(why) = self.blocked() {
            self.checks.push(skip(ROUND_TRIP, why));
            return false;
        }
        let call = call.unwrap_or_default();
        let call_id = if call.call_id.is_empty() {
            "call_0".to_string()
        } else {
            call.call_id.clone()
        };
        let args = if call.arguments.trim().is_empty() {
            "{}".to_string()
        } else {
            call.arguments.clone()
        };
        let mut body = self.body(t, probe::TOOL_PROMPT, true, false);
        match t {
            Transport::Responses => {
                let output = json!({"type": "function_call_output", "call_id": call_id, "output": probe::PONG});
                match response_id {
                    Some(id) => {
                        body["previous_response_id"] = json!(id);
                        body["input"] = json!([output]);
                    }
                    None => {
                        body["input"] = json!([
                            {"role": "user", "content": probe::TOOL_PROMPT},
                            {"type": "function_call", "call_id": call_id, "name": call.name, "arguments": args},
                            output,
                        ]);
                    }
                }
            }
            _ => {
                body["messages"] = json!([
                    {"role": "user", "content": probe::TOOL_PROMPT},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": call_id, "type": "function", "function": {"name": call.name, "arguments": args}}
                    ]},
                    {"role": "tool", "tool_call_id": call_id, "content": probe::PONG},
                ]);
            }
        }
        match self.stream(t, &body).await {
            Ok(seen) => {
                let said = if seen.text.trim().is_empty() {
                    "with no text".to_string()
                } else {
                    format!("with {:?}", short(&seen.text))
                };
                self.checks.push(pass(
                    ROUND_TRIP,
                    format!(
                        "the server took ping's result on {} and answered {said}",
                        t.as_str()
                    ),
                ));
                true
            }
            Err(e) => {
                let c = self.failed_on(ROUND_TRIP, &e, t);
                self.checks.push(c);
                false
            }
        }
    }
}
