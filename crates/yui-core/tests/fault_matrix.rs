//! The fault matrix (issue 14): one table of backend faults run on each request transport
//! against the test kit's scripted server on 127.0.0.1. Every case ends by itself within its
//! bound, with the plain-words result the user sees, and the transcript intact: the user's
//! message stored, and no half reply that would go back as history.

use crate::turn_support;

use std::time::{Duration, Instant};
use turn_support::*;
use yui_core::backend::Transport;
use yui_core::turn::{Timeouts, TurnStatus};

/// How a case must end.
enum End {
    /// Status ok with this reply text.
    Ok(&'static str),
    /// Status error whose plain-words error starts with this.
    Error(&'static str),
}

struct Case {
    name: &'static str,
    /// The server's replies, per transport; `None`: nothing listens at the address.
    replies: fn(Transport) -> Option<Vec<Reply>>,
    end: End,
    /// Requests the server must have read.
    requests: usize,
    bound: Duration,
}

fn say(t: Transport, text: &str) -> Reply {
    match t {
        Transport::Responses => responses_say("resp_1", text),
        _ => chat_say(text),
    }
}

/// A reply's SSE body as one string (for dripping it byte by byte).
fn body(t: Transport, text: &str) -> String {
    let Reply::Sse(parts) = say(t, text) else {
        unreachable!()
    };
    parts
        .into_iter()
        .map(|p| match p {
            Part::Raw(s) => s,
            _ => String::new(),
        })
        .collect()
}

const CUT: &str = "The model's reply was cut off in the middle";
const UNREADABLE: &str = "The model server sent a reply I can't read";
const STOPPED: &str = "The model stopped answering (nothing for 1 s)";
const TOO_LONG: &str = "The model server sent a";

fn cases() -> Vec<Case> {
    let s = Duration::from_secs;
    vec![
        Case {
            name: "connection refused",
            replies: |_| None,
            end: End::Error("I can't reach the model at 127.0.0.1:"),
            requests: 0,
            bound: s(3),
        },
        Case {
            name: "dropped before headers (twice)",
            replies: |_| Some(vec![Reply::Close, Reply::Close]),
            end: End::Error("I can't reach the model at 127.0.0.1:"),
            requests: 2,
            bound: s(3),
        },
        Case {
            name: "a kept-alive connection closed between requests is sent again once",
            replies: |t| Some(vec![Reply::Close, say(t, "hello")]),
            end: End::Ok("hello"),
            requests: 2,
            bound: s(3),
        },
        Case {
            name: "dropped mid-stream",
            replies: |t| {
                let mut b = body(t, "hello there");
                b.truncate(b.len() * 2 / 3);
                Some(vec![Reply::Sse(vec![Part::Raw(b)])])
            },
            end: End::Error(CUT),
            requests: 1,
            bound: s(3),
        },
        Case {
            name: "500 with a body",
            replies: |_| {
                Some(vec![Reply::Status(
                    500,
                    r#"{"error":{"message":"model crashed"}}"#.into(),
                )])
            },
            end: End::Error("The model server failed (HTTP 500: model crashed)"),
            requests: 1,
            bound: s(3),
        },
        Case {
            name: "404",
            replies: |_| Some(vec![Reply::Status(404, r#"{"error":"not found"}"#.into())]),
            end: End::Error("The server at 127.0.0.1:"),
            requests: 1,
            bound: s(3),
        },
        Case {
            name: "a bad JSON line",
            replies: |_| Some(vec![Reply::Sse(vec![raw("data: {not json\n\n")])]),
            end: End::Error(UNREADABLE),
            requests: 1,
            bound: s(3),
        },
        Case {
            name: "stall before headers",
            replies: |_| Some(vec![Reply::Hang]),
            end: End::Error(STOPPED),
            requests: 1,
            bound: s(4),
        },
        Case {
            name: "stall mid-stream",
            replies: |t| {
                let first = match t {
                    Transport::Responses => vec![r_created("resp_1"), r_text("Hel"), Part::Hold],
                    _ => vec![c_text("Hel"), Part::Hold],
                };
                Some(vec![Reply::Sse(first)])
            },
            end: End::Error(STOPPED),
            requests: 1,
            bound: s(4),
        },
        Case {
            name: "a slow drip (1 byte / 100 ms for the first 20 bytes)",
            replies: |t| {
                let b = body(t, "ok");
                let mut parts = Vec::new();
                for c in b[..20].chars() {
                    parts.push(Part::Raw(c.to_string()));
                    parts.push(Part::Sleep(Duration::from_millis(100)));
                }
                parts.push(Part::Raw(b[20..].to_string()));
                Some(vec![Reply::Sse(parts)])
            },
            end: End::Ok("ok"),
            requests: 1,
            bound: s(6),
        },
        Case {
            name: "a 10 MB line",
            replies: |_| {
                let line = format!("data: {}", "x".repeat(10 * 1024 * 1024));
                Some(vec![Reply::Sse(vec![Part::Raw(line)])])
            },
            end: End::Error(TOO_LONG),
            requests: 1,
            bound: s(10),
        },
        Case {
            name: "a never-ending stream (comments, never an event)",
            replies: |_| {
                let chunk = format!(": {}\n\n", "k".repeat(64 * 1024));
                let parts = (0..600).map(|_| Part::Raw(chunk.clone())).collect();
                Some(vec![Reply::Sse(parts)])
            },
            end: End::Error(TOO_LONG),
            requests: 1,
            bound: s(20),
        },
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_ends_bounded_with_plain_words_and_the_transcript_intact() {
    let mut failures = Vec::new();
    for transport in [Transport::ChatCompletions, Transport::Responses] {
        for case in cases() {
            let label = format!("{transport:?} / {}", case.name);
            let h = Harness::new();
            let (reg, _, _) = express_and_lookup();
            let (srv, base_url) = match (case.replies)(transport) {
                Some(replies) => {
                    let srv = ScriptServer::start(replies).await;
                    let url = srv.base_url.clone();
                    (Some(srv), url)
                }
                None => {
                    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                    let url = format!("http://{}/v1", l.local_addr().unwrap());
                    drop(l);
                    (None, url)
                }
            };
            let mut req = h.request(&base_url, transport, "hi");
            req.timeouts = Timeouts {
                connect: Duration::from_secs(2),
                headers: Duration::from_secs(1),
                stall: Duration::from_secs(1),
            };
            let started = Instant::now();
            let (_events, out) = h.run(&req, &reg).await;
            let took = started.elapsed();
            let mut problems = Vec::new();
            match case.end {
                End::Ok(text) => {
                    if (out.status, out.text.as_str()) != (TurnStatus::Ok, text) {
                        problems.push(format!(
                            "ended {:?} {:?} {:?}",
                            out.status, out.text, out.error
                        ));
                    }
                }
                End::Error(prefix) => {
                    let err = out.error.clone().unwrap_or_default();
                    if out.status != TurnStatus::Error || err.is_empty() || !err.starts_with(prefix)
                    {
                        problems.push(format!("ended {:?} with {err:?}", out.status));
                    }
                    // Plain words: no library's error text reaches the user.
                    for raw in ["reqwest", "hyper", "error sending request", "EventStream"] {
                        if err.contains(raw) {
                            problems.push(format!("raw error text in {err:?}"));
                        }
                    }
                }
            }
            if took > case.bound {
                problems.push(format!("took {took:?} (bound {:?})", case.bound));
            }
            // The user's message is stored first; no half reply goes back as history.
            let history = h.history();
            let want_history: Vec<(String, String)> = match case.end {
                End::Ok(text) => vec![
                    ("user".into(), "hi".into()),
                    ("assistant".into(), text.into()),
                ],
                End::Error(_) => vec![("user".into(), "hi".into())],
            };
            if history != want_history {
                problems.push(format!("history {history:?}"));
            }
            if let Some(srv) = &srv {
                let n = srv.seen().len();
                if n != case.requests {
                    problems.push(format!("{n} requests, want {}", case.requests));
                }
            }
            if !problems.is_empty() {
                failures.push(format!("{label}: {}", problems.join("; ")));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
