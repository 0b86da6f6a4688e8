//! The realtime session against the test kit's scripted realtime server: barge-in (a fake audio
//! player reporting what was heard: truncate with the played milliseconds, the stored reply cut
//! with the marker), the user stopping a turn (`response.cancel`), the socket lost mid-turn, a
//! stall, a refused session, and reconnect with backoff.

use crate::turn_realtime::rt_req;
use crate::turn_support::*;

use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use yui_core::turn::transport::realtime::{
    self as realtime, ConnState, RealtimeAudioOut, RealtimeClient,
};
use yui_core::turn::TurnStatus;
use yui_testkit::realtime::{self as rt, RealtimeServer};

/// A player that reports a fixed share of what it was given as heard.
#[derive(Default)]
struct FakeAudio {
    bytes: AtomicU64,
    heard_ms: AtomicU64,
    stopped: AtomicBool,
    items: Mutex<Vec<String>>,
}

impl RealtimeAudioOut for FakeAudio {
    fn on_audio(&self, item_id: &str, pcm16: &[u8]) {
        self.bytes.fetch_add(pcm16.len() as u64, Ordering::SeqCst);
        let mut items = self.items.lock().unwrap();
        if items.last().map(String::as_str) != Some(item_id) {
            items.push(item_id.to_string());
        }
    }
    fn played_ms(&self, _: &str) -> u64 {
        self.heard_ms.load(Ordering::SeqCst)
    }
    fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }
}

/// A window's session, set up (the server's side of it returned with its `session`) before
/// any turn starts, so a turn's words are never part of its seed.
async fn session(
    h: &Harness,
    srv: &mut RealtimeServer,
    audio: Option<Arc<dyn RealtimeAudioOut>>,
) -> (RealtimeClient, rt::RtConn, serde_json::Value) {
    let req = rt_req(h, &srv.url, "");
    let cfg = realtime::config(&req, audio.clone());
    let sf = realtime::session_fn(
        h.store.clone(),
        h.clock.clone(),
        "yui".into(),
        yui_core::WindowKind::Main,
        audio.is_some(),
    );
    let client = RealtimeClient::spawn(cfg, sf);
    let (c, s) = srv.accept_session().await;
    let mut state = client.state();
    state
        .wait_for(|s| *s == ConnState::Connected)
        .await
        .unwrap();
    (client, c, s)
}

#[tokio::test]
async fn realtime_barge_in_stops_audio_truncates_at_the_played_ms_and_cuts_the_stored_reply() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let audio = Arc::new(FakeAudio::default());
    audio.heard_ms.store(500, Ordering::SeqCst);
    let (client, mut c, s) = session(&h, &mut srv, Some(audio.clone())).await;
    let mut deps = h.deps(&rt_req(&h, &srv.url, "").timeouts);
    deps.link = yui_core::turn::SeatLink::Realtime(Arc::new(client));
    let mut req = rt_req(&h, &srv.url, "count for me");
    req.instructions = Some("You are Yui.".into());
    let (reg, _, _) = express_and_lookup();
    let script = async {
        assert_eq!(s["output_modalities"], json!(["audio"]));
        // A long-lived session: the turn's instructions first.
        let up = c.recv_type("session.update").await.unwrap();
        assert_eq!(up["session"]["type"], "realtime");
        assert_eq!(
            up,
            json!({"type":"session.update","session":{"type":"realtime","instructions":"You are Yui."}})
        );
        c.user_turn().await;
        // 1000 ms of audio for "one two three four", still responding.
        let mut ev = rt::audio_reply("r1", &["one two ", "three four"], 500);
        ev.pop(); // no response.done: the reply is still going
        c.play(&ev);
        tokio::time::sleep(Duration::from_millis(200)).await;
        c.send(&json!({"type":"input_audio_buffer.speech_started","audio_start_ms":900,"item_id":"user_2"}));
        let t = c.recv_type("conversation.item.truncate").await.unwrap();
        let cancel = c.recv().await.unwrap();
        // The server's deltas of the stopped item still in flight, then the user speaks again:
        // they are not played, and the item is not truncated a second time (at 0 ms, which
        // would wipe what was heard).
        use base64::Engine as _;
        let late = base64::engine::general_purpose::STANDARD.encode(vec![0u8; 100 * 48]);
        c.send(
            &json!({"type":"response.output_audio.delta","response_id":"r1","item_id":"msg_r1",
            "output_index":0,"content_index":0,"delta":late}),
        );
        c.send(&json!({"type":"input_audio_buffer.speech_started","audio_start_ms":1500,"item_id":"user_3"}));
        let again = c.recv_within(Duration::from_millis(400)).await;
        assert_eq!(again, None, "no second truncate of a stopped item");
        (t, cancel)
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel(4096);
    let cancel = CancellationToken::new();
    let (out, (truncate, cancel_ev)) =
        tokio::join!(yui_core::turn::run(&deps, &req, &reg, &tx, &cancel), script);
    drop(tx);
    while rx.recv().await.is_some() {}
    assert_eq!(out.status, TurnStatus::Stopped);
    assert!(audio.stopped.load(Ordering::SeqCst));
    assert_eq!(audio.bytes.load(Ordering::SeqCst), 1000 * 48);
    assert_eq!(
        truncate,
        json!({"type":"conversation.item.truncate","item_id":"msg_r1","content_index":0,"audio_end_ms":500})
    );
    assert_eq!(cancel_ev, json!({"type":"response.cancel"}));
    assert_eq!(
        h.transcript(),
        vec![
            ("user".into(), "count for me".into()),
            (
                "assistant".into(),
                "one two [interrupted by the user]".into()
            )
        ]
    );
}

#[tokio::test]
async fn realtime_speech_after_the_reply_was_heard_whole_is_no_barge_in() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let audio = Arc::new(FakeAudio::default());
    audio.heard_ms.store(10_000, Ordering::SeqCst);
    let (client, mut c, _) = session(&h, &mut srv, Some(audio.clone())).await;
    let mut deps = h.deps(&rt_req(&h, &srv.url, "").timeouts);
    deps.link = yui_core::turn::SeatLink::Realtime(Arc::new(client));
    let req = rt_req(&h, &srv.url, "hi");
    let (reg, _, _) = express_and_lookup();
    let script = async {
        c.user_turn().await;
        c.play(&rt::audio_reply("r1", &["Hello."], 100));
        tokio::time::sleep(Duration::from_millis(300)).await;
        c.send(&json!({"type":"input_audio_buffer.speech_started","item_id":"u"}));
        c.recv_within(Duration::from_millis(400)).await
    };
    let (tx, _rx) = tokio::sync::mpsc::channel(4096);
    let cancel = CancellationToken::new();
    let (out, sent) = tokio::join!(yui_core::turn::run(&deps, &req, &reg, &tx, &cancel), script);
    assert_eq!(out.status, TurnStatus::Ok);
    assert_eq!(out.text, "Hello.");
    assert_eq!(sent, None, "nothing to truncate");
    assert!(!audio.stopped.load(Ordering::SeqCst));
}

#[tokio::test]
async fn realtime_user_stop_sends_response_cancel_and_ends_stopped() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let req = rt_req(&h, &srv.url, "tell me a story");
    let (reg, _, _) = express_and_lookup();
    let cancel = CancellationToken::new();
    let (tx, _rx) = tokio::sync::mpsc::channel(4096);
    let deps = h.deps(&req.timeouts);
    let c2 = cancel.clone();
    let script = async {
        let (mut c, _) = srv.accept_session().await;
        c.user_turn().await;
        c.send(&rt::created("r1"));
        c.send(&rt::text_delta("m", "Once upon"));
        tokio::time::sleep(Duration::from_millis(200)).await;
        c2.cancel();
        c.recv_type("response.cancel").await
    };
    let (out, got) = tokio::join!(yui_core::turn::run(&deps, &req, &reg, &tx, &cancel), script);
    assert_eq!(out.status, TurnStatus::Stopped);
    assert_eq!(got, Some(json!({"type":"response.cancel"})));
    assert_eq!(out.text, "Once upon");
}

#[tokio::test]
async fn realtime_socket_lost_mid_turn_ends_it_within_two_seconds_and_keeps_the_words() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let mut req = rt_req(&h, &srv.url, "are you there");
    req.timeouts.stall = Duration::from_secs(30);
    let (reg, _, _) = express_and_lookup();
    let killed = Arc::new(Mutex::new(None::<Instant>));
    let k2 = killed.clone();
    let script = async {
        let (mut c, _) = srv.accept_session().await;
        c.user_turn().await;
        c.send(&rt::created("r1"));
        c.send(&rt::text_delta("m", "Yes, I"));
        tokio::time::sleep(Duration::from_millis(100)).await;
        *k2.lock().unwrap() = Some(Instant::now());
        c.kill();
    };
    let ((_, out), _) = tokio::join!(h.run(&req, &reg), script);
    let took = killed.lock().unwrap().unwrap().elapsed();
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert_eq!(out.status, TurnStatus::Error);
    assert_eq!(
        out.error.as_deref(),
        Some("The connection to the model broke during the reply — try again.")
    );
    assert_eq!(h.transcript()[0], ("user".into(), "are you there".into()));
    assert_eq!(h.history(), vec![("user".into(), "are you there".into())]);
}

#[tokio::test]
async fn realtime_stalled_server_ends_the_turn() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let mut req = rt_req(&h, &srv.url, "hi");
    req.timeouts.stall = Duration::from_millis(500);
    let (reg, _, _) = express_and_lookup();
    let script = async {
        let (mut c, _) = srv.accept_session().await;
        c.user_turn().await;
        c.send(&rt::created("r1"));
        tokio::time::sleep(Duration::from_secs(2)).await;
        c
    };
    let ((_, out), _c) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(out.status, TurnStatus::Error);
    assert_eq!(
        out.error.as_deref(),
        Some("The model stopped answering (nothing for 500 ms) — it may still be loading; try again, or pick a smaller model. Settings → Backend")
    );
}

#[tokio::test]
async fn realtime_refused_session_and_no_server_are_clear_errors() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let mut req = rt_req(&h, &srv.url, "hi");
    req.timeouts.connect = Duration::from_secs(1);
    req.timeouts.headers = Duration::from_secs(1);
    let (reg, _, _) = express_and_lookup();
    let script = async {
        let mut c = srv.accept(Duration::from_secs(5)).await.unwrap();
        c.send(&json!({"type":"session.created","session":{}}));
        c.recv().await.unwrap();
        c.send(&json!({"type":"error","error":{"message":"Unknown parameter: 'session.type'."}}));
        tokio::time::sleep(Duration::from_secs(3)).await;
    };
    let ((_, out), _) = tokio::join!(h.run(&req, &reg), script);
    assert_eq!(out.status, TurnStatus::Error);
    let e = out.error.unwrap();
    assert!(e.contains("Unknown parameter: 'session.type'."), "{e}");
    assert_eq!(h.transcript()[0].1, "hi");

    // Nothing listens: the connection's problem, in plain words.
    let req = rt_req(&h, "ws://127.0.0.1:9/v1/realtime", "hi");
    let (_, out) = h.run(&req, &reg).await;
    assert_eq!(out.status, TurnStatus::Error);
    assert!(out.error.is_some());
}

#[tokio::test]
async fn realtime_session_reconnects_with_backoff_and_sets_the_session_up_again() {
    let h = Harness::new();
    let mut srv = RealtimeServer::start().await;
    let mut req = rt_req(&h, &srv.url, "");
    req.backend.api_key = Some("sk-rt".into());
    let client = RealtimeClient::spawn(
        realtime::config(&req, None),
        realtime::session_fn(
            h.store.clone(),
            h.clock.clone(),
            "yui".into(),
            yui_core::WindowKind::Main,
            false,
        ),
    );
    let mut state = client.state();
    let (c, s1) = srv.accept_session().await;
    assert_eq!(c.conn.auth.as_deref(), Some("Bearer sk-rt"));
    state
        .wait_for(|s| *s == ConnState::Connected)
        .await
        .unwrap();
    let to =
        |s: &serde_json::Value| s["tools"][2]["parameters"]["properties"]["to"]["enum"].clone();
    assert_eq!(to(&s1), json!(["Kai"]));
    // A preset opened meanwhile joins at the next connect.
    let mira = yui_core::presets::add(&h.store, "Mira").unwrap();
    yui_core::presets::open(&h.store, &mira.id).unwrap();
    let lost = Instant::now();
    c.kill();
    state
        .wait_for(|s| matches!(s, ConnState::Reconnecting { .. }))
        .await
        .unwrap();
    let (_c2, s2) = srv.accept_session().await;
    assert!(lost.elapsed() >= Duration::from_millis(350), "backoff");
    assert_eq!(to(&s2), json!(["Kai", "Mira"]));
    state
        .wait_for(|s| *s == ConnState::Connected)
        .await
        .unwrap();
    assert_eq!(srv.accepted(), 2);
    // And a turn runs on it.
    let _ = AtomicUsize::new(0);
}
