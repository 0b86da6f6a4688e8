//! `yui doctor` and "Test connection" in Settings → Backend: what works with this backend, in
//! order, one plain line each, and a summary — which transport to use and whether expression
//! cues will arrive (they need tool calls delivered while streaming).
//!
//! The checks: reachable; auth accepted; the model exists (`GET /models`); a streamed plain reply
//! on Chat Completions, then on Responses; a tool call on each (a tiny `ping` tool, `tool_choice`
//! where the server takes it) and whether its arguments came in fragments — a model that calls
//! no tool is asked again unstreamed, to tell "cannot call tools" from "calls tools only without
//! streaming"; the round trip (request 2: ping's result sent back) on the chosen transport.
//!
//! Bounded: every request has short timeouts, the whole run a deadline ([`Options::total`], 55 s
//! by default), and after two stalls the remaining checks are not run.

mod checks;
mod configured;
mod probe;
mod realtime;
mod report;

pub use configured::{run_configured, Overrides};
pub use report::{label, Check, Report};

use crate::backend::Transport;
use crate::turn::error::BackendError;
use crate::turn::sse::Timeouts;
use crate::turn::transport::{descriptor, Link};
use crate::turn::wording::{plain, TOOL_MODELS, WHERE};
use crate::turn::Backend;
use serde::Serialize;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Check names, in order (the `name` field of `--json`).
pub const REACHABLE: &str = "reachable";
pub const AUTH: &str = "auth";
pub const MODEL: &str = "model";
pub const CHAT_STREAM: &str = "chat_completions_stream";
pub const RESPONSES_STREAM: &str = "responses_stream";
pub const CHAT_TOOL: &str = "chat_completions_tool_call";
pub const RESPONSES_TOOL: &str = "responses_tool_call";
pub const ROUND_TRIP: &str = "round_trip";
pub use realtime::{RT_SESSION, RT_TEXT, RT_TOOL};

/// How long the doctor may wait.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Per request: connect, response headers, silence mid-body.
    pub timeouts: Timeouts,
    /// One request's whole stream.
    pub per_check: Duration,
    /// The whole run.
    pub total: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            timeouts: Timeouts {
                connect: Duration::from_secs(3),
                headers: Duration::from_secs(10),
                stall: Duration::from_secs(10),
            },
            per_check: Duration::from_secs(15),
            total: Duration::from_secs(55),
        }
    }
}

/// Run every check against `backend` (its transport is the one preferred). A realtime backend
/// gets the realtime checks (a session, a text reply, a tool call and its round trip).
pub async fn run(backend: &Backend, opts: &Options) -> Report {
    if descriptor(backend.transport).link == Link::Session {
        return realtime::run(backend, opts).await;
    }
    let http = match crate::turn::sse::http_client(&opts.timeouts) {
        Ok(h) => h,
        Err(e) => {
            return Report {
                checks: vec![{
                    tracing::warn!(error = %e, "doctor: no HTTP client");
                    fail(REACHABLE, "YUI could not start its HTTP client")
                }],
                transport: None,
                cues: false,
                summary: "YUI could not start its HTTP client.".into(),
                target: target(backend),
            }
        }
    };
    let mut d = Doctor {
        http,
        b: backend,
        opts,
        deadline: Instant::now() + opts.total,
        stalls: 0,
        checks: Vec::new(),
        first_problem: None,
    };
    d.run().await
}

fn target(b: &Backend) -> String {
    format!("{}, model \"{}\"", b.base_url, b.model)
}

fn pass(name: &str, detail: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        ok: true,
        detail: detail.into(),
        skipped: false,
    }
}

fn fail(name: &str, detail: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        ok: false,
        detail: detail.into(),
        skipped: false,
    }
}

fn skip(name: &str, why: &str) -> Check {
    Check {
        name: name.into(),
        ok: false,
        detail: format!("not checked: {why}"),
        skipped: true,
    }
}

/// What a tool check found, for the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tools {
    Streamed,
    OnlyUnstreamed,
    NoCall,
    Refused,
    Unknown,
}

struct Lane {
    transport: Transport,
    /// Its checks' names.
    stream_check: &'static str,
    tool_check: &'static str,
    plain_ok: bool,
    tools: Tools,
    /// The tool check's conversation and its response, for the round trip.
    conv: Option<Box<dyn crate::turn::rounds::Conversation>>,
    round: Option<crate::turn::dispatch::Round>,
}

struct Doctor<'a> {
    http: reqwest::Client,
    b: &'a Backend,
    opts: &'a Options,
    deadline: Instant,
    stalls: usize,
    checks: Vec<Check>,
    /// The plain sentence of the first failure, for the summary.
    first_problem: Option<String>,
}

impl Doctor<'_> {
    fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Why the next network check is not run, if it is not.
    fn blocked(&self) -> Option<&'static str> {
        if self.stalls >= 2 {
            Some("the server stalled twice already")
        } else if self.remaining() < Duration::from_millis(500) {
            Some("the time limit was reached")
        } else {
            None
        }
    }

    fn timeouts(&self) -> Timeouts {
        let r = self.remaining();
        Timeouts {
            connect: self.opts.timeouts.connect.min(r),
            headers: self.opts.timeouts.headers.min(r),
            stall: self.opts.timeouts.stall.min(r),
        }
    }

    fn limit(&self) -> Duration {
        self.opts.per_check.min(self.remaining())
    }

    fn key(&self) -> Option<&str> {
        self.b.api_key.as_deref()
    }

    /// An error as a failed check's detail: the plain sentence, then the evidence.
    fn failed(&mut self, name: &str, e: &BackendError) -> Check {
        self.failed_on(name, e, self.b.transport)
    }

    /// The same, for a request on transport `t` (the sentence names that transport's problem).
    fn failed_on(&mut self, name: &str, e: &BackendError, t: Transport) -> Check {
        if matches!(e, BackendError::Stall { .. }) {
            self.stalls += 1;
        }
        // Plain words in the report; the technical chain ("Connection refused (os error
        // 111)", the status and body) goes to the log.
        tracing::warn!(check = name, error = %e, "doctor: check failed");
        let mut b = self.b.clone();
        b.transport = t;
        let sentence = plain(e, &b);
        self.first_problem.get_or_insert_with(|| sentence.clone());
        fail(name, sentence)
    }

    async fn run(&mut self) -> Report {
        let go_on = self.models().await;
        // The request transports, each checked the same way; the configured one is preferred.
        let mut lanes = [
            Lane::new(Transport::ChatCompletions, CHAT_STREAM, CHAT_TOOL),
            Lane::new(Transport::Responses, RESPONSES_STREAM, RESPONSES_TOOL),
        ];
        match go_on {
            Err(why) => {
                let names = lanes.iter().flat_map(|l| [l.stream_check, l.tool_check]);
                let mut names: Vec<&str> = names.collect();
                names.sort_by_key(|n| ![CHAT_STREAM, RESPONSES_STREAM].contains(n));
                for n in names.into_iter().chain([ROUND_TRIP]) {
                    self.checks.push(skip(n, why));
                }
            }
            Ok(()) => {
                for l in lanes.iter_mut() {
                    l.plain_ok = self.plain(l.stream_check, l.transport).await;
                }
                for l in lanes.iter_mut() {
                    self.tool(l.tool_check, l).await;
                }
            }
        }
        let mut order: Vec<usize> = (0..lanes.len()).collect();
        order.sort_by_key(|i| lanes[*i].transport != self.b.transport);
        let chosen = order
            .iter()
            .copied()
            .find(|i| lanes[*i].plain_ok && lanes[*i].tools == Tools::Streamed)
            .or_else(|| order.iter().copied().find(|i| lanes[*i].plain_ok));
        let transport = chosen.map(|i| lanes[i].transport);
        let chosen_tools = chosen.map(|i| lanes[i].tools);
        let round_trip_ok = match (chosen, chosen_tools) {
            (Some(i), Some(Tools::Streamed)) if go_on.is_ok() => {
                let l = &mut lanes[i];
                let (t, conv, round) = (l.transport, l.conv.take(), l.round.take());
                self.round_trip(t, conv, round).await
            }
            (Some(_), _) => {
                self.checks.push(skip(
                    ROUND_TRIP,
                    "no tool call was delivered on the chosen transport",
                ));
                false
            }
            (None, _) if go_on.is_ok() => {
                self.checks
                    .push(skip(ROUND_TRIP, "no transport streamed a reply"));
                false
            }
            (None, _) => false,
        };
        let cues = chosen_tools == Some(Tools::Streamed) && round_trip_ok;
        let summary = self.summary(transport, chosen_tools, round_trip_ok);
        Report {
            checks: std::mem::take(&mut self.checks),
            transport,
            cues,
            summary,
            target: target(self.b),
        }
    }

    /// Reachable, auth and model, from `GET /models`. `Err` says why nothing else can run.
    async fn models(&mut self) -> Result<(), &'static str> {
        let t0 = Instant::now();
        let limit = self.opts.timeouts.headers.min(self.remaining());
        let listed =
            crate::discover::list_models(&self.http, &self.b.base_url, self.key(), limit).await;
        let ms = t0.elapsed().as_millis();
        let model = &self.b.model;
        match listed {
            Err(e @ BackendError::Connect { .. }) => {
                let c = self.failed(REACHABLE, &e);
                self.checks.push(c);
                self.checks.push(skip(AUTH, "the server is not reachable"));
                self.checks.push(skip(MODEL, "the server is not reachable"));
                Err("the server is not reachable")
            }
            Err(e @ BackendError::Stall { .. }) => {
                let c = self.failed(REACHABLE, &e);
                self.checks.push(c);
                self.checks.push(skip(AUTH, "/models did not answer"));
                self.checks.push(skip(MODEL, "/models did not answer"));
                Ok(())
            }
            Err(
                e @ BackendError::Http {
                    status: 401 | 403, ..
                },
            ) => {
                let status = e.status().unwrap_or(0);
                self.checks.push(pass(
                    REACHABLE,
                    format!("the server answered in {ms} ms (HTTP {status} on /models)"),
                ));
                let c = self.failed(AUTH, &e);
                self.checks.push(c);
                self.checks.push(skip(MODEL, "the key was refused"));
                Err("the key was refused")
            }
            Err(e) => {
                tracing::warn!(error = %e, "doctor: the model list could not be read");
                self.checks
                    .push(pass(REACHABLE, format!("the server answered in {ms} ms")));
                self.checks.push(pass(
                    AUTH,
                    "not refused (the model list could not be read; the next requests tell)",
                ));
                self.checks
                    .push(skip(MODEL, "the server gives no model list"));
                Ok(())
            }
            Ok(models) => {
                self.checks.push(pass(
                    REACHABLE,
                    format!(
                        "the server answered /models in {ms} ms with {} model(s)",
                        models.len()
                    ),
                ));
                self.checks.push(pass(
                    AUTH,
                    if self.key().is_some() {
                        "the server accepted the API key"
                    } else {
                        "the server needs no API key"
                    },
                ));
                if models.iter().any(|m| m == model) {
                    self.checks
                        .push(pass(MODEL, format!("the server offers \"{model}\"")));
                } else if models.is_empty() {
                    self.checks.push(fail(
                        MODEL,
                        "the server offers no model at all — load or pull one first",
                    ));
                } else {
                    let shown: Vec<&str> = models.iter().take(8).map(String::as_str).collect();
                    let more = if models.len() > 8 { ", …" } else { "" };
                    self.checks.push(fail(
                        MODEL,
                        format!(
                            "the server has no model \"{model}\"; it offers: {}{more} — pick one in {WHERE}",
                            shown.join(", ")
                        ),
                    ));
                }
                Ok(())
            }
        }
    }

    fn summary(
        &self,
        transport: Option<Transport>,
        tools: Option<Tools>,
        round_trip: bool,
    ) -> String {
        let Some(t) = transport else {
            let first = self
                .first_problem
                .clone()
                .or_else(|| {
                    self.checks
                        .iter()
                        .find(|c| !c.ok && !c.skipped)
                        .map(|c| c.detail.clone())
                })
                .unwrap_or_else(|| "nothing answered".into());
            return format!("no transport works with this server. {first}");
        };
        let switch = if t != self.b.transport {
            format!(" (set Transport to {} in {WHERE})", t.as_str())
        } else {
            String::new()
        };
        let use_it = format!("use {}{switch}", t.as_str());
        match tools.unwrap_or(Tools::Unknown) {
            Tools::Streamed if round_trip => format!("{use_it}; expression cues will work."),
            Tools::Streamed => format!(
                "{use_it}; expression cues will not work: the server refused the tool result (request 2) — try the other transport or another server."
            ),
            Tools::OnlyUnstreamed => format!(
                "{use_it}; expression cues will not work: this server delivers tool calls only without streaming — choose another server or model (llama.cpp: start llama-server with --jinja)."
            ),
            Tools::NoCall | Tools::Refused => format!(
                "{use_it}; expression cues will not work: this model does not call tools — choose a tool-capable model such as {TOOL_MODELS} in {WHERE}."
            ),
            Tools::Unknown => format!(
                "{use_it}; expression cues will not work: no tool call arrived — see the tool call lines above."
            ),
        }
    }
}

impl Lane {
    fn new(transport: Transport, stream_check: &'static str, tool_check: &'static str) -> Self {
        Self {
            transport,
            stream_check,
            tool_check,
            plain_ok: false,
            tools: Tools::Unknown,
            conv: None,
            round: None,
        }
    }
}

/// At most 60 characters of a model's text, for a detail.
fn short(s: &str) -> String {
    let s = s.trim();
    let mut out: String = s.chars().take(60).collect();
    if s.chars().count() > 60 {
        out.push('…');
    }
    out
}
