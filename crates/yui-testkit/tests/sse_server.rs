//! The scripted SSE server as a client sees it: raw HTTP/1.1 over real 127.0.0.1 sockets, so
//! what is checked is the bytes on the wire (script, responder, request log, gate, extra headers,
//! the blocking start).

use serde_json::json;
use std::io::{Read as _, Write as _};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;
use yui_testkit::sse::{self, Part, Reply, ScriptServer};

fn addr(base_url: &str) -> String {
    base_url
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string()
}

fn request(method: &str, path: &str, body: &str) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Send one request, read the whole answer (the server closes after each).
async fn call(base_url: &str, method: &str, path: &str, body: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(addr(base_url))
        .await
        .unwrap();
    s.write_all(request(method, path, body).as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

#[tokio::test]
async fn the_script_comes_first_then_the_responder_routes_on_the_request() {
    let srv = ScriptServer::builder()
        .script(vec![sse::chat_say("scripted")])
        .responder(|req| match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/v1/models") => Reply::Status(200, json!({"data": []}).to_string()),
            _ => Reply::Status(418, format!("request {}", req.n)),
        })
        .start()
        .await;
    let first = call(&srv.base_url, "POST", "/v1/chat/completions", r#"{"a":1}"#).await;
    assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{first}");
    assert!(
        first.contains("Content-Type: text/event-stream\r\n"),
        "{first}"
    );
    assert!(first.ends_with("data: [DONE]\n\n"), "{first}");
    let models = call(&srv.base_url, "GET", "/v1/models", "").await;
    assert!(models.starts_with("HTTP/1.1 200 "), "{models}");
    assert!(models.ends_with(r#"{"data":[]}"#), "{models}");
    let third = call(&srv.base_url, "POST", "/v1/responses", "not json").await;
    assert!(third.starts_with("HTTP/1.1 418 "), "{third}");
    assert!(third.ends_with("request 3"), "{third}");

    let seen = srv.seen();
    let got: Vec<(usize, &str, &str)> = seen
        .iter()
        .map(|s| (s.n, s.method.as_str(), s.path.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (1, "POST", "/v1/chat/completions"),
            (2, "GET", "/v1/models"),
            (3, "POST", "/v1/responses")
        ]
    );
    assert_eq!(seen[0].body, json!({"a": 1}));
    assert_eq!(seen[0].auth.as_deref(), Some("Bearer k"));
    assert!(seen[0]
        .headers
        .contains(&("Host".to_string(), "x".to_string())));
    assert_eq!(
        (seen[2].text.as_str(), &seen[2].body),
        ("not json", &json!(null))
    );
}

#[tokio::test]
async fn without_a_script_or_responder_a_request_gets_500() {
    let srv = ScriptServer::start(vec![]).await;
    let out = call(&srv.base_url, "POST", "/v1/chat/completions", "{}").await;
    assert!(out.starts_with("HTTP/1.1 500 "), "{out}");
    assert!(out.ends_with("no scripted reply left"), "{out}");
}

#[tokio::test]
async fn a_gate_holds_the_stream_until_released_and_the_request_is_announced_first() {
    let gate = Arc::new(Notify::new());
    let g = gate.clone();
    let srv = ScriptServer::builder()
        .responder(move |_| {
            Reply::Sse(vec![
                sse::c_text("one"),
                Part::Gate(g.clone(), Duration::from_secs(30)),
                sse::c_text("two"),
            ])
        })
        .header("Access-Control-Allow-Origin", "*")
        .start()
        .await;
    let mut requests = srv.requests();
    let mut s = tokio::net::TcpStream::connect(addr(&srv.base_url))
        .await
        .unwrap();
    s.write_all(request("POST", "/v1/chat/completions", r#"{"m":1}"#).as_bytes())
        .await
        .unwrap();
    let req = tokio::time::timeout(Duration::from_secs(5), requests.recv())
        .await
        .expect("announced")
        .unwrap();
    assert_eq!((req.n, req.body.clone()), (1, json!({"m": 1})));

    // Everything up to the gate arrives, then nothing until the release.
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("one") {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed before the gate");
        got.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&got).to_string();
    assert!(
        head.contains("Access-Control-Allow-Origin: *\r\n"),
        "{head}"
    );
    let early = tokio::time::timeout(Duration::from_millis(300), s.read(&mut buf)).await;
    assert!(early.is_err(), "the stream went on before the release");
    gate.notify_one();
    let mut rest = String::new();
    s.read_to_string(&mut rest).await.unwrap();
    assert!(rest.contains("\"two\""), "{rest}");
}

#[test]
fn a_blocking_start_serves_plain_tests_and_stops_when_dropped() {
    let srv = ScriptServer::builder()
        .script(vec![Reply::Status(503, "loading".into())])
        .start_blocking();
    let a = addr(&srv.base_url);
    let mut s = std::net::TcpStream::connect(&a).unwrap();
    s.write_all(request("POST", "/v1/x", "{}").as_bytes())
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 503 "), "{out}");
    assert_eq!(srv.bodies(), vec![json!({})]);
    drop(srv);
    // The listener goes with the server's runtime: new connections are refused (bounded wait).
    let mut refused = false;
    for _ in 0..50 {
        if std::net::TcpStream::connect(&a).is_err() {
            refused = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(refused, "still accepting after drop");
}
