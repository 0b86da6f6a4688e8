//! `yui doctor` and the reply-length settings as real processes: against scripted servers on
//! 127.0.0.1 (a std thread per server), the exit code, the JSON shape, the time bound.

mod support;

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{json_ok, yui_command};

/// Answer every request with `reply` (a whole HTTP response), or hold it unanswered when `None`;
/// returns the base URL and each request's head.
fn serve(reply: Option<&'static str>) -> (String, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", l.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(Vec::new()));
    let h2 = heads.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut s) = conn else { return };
            let h3 = h2.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                let n = s.read(&mut buf).unwrap_or(0);
                h3.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&buf[..n]).to_string());
                match reply {
                    Some(r) => {
                        let _ = s.write_all(r.as_bytes());
                    }
                    // A stalling server: keep the connection, send nothing.
                    None => std::thread::sleep(Duration::from_secs(70)),
                }
            });
        }
    });
    (base, heads)
}

const UNAUTHORIZED: &str = "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: 35\r\nConnection: close\r\n\r\n{\"error\":{\"message\":\"Invalid key\"}}";

#[test]
fn doctor_json_is_one_object_and_exits_0_on_a_refused_key() {
    let (base, heads) = serve(Some(UNAUTHORIZED));
    let dir = tempfile::tempdir().unwrap();
    let out = yui_command(dir.path())
        .args(["doctor", "--json", "--base-url", &base])
        .env("YUI_API_KEY", "sk-per-run")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "one object: {stdout}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["checks", "cues", "transport"]);
    assert_eq!(v["transport"], Value::Null);
    assert_eq!(v["cues"], false);
    let names: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "reachable",
            "auth",
            "model",
            "chat_completions_stream",
            "responses_stream",
            "chat_completions_tool_call",
            "responses_tool_call",
            "round_trip"
        ]
    );
    assert_eq!(v["checks"][0]["ok"], true);
    assert_eq!(v["checks"][1]["ok"], false);
    let port = base.trim_start_matches("http://").trim_end_matches("/v1");
    assert!(
        v["checks"][1]["detail"]
            .as_str()
            .unwrap()
            .starts_with(&format!(
                "The model server at {port} did not accept the API key"
            )),
        "{v}"
    );
    // YUI_API_KEY is the key of this run.
    assert!(
        heads.lock().unwrap()[0].contains("authorization: Bearer sk-per-run")
            || heads.lock().unwrap()[0].contains("Authorization: Bearer sk-per-run")
    );
}

#[test]
fn doctor_against_a_stalling_server_reports_within_a_minute() {
    let (base, _) = serve(None);
    let dir = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let out = yui_command(dir.path())
        .args(["doctor", "--base-url", &base, "--model", "m"])
        .output()
        .unwrap();
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("YUI doctor: {base}, model \"m\""));
    assert_eq!(lines.len(), 10, "{text}");
    assert!(lines[1].starts_with("FAIL  Reachable:"), "{text}");
    assert!(
        lines[1].contains("The model stopped answering (nothing for 10 s)"),
        "{text}"
    );
    assert!(
        lines[5].starts_with("skip  Streamed reply, Responses:"),
        "{text}"
    );
    assert!(
        lines[9].starts_with("Summary: no transport works with this server."),
        "{text}"
    );
}

#[test]
fn backend_set_takes_the_reply_cap_and_temperature() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "backend",
        "set",
        "--max-output-tokens",
        "256",
        "--temperature",
        "0.5",
    ];
    let out = yui_command(dir.path()).args(args).output().unwrap();
    let v = json_ok(&args, &out);
    assert_eq!(
        (v["max_output_tokens"].clone(), v["temperature"].clone()),
        (json!(256), json!(0.5))
    );
    let args = ["backend", "set", "--temperature", "none"];
    let out = yui_command(dir.path()).args(args).output().unwrap();
    let v = json_ok(&args, &out);
    assert_eq!(
        (v["max_output_tokens"].clone(), v["temperature"].clone()),
        (json!(256), Value::Null)
    );
    let out = yui_command(dir.path())
        .args(["backend", "set", "--temperature", "7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(
        e,
        json!({"code": "invalid_input", "message": "temperature must be between 0 and 2, not 7"})
    );
    let help = yui_command(dir.path()).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("YUI_API_KEY"));
}
