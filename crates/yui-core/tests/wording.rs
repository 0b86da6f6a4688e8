//! Errors in plain words: every backend failure a user can meet, as the exact sentence the bubble
//! and `turn_end` show (turn/wording.rs), and the 429 retry of the streaming client (sse.rs).

use crate::turn_support;
use crate::turn_support::backends;

use std::time::{Duration, Instant};
use turn_support::*;
use yui_core::backend::Transport;
use yui_core::turn::wording::plain;
use yui_core::turn::{Backend, BackendError, TurnStatus};

fn backend(base_url: &str, transport: Transport, key: Option<&str>) -> Backend {
    Backend {
        model: "llama3.2".into(),
        api_key: key.map(str::to_string),
        ..backends::backend(transport, base_url)
    }
}

fn connect(url: &str, message: &str) -> BackendError {
    BackendError::Connect {
        url: url.into(),
        message: message.into(),
    }
}

fn http(status: u16, body: &str) -> BackendError {
    BackendError::Http {
        status,
        body: body.into(),
    }
}

const REFUSED: &str = "error sending request for url (http://127.0.0.1:11434/v1/chat/completions): client error (Connect): tcp connect error: Connection refused (os error 111)";

#[test]
fn every_failure_maps_to_one_exact_sentence() {
    let ollama = backend(
        "http://127.0.0.1:11434/v1",
        Transport::ChatCompletions,
        None,
    );
    let keyed = backend(
        "https://api.example.com/v1",
        Transport::ChatCompletions,
        Some("sk-x"),
    );
    let resp = backend("http://127.0.0.1:8080/v1", Transport::Responses, None);
    let cases: Vec<(BackendError, Backend, &str)> = vec![
        // Nothing listening, on each known local port and elsewhere.
        (connect("", REFUSED), ollama.clone(),
         "I can't reach the model at 127.0.0.1:11434 — is Ollama running? Settings → Backend"),
        (connect("", "tcp connect error: Connection refused (os error 111)"),
         backend("http://localhost:1234/v1", Transport::ChatCompletions, None),
         "I can't reach the model at localhost:1234 — is LM Studio running? Settings → Backend"),
        (connect("", "Connection refused"), resp.clone(),
         "I can't reach the model at 127.0.0.1:8080 — is llama.cpp's llama-server running? Settings → Backend"),
        (connect("", "Connection refused"),
         backend("http://127.0.0.1:8000/v1", Transport::ChatCompletions, None),
         "I can't reach the model at 127.0.0.1:8000 — is vLLM running? Settings → Backend"),
        (connect("", "Connection refused"),
         backend("http://127.0.0.1:1337/v1", Transport::ChatCompletions, None),
         "I can't reach the model at 127.0.0.1:1337 — is Jan running? Settings → Backend"),
        (connect("", "Connection refused"),
         backend("http://192.168.1.20:9999/v1", Transport::ChatCompletions, None),
         "I can't reach the model at 192.168.1.20:9999 — is the model server running, and is the address right? Settings → Backend"),
        // DNS.
        (connect("", "error sending request for url (https://api.exmple.com/v1/chat/completions): client error (Connect): dns error: failed to lookup address information: Name or service not known"),
         backend("https://api.exmple.com/v1", Transport::ChatCompletions, None),
         "I can't find the server api.exmple.com — check the address. Settings → Backend"),
        // TLS.
        (connect("", "client error (Connect): invalid peer certificate: UnknownIssuer"), keyed.clone(),
         "I can't open a secure connection to api.example.com — check the certificate, or whether the address should start with http:// instead of https://. Settings → Backend"),
        // Connect timeout.
        (connect("", "client error (Connect): operation timed out"), keyed.clone(),
         "The model at api.example.com does not answer — is the server running, and is the address right? Settings → Backend"),
        // Keys.
        (http(401, r#"{"error":{"message":"Incorrect API key provided"}}"#), keyed.clone(),
         "The model server at api.example.com did not accept the API key — store the right one. Settings → Backend"),
        (http(401, "Unauthorized"), ollama.clone(),
         "The model server at 127.0.0.1:11434 wants an API key — store one. Settings → Backend"),
        (http(403, "forbidden"), keyed.clone(),
         "The model server at api.example.com refused this API key (HTTP 403) — check the key and what it may use. Settings → Backend"),
        // 404: the model, the Responses API, the path.
        (http(404, r#"{"error":{"message":"model \"llama3.2\" not found, try pulling it first","type":"api_error"}}"#), ollama.clone(),
         "The model server has no model \"llama3.2\" — pick one it offers. Settings → Backend"),
        (http(404, "Not Found"), resp.clone(),
         "The server at 127.0.0.1:8080 does not offer the Responses API — choose Chat Completions as the transport. Settings → Backend"),
        (http(404, "404 page not found"), ollama.clone(),
         "The server at 127.0.0.1:11434 has no chat endpoint — check that the base URL ends in /v1. Settings → Backend"),
        // 429.
        (BackendError::RateLimited { retry_after_s: Some(30), body: "slow down".into() }, keyed.clone(),
         "The model server is rate-limiting me — try again in 30 s."),
        (BackendError::RateLimited { retry_after_s: Some(300), body: String::new() }, keyed.clone(),
         "The model server is rate-limiting me — try again in 5 min."),
        (BackendError::RateLimited { retry_after_s: None, body: String::new() }, keyed.clone(),
         "The model server is rate-limiting me — wait a moment, then try again."),
        // 5xx with the server's own message.
        (http(500, r#"{"error":{"message":"CUDA out of memory.","type":"server_error"}}"#), ollama.clone(),
         "The model server failed (HTTP 500: CUDA out of memory) — try again; if it keeps failing, look at the server's log."),
        (http(503, r#"{"error":"Loading model"}"#), ollama.clone(),
         "The model server failed (HTTP 503: Loading model) — try again; if it keeps failing, look at the server's log."),
        (http(502, ""), ollama.clone(),
         "The model server failed (HTTP 502) — try again; if it keeps failing, look at the server's log."),
        // Other 4xx.
        (http(400, r#"{"error":{"message":"messages: field required"}}"#), ollama.clone(),
         "The model server refused the request (HTTP 400: messages: field required) — check the model and the transport. Settings → Backend"),
        // Stall, cut, broken, unreadable.
        (BackendError::Stall { waited_ms: 60_000 }, ollama.clone(),
         "The model stopped answering (nothing for 60 s) — it may still be loading; try again, or pick a smaller model. Settings → Backend"),
        (BackendError::Cut { partial: "data: {\"choi".into() }, ollama.clone(),
         "The model's reply was cut off in the middle — try again; if it keeps happening, look at the model server's log."),
        (BackendError::Stream { message: "connection reset by peer".into() }, ollama.clone(),
         "The connection to the model broke during the reply — try again."),
        (BackendError::Parse { line: "<html>".into(), message: "expected value".into() }, ollama.clone(),
         "The model server sent a reply I can't read — is it OpenAI-compatible, and is the transport right? Settings → Backend"),
        (BackendError::Server { body: r#"{"message":"context length exceeded"}"#.into() }, ollama.clone(),
         "The model server reported an error: context length exceeded — try again; if it keeps failing, look at the server's log."),
        // A model that cannot call tools (Ollama, vLLM, llama.cpp without --jinja).
        (http(400, r#"{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error"}}"#), ollama.clone(),
         "The model \"llama3.2\" can't call tools, which I need for expressions — choose a tool-capable model such as qwen2.5, llama3.1 or mistral-nemo. Settings → Backend"),
        (http(400, r#"{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError"}"#),
         backend("http://127.0.0.1:8000/v1", Transport::ChatCompletions, None),
         "The model \"llama3.2\" can't call tools, which I need for expressions — choose a tool-capable model such as qwen2.5, llama3.1 or mistral-nemo. Settings → Backend"),
        (http(500, r#"{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}"#), resp.clone(),
         "llama-server can't use tools without --jinja, so I can't show expressions — restart it with --jinja, or choose another model. Settings → Backend"),
        (BackendError::Server { body: r#"{"message":"this model does not support tools"}"#.into() }, ollama.clone(),
         "The model \"llama3.2\" can't call tools, which I need for expressions — choose a tool-capable model such as qwen2.5, llama3.1 or mistral-nemo. Settings → Backend"),
    ];
    for (err, b, want) in &cases {
        assert_eq!(plain(err, b), *want, "for {err:?}");
    }
}

#[test]
fn a_long_server_message_is_cut_to_one_short_line() {
    let long = format!(
        r#"{{"error":{{"message":"{}\nsecond line"}}}}"#,
        "x".repeat(500)
    );
    let b = backend(
        "http://127.0.0.1:11434/v1",
        Transport::ChatCompletions,
        None,
    );
    let s = plain(&http(500, &long), &b);
    assert_eq!(
        s,
        format!(
            "The model server failed (HTTP 500: {}…) — try again; if it keeps failing, look at the server's log.",
            "x".repeat(160)
        )
    );
}

/// A real refused connection through a real turn: the bubble's sentence, exactly.
#[tokio::test]
async fn a_dead_local_port_says_what_to_start() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h
        .run(
            &h.request(
                &format!("http://127.0.0.1:{port}/v1"),
                Transport::ChatCompletions,
                "hi",
            ),
            &reg,
        )
        .await;
    assert_eq!(out.status, TurnStatus::Error);
    assert_eq!(
        out.error.unwrap(),
        format!("I can't reach the model at 127.0.0.1:{port} — is the model server running, and is the address right? Settings → Backend")
    );
}

/// https:// to a plain-HTTP server: a TLS failure, in plain words.
#[tokio::test]
async fn https_to_a_plain_server_is_a_tls_sentence() {
    // A plain HTTP server answers the TLS hello with an HTTP error at once, as real ones do.
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}/v1", l.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = l.accept().await {
            use tokio::io::AsyncWriteExt;
            let _ = sock
                .write_all(
                    b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )
                .await;
            let _ = sock.shutdown().await;
        }
    });
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h
        .run(&h.request(&url, Transport::ChatCompletions, "hi"), &reg)
        .await;
    let hp = url
        .trim_start_matches("https://")
        .trim_end_matches("/v1")
        .to_string();
    assert_eq!(
        out.error.unwrap(),
        format!("I can't open a secure connection to {hp} — check the certificate, or whether the address should start with http:// instead of https://. Settings → Backend")
    );
}

fn too_many(retry_after: &str) -> Reply {
    Reply::StatusHeaders(
        429,
        format!("Retry-After: {retry_after}\r\n"),
        r#"{"error":{"message":"rate limited"}}"#.into(),
    )
}

#[tokio::test]
async fn a_short_retry_after_is_waited_once_then_the_turn_goes_on() {
    let srv = ScriptServer::start(vec![too_many("1"), chat_say("Hello again.")]).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let t0 = Instant::now();
    let (_, out) = h
        .run(
            &h.request(&srv.base_url, Transport::ChatCompletions, "hi"),
            &reg,
        )
        .await;
    assert!(
        t0.elapsed() >= Duration::from_millis(950),
        "waited Retry-After"
    );
    assert_eq!(out.status, TurnStatus::Ok, "{:?}", out.error);
    assert_eq!(out.text, "Hello again.");
    assert_eq!(srv.bodies().len(), 2);
}

#[tokio::test]
async fn a_second_429_or_a_long_retry_after_says_when_to_try_again() {
    let srv = ScriptServer::start(vec![too_many("1"), too_many("1")]).await;
    let h = Harness::new();
    let (reg, _, _) = express_and_lookup();
    let (_, out) = h
        .run(&h.request(&srv.base_url, Transport::Responses, "hi"), &reg)
        .await;
    assert_eq!(
        out.error.unwrap(),
        "The model server is rate-limiting me — try again in 1 s."
    );
    assert_eq!(srv.bodies().len(), 2, "retried once, not twice");

    let srv = ScriptServer::start(vec![too_many("45")]).await;
    let t0 = Instant::now();
    let (_, out) = h
        .run(
            &h.request(&srv.base_url, Transport::ChatCompletions, "hi"),
            &reg,
        )
        .await;
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "a long wait is not waited"
    );
    assert_eq!(
        out.error.unwrap(),
        "The model server is rate-limiting me — try again in 45 s."
    );
    assert_eq!(srv.bodies().len(), 1);
}
