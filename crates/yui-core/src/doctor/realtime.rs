//! The doctor of a realtime backend, run by the turn's own code: the session set up by the
//! realtime session client (`session.created`, `session.update` with a `ping` tool,
//! `session.updated`), a text reply and a tool call read through the realtime mapper and the one
//! read loop into the recording sink, and the round trip: ping's `function_call_output`, exactly
//! one `response.create`, and the reply that follows.

use super::probe::{
    ping_parameters, Recorder, Seen, PING, PING_DESCRIPTION, PLAIN_PROMPT, TOOL_PROMPT,
};
use super::*;
use crate::turn::dispatch::End;
use crate::turn::model::StopReason;
use crate::turn::read::read;
use crate::turn::transport::realtime::{
    self as rt, map::RealtimeMapper, wire, RealtimeClient, RealtimeConfig, RealtimeSettings, Setup,
    TurnDetection,
};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub const RT_SESSION: &str = "realtime_session";
pub const RT_TEXT: &str = "realtime_text";
pub const RT_TOOL: &str = "realtime_tool_call";

pub(super) async fn run(b: &Backend, opts: &Options) -> Report {
    let url = b.realtime_endpoint();
    let settings = RealtimeSettings {
        turn_detection: TurnDetection::PushToTalk,
        transcription_model: None,
        ..RealtimeSettings::default()
    };
    let tools = vec![crate::schema::realtime(
        PING,
        PING_DESCRIPTION,
        &ping_parameters(),
    )];
    let session = rt::session_with(tools, Some("This is a connection test."), &settings, false);
    let cfg = RealtimeConfig {
        url: url.clone(),
        api_key: b.api_key.clone(),
        connect: opts.timeouts.connect,
        ready: rt::setup::setup_deadline(&opts.timeouts),
        audio: None,
    };
    let t0 = Instant::now();
    let client = RealtimeClient::spawn(cfg, Arc::new(move || Ok(Setup::new(session.clone()))));
    let mut checks = Vec::new();
    let report =
        |checks: Vec<Check>, transport: Option<Transport>, cues: bool, summary: String| Report {
            checks,
            transport,
            cues,
            summary,
            target: format!("{url}, model \"{}\"", b.model),
        };
    let link = match client
        .open_turn(opts.timeouts.connect + rt::setup::setup_deadline(&opts.timeouts))
        .await
    {
        Ok(l) => l,
        Err(message) => {
            let e = BackendError::Connect {
                url: url.clone(),
                message,
            };
            tracing::warn!(error = %e, "doctor: no realtime session");
            let sentence = plain(&e, b);
            checks.push(fail(RT_SESSION, sentence.clone()));
            for n in [RT_TEXT, RT_TOOL, ROUND_TRIP] {
                checks.push(skip(n, "no realtime session"));
            }
            return report(
                checks,
                None,
                false,
                format!("the realtime server does not work. {sentence}"),
            );
        }
    };
    checks.push(pass(
        RT_SESSION,
        format!("session set up in {} ms", t0.elapsed().as_millis()),
    ));
    let mut source = rt::RealtimeSource::new(link, opts.timeouts.stall);
    let limit = opts.per_check;
    // A text reply.
    let text = ask(
        &mut source,
        limit,
        vec![wire::user_text(PLAIN_PROMPT), wire::response_create()],
    )
    .await;
    let text_ok = match &text {
        Ok(seen) if !seen.text.trim().is_empty() => {
            checks.push(pass(
                RT_TEXT,
                format!(
                    "replied \"{}\" in {} ms",
                    short(&seen.text),
                    seen.first_ms.unwrap_or(0)
                ),
            ));
            true
        }
        Ok(_) => {
            checks.push(fail(RT_TEXT, "the response ended without any text"));
            false
        }
        Err(e) => {
            checks.push(fail(RT_TEXT, plain(e, b)));
            false
        }
    };
    // A tool call, asked for by name.
    let force = json!({"type": "response.create", "response": {"tool_choice": {"type": "function", "name": PING}}});
    let tool = ask(
        &mut source,
        limit,
        vec![wire::user_text(TOOL_PROMPT), force],
    )
    .await;
    let round = match tool {
        Ok(seen) if seen.calls.iter().any(|c| c.name == PING) => {
            let c = &seen.calls[0];
            checks.push(pass(
                RT_TOOL,
                format!("ping was called with {}", short(&c.arguments)),
            ));
            Some(seen.round)
        }
        Ok(seen) if seen.calls.is_empty() => {
            checks.push(fail(
                RT_TOOL,
                format!(
                    "the model called no tool; it said \"{}\"",
                    short(&seen.text)
                ),
            ));
            None
        }
        Ok(seen) => {
            checks.push(fail(
                RT_TOOL,
                format!("the model called {} instead of ping", seen.calls[0].name),
            ));
            None
        }
        Err(e) => {
            checks.push(fail(RT_TOOL, plain(&e, b)));
            None
        }
    };
    // The round trip: ping's output and one response.create.
    let trip_ok = match round {
        None => {
            checks.push(skip(ROUND_TRIP, "no tool call was delivered"));
            false
        }
        Some(r) => match ask(&mut source, limit, rt::answers(&r.answered)).await {
            Ok(seen) => {
                checks.push(pass(
                    ROUND_TRIP,
                    format!(
                        "ping's result went back and the model answered \"{}\"",
                        short(&seen.text)
                    ),
                ));
                true
            }
            Err(e) => {
                checks.push(fail(ROUND_TRIP, plain(&e, b)));
                false
            }
        },
    };
    let cues = text_ok && trip_ok;
    let summary = match (text_ok, cues) {
        (true, true) => "use realtime; expression cues will work.".to_string(),
        (true, false) => {
            "use realtime; expression cues will not work: see the tool call lines above."
                .to_string()
        }
        _ => "the realtime server does not reply: see the lines above.".to_string(),
    };
    report(
        checks,
        text_ok.then_some(Transport::Realtime),
        cues,
        summary,
    )
}

/// Send `events`, then read the response they ask for.
async fn ask(
    source: &mut rt::RealtimeSource,
    limit: Duration,
    events: Vec<Value>,
) -> Result<Seen, BackendError> {
    for e in events {
        if !source.link.send(e).await {
            return Err(BackendError::Stream {
                message: rt::map::LOST.into(),
            });
        }
    }
    exchange(source, limit).await
}

/// Read one response as a turn does, into the recorder, within `limit`.
async fn exchange(source: &mut rt::RealtimeSource, limit: Duration) -> Result<Seen, BackendError> {
    let mut rec = Recorder::new();
    let cancel = CancellationToken::new();
    let mut mapper = RealtimeMapper::new();
    let read = read(&mut rec, &cancel, source, &mut mapper);
    let round = match tokio::time::timeout(limit, read).await {
        Err(_) => {
            return Err(BackendError::Stall {
                waited_ms: limit.as_millis() as u64,
            })
        }
        Ok(Err(End::Backend(e))) => return Err(e),
        Ok(Err(End::Stopped)) => {
            return Err(BackendError::Stream {
                message: "stopped".into(),
            })
        }
        Ok(Err(End::Failed(message))) => return Err(BackendError::Stream { message }),
        Ok(Ok(r)) => r,
    };
    if let Some(StopReason::Error(body)) = &round.stop {
        return Err(BackendError::Server { body: body.clone() });
    }
    rec.seen.round = round;
    Ok(rec.seen)
}
