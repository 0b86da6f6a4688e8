//! Realtime characters share the stage's floor (issue 31 item 5, for issue 32's audio): two
//! characters whose backend is a realtime session (the test kit's realtime server, driven by
//! hand) never talk over each other, nor over a character speaking through text-to-speech (the
//! test kit's speech server), unless `yui.voice.overlap` is on. Audio that waits for the floor is
//! held, played in order once the floor is free, and counts 0 ms heard when the user speaks over
//! it or stops it (`conversation.item.truncate` with `audio_end_ms` 0, the stored reply cut).
//!
//! The output device is in memory: each stream it opens is pulled 20 ms every 20 ms holding
//! 40 ms (as `realtime_audio::FakeOut` in real time), and every pull that carried sound is noted
//! with its instant and loudness; a clip (text-to-speech) takes its own length to play.

use crate::mic::{turn_end, until};
use crate::turn_support::backends::realtime_fixed;
use base64::Engine as _;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;
use yui_core::clock::SystemClock;
use yui_core::paths::Paths;
use yui_core::stage::UserTurn;
use yui_core::stage::{AudioChoice, Stage, StageEvent, StageOptions, Window};
use yui_core::transcript::{self, INTERRUPTED_MARKER};
use yui_core::turn::TurnStatus;
use yui_core::voice::audio::{AudioError, AudioHost, Capture, DeviceList, Played};
use yui_core::voice::pcm::Pcm;
use yui_core::voice::realtime_audio::RATE;
use yui_core::voice::stream_out::{OpenStream, StreamFeed};
use yui_core::{settings, Store, WindowKind};
use yui_testkit::realtime::{self as rt, RealtimeServer, RtConn};
use yui_testkit::speech::{patterned_tone, SpeechReply, SpeechServer};

/// The device's latency: a pull is heard this long after it.
const HELD: Duration = Duration::from_millis(40);

/// Sound pulled by one stream: (instant, loudest sample) per pull that carried any.
type Pulls = Arc<Mutex<Vec<(Instant, f32)>>>;

/// A clip played (text-to-speech): its loudest sample, start and end.
#[derive(Debug, Clone, Copy)]
struct Clip {
    peak: f32,
    start: Instant,
    end: Instant,
}

#[derive(Default)]
struct Out {
    streams: Mutex<Vec<Pulls>>,
    clips: Mutex<Vec<Clip>>,
    /// This many next streams fail to open (the device went away).
    fail_opens: AtomicUsize,
}

struct Device(Arc<AtomicBool>);
impl Drop for Device {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[async_trait::async_trait]
impl AudioHost for Out {
    fn devices(&self) -> Result<DeviceList, AudioError> {
        Ok(Default::default())
    }
    async fn play(
        &self,
        pcm: &Pcm,
        _: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Played, AudioError> {
        let start = Instant::now();
        let peak = pcm.samples.iter().fold(0f32, |m, s| m.max(s.abs()));
        let full = Duration::from_millis(pcm.duration_ms());
        let played = tokio::select! {
            _ = tokio::time::sleep(full) => Played::Finished { ms: pcm.duration_ms() },
            _ = cancel.cancelled() => Played::Cancelled { ms: start.elapsed().as_millis() as u64 },
        };
        let end = Instant::now();
        self.clips.lock().unwrap().push(Clip { peak, start, end });
        Ok(played)
    }
    async fn capture(&self, _: Option<&str>) -> Result<Capture, AudioError> {
        Err(AudioError::no_device("no microphone here"))
    }
    async fn open_stream(
        &self,
        feed: Arc<StreamFeed>,
        _: Option<&str>,
    ) -> Result<OpenStream, AudioError> {
        let fail = self
            .fail_opens
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if fail.is_ok() {
            return Err(AudioError::device(
                "the audio output device \"Fake\" went away",
            ));
        }
        let pulls: Pulls = Arc::default();
        self.streams.lock().unwrap().push(pulls.clone());
        let stop = Arc::new(AtomicBool::new(false));
        let halt = stop.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0.0; 480];
            let start = Instant::now();
            let mut n = 0u32;
            while !halt.load(Ordering::SeqCst) {
                let now = Instant::now();
                feed.pull(&mut buf, RATE, HELD, now);
                let peak = buf.iter().fold(0f32, |m, s| m.max(s.abs()));
                if peak > 0.0 {
                    pulls.lock().unwrap().push((now, peak));
                }
                n += 1;
                let next = start + Duration::from_millis(20) * n;
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
            }
        });
        Ok(OpenStream::new("Fake".into(), RATE, Box::new(Device(stop))))
    }
}

impl Out {
    /// Each stream that sounded: (loudest pull, first pull, last pull), by first pull.
    fn heard(&self) -> Vec<(f32, Instant, Instant)> {
        let mut out: Vec<_> = self
            .streams
            .lock()
            .unwrap()
            .iter()
            .filter_map(|p| {
                let p = p.lock().unwrap();
                let peak = p.iter().fold(0f32, |m, (_, s)| m.max(*s));
                Some((peak, p.first()?.0, p.last()?.0))
            })
            .collect();
        out.sort_by_key(|s| s.1);
        out
    }
}

struct Rig {
    _dir: tempfile::TempDir,
    store: Store,
    stage: Stage,
    rx: UnboundedReceiver<StageEvent>,
    srv: RealtimeServer,
    out: Arc<Out>,
    _speech: SpeechServer,
}

/// Yui (main) and Kai (pet) on one realtime server with voice on; text-to-speech (a phone's
/// turn) through the scripted speech server: 500 ms clips at 0.6.
async fn rig(overlap: bool) -> Rig {
    let srv = RealtimeServer::start().await;
    let speech = SpeechServer::start(
        vec![],
        Some(Box::new(|_| {
            SpeechReply::wav(16_000, &patterned_tone(16_000, &[0.6; 5]))
        })),
    );
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let out = Arc::new(Out::default());
    let opts = StageOptions {
        backend: realtime_fixed(&srv.url),
        headless: false,
        audio: Some(out.clone()),
        mic_audio: AudioChoice(Some(crate::mic::host(vec![], 20))),
        duplex: Some(false),
        ..StageOptions::default()
    };
    let (stage, rx) = Stage::new(store.clone(), Arc::new(SystemClock), paths, opts);
    let voice = json!({"enabled": true, "engine": "openai", "overlap": overlap});
    settings::set(&store, "yui.voice", &voice).unwrap();
    let tts = json!({"base_url": speech.base_url, "use_backend_key": false});
    settings::set(&store, "yui.voice.tts", &tts).unwrap();
    Rig {
        _dir: dir,
        store,
        stage,
        rx,
        srv,
        out,
        _speech: speech,
    }
}

impl Rig {
    /// `window` opens: its character's session, once connected.
    async fn open(&mut self, window: Window, preset: &str) -> RtConn {
        self.stage.window_opened(window);
        let (c, session) = self.srv.accept_session().await;
        assert_eq!(session["output_modalities"], json!(["audio"]));
        until(&mut self.rx, |e| {
            matches!(e, StageEvent::Connection { preset_id, state }
                if preset_id == preset && serde_json::to_value(state).unwrap()["state"] == "connected")
        })
        .await;
        c
    }

    /// Both characters' sessions, each with a turn asked for ("hi").
    async fn both_asked(&mut self) -> (RtConn, RtConn) {
        let mut yui = self.open(Window::Main, "yui").await;
        let mut kai = self.open(Window::Pet("kai".into()), "kai").await;
        self.stage
            .user_turn(UserTurn::to("yui", WindowKind::Main, "hi"))
            .unwrap();
        assert_eq!(yui.user_turn().await, "hi");
        self.stage
            .user_turn(UserTurn::to("kai", WindowKind::Pet, "hi"))
            .unwrap();
        assert_eq!(kai.user_turn().await, "hi");
        (yui, kai)
    }

    fn reply(&self, preset: &str) -> String {
        let lines = transcript::lines(&self.store, preset, 10).unwrap();
        lines.last().map(|e| e.text.clone()).unwrap_or_default()
    }
}

/// Events until `n` speeches ended.
async fn ended(rx: &mut UnboundedReceiver<StageEvent>, n: usize) -> Vec<StageEvent> {
    let mut count = 0;
    let seen = until(rx, |e| {
        count += matches!(e, StageEvent::SpeechEnded { .. }) as usize;
        count == n
    })
    .await;
    assert_eq!(count, n, "{n} speeches ended in time");
    seen
}

/// An audio reply of `ms` whose tone is `gain` times the kit's (so the streams tell apart).
fn reply_at(resp: &str, words: &[&str], ms: u64, gain: f32) -> Vec<Value> {
    let mut v = rt::audio_reply(resp, words, ms / words.len() as u64);
    for e in v.iter_mut() {
        if e["type"] == "response.output_audio.delta" {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(e["delta"].as_str().unwrap())
                .unwrap();
            let samples: Vec<i16> = raw
                .chunks_exact(2)
                .map(|b| (i16::from_le_bytes([b[0], b[1]]) as f32 * gain) as i16)
                .collect();
            e["delta"] = json!(rt::b64_pcm(&samples));
        }
    }
    v
}

/// The speeches' end: (preset, heard ms, complete), in order.
fn speech_ends(seen: &[StageEvent]) -> Vec<(String, u64, bool)> {
    seen.iter()
        .filter_map(|e| match e {
            StageEvent::SpeechEnded {
                preset_id,
                heard_ms,
                complete,
                ..
            } => Some((preset_id.clone(), *heard_ms, *complete)),
            _ => None,
        })
        .collect()
}

fn lip_syncs(seen: &[StageEvent]) -> Vec<String> {
    seen.iter()
        .filter_map(|e| match e {
            StageEvent::LipSync { preset_id, .. } => Some(preset_id.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn two_realtime_replies_arriving_at_once_are_heard_one_after_the_other() {
    let mut r = rig(false).await;
    let (yui, kai) = r.both_asked().await;
    // Both replies arrive at the same moment, far faster than they play.
    yui.play(&reply_at("y1", &["I am Yui. ", "I speak first."], 600, 1.0));
    kai.play(&reply_at("k1", &["I am Kai. ", "I wait."], 600, 0.5));
    let seen = ended(&mut r.rx, 2).await;
    let heard = r.out.heard();
    assert_eq!(heard.len(), 2, "two streams sounded");
    let (first, second) = (heard[0], heard[1]);
    let first_is_yui = first.0 > 0.18;
    assert!(first_is_yui != (second.0 > 0.18), "one each: {heard:?}");
    // The second's first sample is given to the device only once the first's last was heard.
    assert!(
        second.1 >= first.2 + HELD,
        "they talked over each other: the second began {:?} after the first's last pull",
        second.1.checked_duration_since(first.2)
    );
    // The mouths move in the same order: all of the first's lip sync, then the second's.
    let lips = lip_syncs(&seen);
    let (a, b) = if first_is_yui {
        ("yui", "kai")
    } else {
        ("kai", "yui")
    };
    let switch = lips
        .iter()
        .position(|p| p == b)
        .expect("the second's mouth");
    assert!(
        switch > 0 && lips[..switch].iter().all(|p| p == a),
        "{lips:?}"
    );
    assert!(lips[switch..].iter().all(|p| p == b), "{lips:?}");
    // Each was heard whole, the first to end first.
    let ends = speech_ends(&seen);
    assert_eq!(
        ends.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
        [a, b]
    );
    for (who, ms, complete) in &ends {
        assert!(*complete && (580..=620).contains(ms), "{who}: {ms} ms");
    }
    assert_eq!(r.reply("yui"), "I am Yui. I speak first.");
    assert_eq!(r.reply("kai"), "I am Kai. I wait.");
}

#[tokio::test]
async fn with_overlap_allowed_two_realtime_replies_play_at_once() {
    let mut r = rig(true).await;
    let (yui, kai) = r.both_asked().await;
    yui.play(&reply_at("y1", &["One."], 800, 1.0));
    kai.play(&reply_at("k1", &["Two."], 800, 0.5));
    ended(&mut r.rx, 2).await;
    let heard = r.out.heard();
    assert_eq!(heard.len(), 2);
    assert!(heard[1].1 < heard[0].2, "they overlap: {heard:?}");
}

/// Yui's phone asks: its turn (text mode, its own session) is spoken through text-to-speech.
async fn phone_turn(r: &mut Rig, words: &str) {
    r.stage
        .user_turn(UserTurn::to("yui", WindowKind::Phone, "hi"))
        .unwrap();
    let (mut phone, session) = r.srv.accept_session().await;
    assert_eq!(session["output_modalities"], json!(["text"]));
    assert_eq!(phone.user_turn().await, "hi");
    phone.play(&rt::text_reply("p1", &[words]));
    // The session lives as long as the turn needs it.
    tokio::spawn(async move { while phone.recv().await.is_some() {} });
}

#[tokio::test]
async fn a_realtime_reply_waits_for_speech_holding_the_floor_and_speech_waits_for_it() {
    let mut r = rig(false).await;
    let mut kai = r.open(Window::Pet("kai".into()), "kai").await;
    // Yui speaks through text-to-speech (two 500 ms clips); Kai's reply arrives meanwhile.
    phone_turn(&mut r, "First clip. Second clip.").await;
    until(&mut r.rx, |e| matches!(e, StageEvent::Speaking { .. })).await;
    r.stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "hi"))
        .unwrap();
    assert_eq!(kai.user_turn().await, "hi");
    kai.play(&reply_at("k1", &["Me next."], 400, 1.0));
    let seen = ended(&mut r.rx, 2).await;
    let clips = r.out.clips.lock().unwrap().clone();
    assert_eq!(clips.len(), 2, "{clips:?}");
    let heard = r.out.heard();
    assert_eq!(heard.len(), 1);
    assert!(
        heard[0].1 >= clips[1].end,
        "Kai began before Yui's speech ended: {heard:?} {clips:?}"
    );
    assert_eq!(
        speech_ends(&seen)
            .iter()
            .map(|e| e.0.as_str())
            .collect::<Vec<_>>(),
        ["yui", "kai"]
    );

    // The other way round: Kai's reply plays; Yui's speech waits until it was heard.
    r.stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "again"))
        .unwrap();
    assert_eq!(kai.user_turn().await, "again");
    kai.play(&reply_at("k2", &["Still me."], 600, 1.0));
    until(
        &mut r.rx,
        |e| matches!(e, StageEvent::LipSync { preset_id, .. } if preset_id == "kai"),
    )
    .await;
    phone_turn(&mut r, "After Kai.").await;
    ended(&mut r.rx, 2).await;
    let clips = r.out.clips.lock().unwrap().clone();
    let heard = r.out.heard();
    let last = heard.last().unwrap();
    assert_eq!(clips.len(), 3, "{clips:?}");
    assert!(clips[2].peak > 0.5, "Yui's voice: {clips:?}");
    assert!(
        clips[2].start >= last.2 + HELD,
        "Yui began before Kai's reply was heard: {heard:?} {clips:?}"
    );
}

/// Kai's long reply plays; Yui's whole reply arrives and waits for the floor.
async fn yui_held(r: &mut Rig) -> (RtConn, RtConn) {
    let (yui, kai) = r.both_asked().await;
    kai.play(&reply_at("k1", &["A long story ", "goes on."], 1500, 0.5));
    until(
        &mut r.rx,
        |e| matches!(e, StageEvent::LipSync { preset_id, .. } if preset_id == "kai"),
    )
    .await;
    yui.play(&reply_at("y1", &["Never heard ", "at all."], 600, 1.0));
    // Yui's turn ends (all of it came) while its audio waits.
    let seen = until(
        &mut r.rx,
        |e| matches!(turn_end(e), Some((TurnStatus::Ok, t)) if t == "Never heard at all."),
    )
    .await;
    assert!(!lip_syncs(&seen).contains(&"yui".to_string()));
    assert_eq!(r.stage.speaking(), ["kai"], "Yui's reply waits, silent");
    (yui, kai)
}

/// After a stop of Yui's held reply: nothing of it played, the server was told 0 ms were heard,
/// the stored reply is only the marker, and Kai's reply goes on to its end.
async fn nothing_of_yui_heard(r: &mut Rig, yui: &mut RtConn) {
    let cut = yui
        .recv_type("conversation.item.truncate")
        .await
        .expect("truncate");
    assert_eq!(cut["item_id"], "msg_y1");
    assert_eq!(cut["audio_end_ms"], 0, "nothing of it was heard");
    let seen = ended(&mut r.rx, 1).await;
    let ends = speech_ends(&seen);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].0, "yui");
    assert_eq!((ends[0].1, ends[0].2), (0, false));
    assert_eq!(r.reply("yui"), INTERRUPTED_MARKER);
    let seen = ended(&mut r.rx, 1).await;
    assert_eq!(speech_ends(&seen)[0].0, "kai");
    assert!(speech_ends(&seen)[0].2, "Kai's reply was heard whole");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let heard = r.out.heard();
    assert_eq!(heard.len(), 1, "only Kai's audio played: {heard:?}");
    assert!(heard[0].0 < 0.18, "{heard:?}");
}

#[tokio::test]
async fn the_user_speaking_over_a_held_reply_drops_it_and_it_counts_nothing_heard() {
    let mut r = rig(false).await;
    let (mut yui, _kai) = yui_held(&mut r).await;
    // Yui's session hears the user (server voice activity).
    yui.send(&rt::speech_started("item_u2", 900));
    nothing_of_yui_heard(&mut r, &mut yui).await;
}

#[tokio::test]
async fn stopping_a_held_reply_drops_it_and_it_counts_nothing_heard() {
    let mut r = rig(false).await;
    let (mut yui, _kai) = yui_held(&mut r).await;
    let heard = r.stage.stop_voice_heard("yui").await.expect("Yui's speech");
    assert_eq!(
        (heard.ms, heard.complete, heard.text.as_str()),
        (0, false, "")
    );
    nothing_of_yui_heard(&mut r, &mut yui).await;
}

#[tokio::test]
async fn a_device_that_fails_under_the_floor_lets_the_next_character_speak_at_once() {
    let mut r = rig(false).await;
    let (yui, kai) = r.both_asked().await;
    r.out.fail_opens.store(1, Ordering::SeqCst);
    // Yui's reply begins (it takes the floor; its device fails to open), then pauses a second.
    let reply = reply_at("y1", &["Broken ", "voice."], 400, 1.0);
    let (head, tail) = reply.split_at(5);
    assert_eq!(head[4]["type"], "response.output_audio.delta");
    yui.play(head);
    tokio::time::sleep(Duration::from_millis(100)).await;
    kai.play(&reply_at("k1", &["Fine."], 400, 0.5));
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let resumed = Instant::now();
    yui.play(tail);
    let seen = ended(&mut r.rx, 2).await;
    // Kai did not wait for the rest of Yui's reply: the failed device let the floor go.
    let heard = r.out.heard();
    let kai_heard = heard.iter().find(|s| s.0 < 0.18).expect("Kai was heard");
    assert!(kai_heard.1 < resumed, "Kai waited for a dead device");
    let ends = speech_ends(&seen);
    assert!(ends.contains(&("kai".into(), 400, true)), "{ends:?}");
    let note = seen.iter().find_map(|e| match e {
        StageEvent::SpeechEnded {
            preset_id, note, ..
        } if preset_id == "yui" => Some(note.clone()),
        _ => None,
    });
    let note = note.flatten().unwrap_or_default();
    assert!(note.contains("went away"), "{note}");
    assert_eq!(r.reply("yui"), "Broken voice.");
}

#[tokio::test]
async fn an_exchange_between_two_realtime_characters_is_spoken_one_after_the_other() {
    let mut r = rig(false).await;
    let mut yui = r.open(Window::Main, "yui").await;
    let mut kai = r.open(Window::Pet("kai".into()), "kai").await;
    let turn = r
        .stage
        .user_turn(UserTurn::to("yui", WindowKind::Main, "greet Kai"))
        .unwrap();
    assert_eq!(yui.user_turn().await, "greet Kai");
    // Yui speaks to Kai: 600 ms of audio and the call naming Kai; its result goes back, and the
    // continuation says nothing more.
    let mut reply = reply_at("y1", &["Kai, ", "hello there."], 600, 1.0);
    let done = reply.pop().unwrap();
    reply.extend(rt::call_events(
        "call_1",
        "address_character",
        r#"{"to":"Kai"}"#,
    ));
    reply.push(done);
    yui.play(&reply);
    yui.recv_type("response.create")
        .await
        .expect("the results go back");
    yui.play(&[rt::created("y2"), rt::done("y2", "completed")]);
    until(&mut r.rx, |e| turn_end(e).is_some()).await;
    r.stage.bubble_done(&turn);
    // Kai is asked only once Yui's reply was heard to its end.
    let asked = kai.user_turn().await;
    let asked_at = Instant::now();
    assert!(asked.ends_with("Kai, hello there."), "{asked}");
    kai.play(&reply_at("k1", &["Hello, ", "Yui."], 400, 0.5));
    let seen = until(
        &mut r.rx,
        |e| matches!(e, StageEvent::SpeechEnded { preset_id, .. } if preset_id == "kai"),
    )
    .await;
    let ends = speech_ends(&seen);
    assert_eq!(
        ends,
        [
            ("yui".to_string(), 600, true),
            ("kai".to_string(), 400, true)
        ]
    );
    let heard = r.out.heard();
    assert_eq!(heard.len(), 2, "{heard:?}");
    let (yui_heard, kai_heard) = (heard[0], heard[1]);
    assert!(yui_heard.0 > 0.18 && kai_heard.0 < 0.18, "{heard:?}");
    assert!(asked_at >= yui_heard.2 + HELD, "Kai was asked mid-reply");
    assert!(kai_heard.1 >= yui_heard.2 + HELD, "{heard:?}");
    assert_eq!(r.reply("kai"), "Hello, Yui.");
}
