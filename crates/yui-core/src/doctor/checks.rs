//! The doctor's requests on one transport: a streamed plain reply, a `ping` tool call (asked
//! again without `tool_choice`, and unstreamed, to tell the failures apart) and the round trip
//! of ping's result. Every body is the transport's conversation's, every stream is read by the
//! turn's read loop (`probe`).

use super::*;
use crate::turn::rounds::Conversation;

impl Doctor<'_> {
    /// Send `conv`'s next request and read it as a turn does.
    pub(super) async fn stream(
        &self,
        conv: &dyn Conversation,
    ) -> Result<probe::Seen, BackendError> {
        let (timeouts, limit) = (self.timeouts(), self.limit());
        probe::stream(&self.http, self.key(), conv, &timeouts, limit).await
    }

    /// A streamed plain reply on `t`.
    pub(super) async fn plain(&mut self, name: &str, t: Transport) -> bool {
        if let Some(why) = self.blocked() {
            self.checks.push(skip(name, why));
            return false;
        }
        let conv = probe::conversation(self.b, t, probe::PLAIN_PROMPT, false, false);
        match self.stream(conv.as_ref()).await {
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
        let mut conv = probe::conversation(self.b, t, probe::TOOL_PROMPT, true, true);
        let mut res = self.stream(conv.as_ref()).await;
        // tool_choice "where supported": a server that refuses it is asked again without it.
        if let Err(BackendError::Http {
            status: 400 | 422, ..
        }) = &res
        {
            if self.blocked().is_none() {
                conv.force_tool(None);
                res = self.stream(conv.as_ref()).await;
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
        if let Some(call) = seen.calls.first().cloned() {
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
                lane.round = Some(seen.round);
                lane.conv = Some(conv);
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
        let unstreamed = probe::unstreamed_calls(
            &self.http,
            &conv.url(),
            self.key(),
            &conv.body(),
            self.limit(),
        )
        .await;
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

    /// Request 2: ping's result sent back on `t`, appended by the conversation the tool check
    /// used, exactly as a turn's round trip appends it; the server must take it and answer.
    pub(super) async fn round_trip(
        &mut self,
        t: Transport,
        conv: Option<Box<dyn Conversation>>,
        round: Option<crate::turn::dispatch::Round>,
    ) -> bool {
        if let Some(why) = self.blocked() {
            self.checks.push(skip(ROUND_TRIP, why));
            return false;
        }
        let (Some(mut conv), Some(round)) = (conv, round) else {
            self.checks.push(skip(
                ROUND_TRIP,
                "no tool call was delivered on the chosen transport",
            ));
            return false;
        };
        conv.append(round);
        match self.stream(conv.as_ref()).await {
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
