//! `yui turn --transport realtime`: one text-mode turn over the test kit's realtime server,
//! printing the same JSON lines as the other transports; `yui doctor` against the same server.

use crate::support;

use serde_json::{json, Value};
use std::process::Stdio;
use support::yui_command;
use yui_testkit::realtime::{self as rt, RealtimeServer};

async fn yui(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut cmd = tokio::process::Command::from(yui_command(dir));
    cmd.args(args)
        .env_remove("YUI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn()
        .expect("spawn yui")
        .wait_with_output()
        .await
        .unwrap()
}

#[tokio::test]
async fn yui_turn_over_realtime_prints_the_same_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = vec![rt::created("r1"), rt::text_delta("m1", "Hello!")];
    first.extend(rt::call_events("c1", "browser", r#"{"guide":true}"#));
    first.push(rt::done("r1", "completed"));
    let srv = RealtimeServer::auto(vec![first, rt::text_reply("r2", &["Browser is off."])]).await;
    let out = yui(
        dir.path(),
        &[
            "turn",
            "--transport",
            "realtime",
            "--realtime-url",
            &srv.url,
            "--model",
            "gpt-realtime",
            "--window",
            "pet",
            "--message",
            "hi",
        ],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["speech", "tool_call", "tool_result", "speech", "turn_end"]
    );
    assert_eq!(lines[2]["result"], "error: browser is off");
    assert_eq!(lines[4]["status"], "ok");
    assert_eq!(lines[4]["text"], "Hello! Browser is off.");
    let sent = srv.events();
    let types: Vec<&str> = sent.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "session.update",
            "conversation.item.create",
            "response.create",
            "conversation.item.create",
            "response.create"
        ]
    );
    assert_eq!(
        sent[1]["item"]["content"][0],
        json!({"type":"input_text","text":"hi"})
    );
    assert_eq!(
        sent[3]["item"],
        json!({"type":"function_call_output","call_id":"c1","output":"error: browser is off"})
    );
}

#[tokio::test]
async fn yui_doctor_checks_a_realtime_endpoint_with_the_turns_code() {
    let dir = tempfile::tempdir().unwrap();
    let srv = RealtimeServer::auto(vec![
        rt::text_reply("r1", &["OK"]),
        rt::call_reply("r2", &[("c1", "ping", r#"{"word":"hello"}"#)]),
        rt::text_reply("r3", &["pong received"]),
    ])
    .await;
    let out = yui(
        dir.path(),
        &[
            "doctor",
            "--transport",
            "realtime",
            "--realtime-url",
            &srv.url,
            "--json",
        ],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "realtime_session",
            "realtime_text",
            "realtime_tool_call",
            "round_trip"
        ]
    );
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["ok"] == true),
        "{v}"
    );
    assert_eq!(v["transport"], "realtime");
    assert_eq!(v["cues"], true);
    let sent = srv.events();
    assert_eq!(sent[0]["session"]["tools"][0]["name"], "ping");
    assert!(sent.contains(&json!({"type":"response.create","response":{"tool_choice":{"type":"function","name":"ping"}}})));
    assert!(sent.contains(&json!({"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"c1","output":"pong"}})));
    assert_eq!(sent.last().unwrap(), &json!({"type":"response.create"}));

    // Nothing listens: one plain failure, the rest not checked.
    let out = yui(
        dir.path(),
        &[
            "doctor",
            "--transport",
            "realtime",
            "--realtime-url",
            "ws://127.0.0.1:9/v1/realtime",
            "--json",
        ],
    )
    .await;
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["checks"][0]["ok"], false);
    assert_eq!(v["transport"], Value::Null);
}

#[tokio::test]
async fn yui_turn_over_realtime_with_audio_in_and_out() {
    use yui_core::voice::pcm::Pcm;
    let dir = tempfile::tempdir().unwrap();
    // One second of a 440 Hz tone at 16 kHz: converted to 24 kHz, sent in 20 ms appends.
    let samples: Vec<f32> = (0..16_000)
        .map(|i| (i as f32 * 440.0 * std::f32::consts::TAU / 16_000.0).sin() * 0.3)
        .collect();
    let wav_in = dir.path().join("in.wav");
    std::fs::write(&wav_in, Pcm::new(16_000, samples).to_wav()).unwrap();
    let wav_out = dir.path().join("out.wav");
    let srv = RealtimeServer::auto(vec![rt::audio_reply("r1", &["Hello ", "there."], 500)]).await;
    let out = yui(
        dir.path(),
        &[
            "turn",
            "--transport",
            "realtime",
            "--realtime-url",
            &srv.url,
            "--audio-in",
            wav_in.to_str().unwrap(),
            "--audio-out",
            wav_out.to_str().unwrap(),
        ],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(last["status"], "ok");
    assert_eq!(last["text"], "Hello there.");
    let sent = srv.events();
    assert_eq!(sent[0]["session"]["output_modalities"], json!(["audio"]));
    assert_eq!(
        sent[0]["session"]["audio"]["input"]["turn_detection"],
        Value::Null
    );
    let appends = sent
        .iter()
        .filter(|e| e["type"] == "input_audio_buffer.append")
        .count();
    assert_eq!(appends, 50, "1 s in 20 ms payloads");
    let tail: Vec<&str> = sent[appends + 1..]
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(tail, ["input_audio_buffer.commit", "response.create"]);
    // The reply's second of audio, as the server sent it.
    let wav = std::fs::read(&wav_out).unwrap();
    assert_eq!(wav.len(), 44 + 24_000 * 2);
    // The user's words as the server transcribed them, then the reply.
    let paths = yui_core::paths::Paths::resolve(Some(dir.path().to_path_buf()));
    let store = yui_core::Store::open(paths.db_path()).unwrap();
    let main = yui_core::presets::main_preset(&store).unwrap().id;
    let lines: Vec<(String, String)> = yui_core::transcript::lines(&store, &main, 10)
        .unwrap()
        .into_iter()
        .map(|e| (e.role.as_str().to_string(), e.text))
        .collect();
    assert_eq!(
        lines,
        [
            ("user".to_string(), "heard 1000 ms of audio".to_string()),
            ("assistant".to_string(), "Hello there.".to_string())
        ]
    );
}
