//! What a character's realtime session keeps when things do not go in order, against the test
//! kit's realtime server driven by hand: the microphone's turn detection survives a reconnect
//! (and ends with the microphone), and hands-free follows the session a settings change makes;
//! the user's words transcribed after their spoken turn started without them replace its
//! placeholder, in the store, the windows and the next history.

use crate::mic::{quiet, turn_end, until};
use crate::stage_realtime_voice::{rig_in, rig_with, Rig};
use serde_json::{json, Value};
use std::time::Duration;
use yui_core::stage::TurnTo;
use yui_core::stage::UserTurn;
use yui_core::stage::{MicState, StageEvent};
use yui_core::transcript::Role;
use yui_core::{settings, WindowKind};
use yui_testkit::realtime::{self as rt, RtConn};

fn detection(session: &Value) -> Value {
    session["audio"]["input"]["turn_detection"].clone()
}

#[tokio::test]
async fn hands_free_turn_detection_survives_a_reconnect_and_ends_with_the_microphone() {
    let mut r = rig_in(false, None, vec![quiet(100_000)], "hands_free").await;
    // yui.realtime says push-to-talk: hands-free needs the server's voice activity.
    let key = yui_core::backend::realtime::KEY;
    settings::set(&r.store, key, &json!({"turn_detection": "push_to_talk"})).unwrap();
    let (mut c, s) = r.open_kai().await;
    assert_eq!(detection(&s), Value::Null, "yui.realtime's");
    r.stage
        .mic_listen(TurnTo::preset("kai", WindowKind::Pet))
        .unwrap();
    let up = c.recv_type("session.update").await.unwrap();
    assert_eq!(detection(&up["session"]), json!({"type": "server_vad"}));
    c.recv_type("input_audio_buffer.append").await.unwrap();
    // The server drops the socket: the new session listens as the microphone asked.
    c.kill();
    let (mut c, s) = r.srv.accept_session().await;
    assert_eq!(
        detection(&s),
        json!({"type": "server_vad"}),
        "the microphone's"
    );
    c.recv_type("input_audio_buffer.append")
        .await
        .expect("the microphone streams into the new session");
    // The microphone stops: the next session is yui.realtime's again.
    assert!(r.stage.mic_stop());
    until(
        &mut r.rx,
        |e| matches!(e, StageEvent::Mic { status } if status.state == MicState::Off),
    )
    .await;
    c.kill();
    let (_c, s) = r.srv.accept_session().await;
    assert_eq!(detection(&s), Value::Null, "yui.realtime's again");
}

#[tokio::test]
async fn hands_free_moves_to_the_session_a_settings_change_makes_with_its_turn_detection() {
    let mut r = rig_in(false, None, vec![quiet(100_000)], "hands_free").await;
    let (mut old, _) = r.open_kai().await;
    r.stage
        .mic_listen(TurnTo::preset("kai", WindowKind::Pet))
        .unwrap();
    old.recv_type("input_audio_buffer.append").await.unwrap();
    // Settings → Backend saves push-to-talk and another voice: the session is made again.
    let v = json!({"voice": "marin", "turn_detection": "push_to_talk"});
    r.stage.realtime_settings_set(&v).unwrap();
    let (mut c, s) = r.srv.accept_session().await;
    assert_eq!(s["audio"]["output"]["voice"], "marin");
    // The microphone comes over with the server's voice activity (in the set-up, or just after).
    let mut detection_now = detection(&s);
    loop {
        let e = c
            .recv()
            .await
            .expect("the microphone streams into the new session");
        match e["type"].as_str() {
            Some("session.update") => detection_now = detection(&e["session"]),
            Some("input_audio_buffer.append") => break,
            _ => {}
        }
    }
    assert_eq!(detection_now, json!({"type": "server_vad"}));
    // The old session is let go.
    while old.recv().await.is_some() {}
    assert!(r.stage.mic_stop());
}

/// A text-mode stage whose server-started turns wait 200 ms for the user's words (2.5 s in the
/// app), with Kai's session set up.
async fn waiting_200ms() -> (Rig, RtConn) {
    let mut r = rig_with(false, None, vec![], "push_to_talk", |o| {
        o.transcript_wait = Duration::from_millis(200);
    })
    .await;
    let (c, _) = r.open_kai().await;
    (r, c)
}

fn turn_id(seen: &[StageEvent]) -> String {
    seen.iter()
        .find_map(|e| match e {
            StageEvent::Turn { turn_id, .. } => Some(turn_id.clone()),
            _ => None,
        })
        .expect("the spoken turn ran")
}

fn heard_later(seen: &[StageEvent]) -> Option<(String, String)> {
    seen.iter().find_map(|e| match e {
        StageEvent::HeardLater {
            preset_id,
            turn_id,
            text,
        } if preset_id == "kai" => Some((turn_id.clone(), text.clone())),
        _ => None,
    })
}

/// The events until both the turn's end and the late words came, in either order (the words are
/// stored beside the running turn).
async fn until_ended_and_heard_later(r: &mut Rig) -> Vec<StageEvent> {
    let (mut ended, mut later) = (false, false);
    until(&mut r.rx, |e| {
        ended |= turn_end(e).is_some();
        later |= heard_later(std::slice::from_ref(e)).is_some();
        ended && later
    })
    .await
}

#[tokio::test]
async fn words_transcribed_after_the_spoken_turn_ended_replace_its_placeholder_and_reach_the_next_history(
) {
    let (mut r, c) = waiting_200ms().await;
    // The server answers the committed audio before it has transcribed it.
    c.send(&rt::committed("item_u1"));
    c.play(&rt::text_reply("r1", &["Sure."]));
    let seen = until(&mut r.rx, |e| turn_end(e).is_some()).await;
    let turn = turn_id(&seen);
    assert!(seen
        .iter()
        .any(|e| matches!(e, StageEvent::Heard { text, .. } if text == yui_core::stage::UNHEARD)));
    let placeholder = (Role::User, yui_core::stage::UNHEARD.to_string());
    let reply = (Role::Assistant, "Sure.".to_string());
    assert_eq!(r.stored(), [placeholder.clone(), reply.clone()]);
    // Another utterance's words are not this turn's; then its own come, after it ended.
    c.send(&rt::input_transcript("item_u0", "not these"));
    c.send(&rt::input_transcript("item_u1", "play some jazz"));
    let seen = until(&mut r.rx, |e| {
        heard_later(std::slice::from_ref(e)).is_some()
    })
    .await;
    assert_eq!(
        heard_later(&seen),
        Some((turn, "play some jazz".to_string())),
        "shown"
    );
    let words = (Role::User, "play some jazz".to_string());
    assert_eq!(r.stored(), [words, reply]);
    // The next history carries them: a new session's seed starts with the words.
    c.kill();
    let (mut c, _) = r.srv.accept_session().await;
    let first = c.recv_type("conversation.item.create").await.unwrap();
    assert_eq!(first["item"]["content"][0]["text"], "play some jazz");
}

#[tokio::test]
async fn words_transcribed_while_the_spoken_reply_runs_replace_its_placeholder() {
    let (mut r, c) = waiting_200ms().await;
    let mut reply = rt::text_reply("r1", &["One ", "moment."]);
    // Past the turn's wait for them, the words come mid-reply.
    reply.insert(2, rt::sleep(500));
    reply.insert(3, rt::input_transcript("item_u1", "what is the weather"));
    c.send(&rt::speech_started("item_u1", 0));
    c.send(&rt::committed("item_u1"));
    for e in reply {
        match e["test.sleep_ms"].as_u64() {
            Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
            None => c.send(&e),
        }
    }
    let seen = until_ended_and_heard_later(&mut r).await;
    assert_eq!(
        heard_later(&seen),
        Some((turn_id(&seen), "what is the weather".to_string()))
    );
    assert_eq!(
        r.stored(),
        [
            (Role::User, "what is the weather".to_string()),
            (Role::Assistant, "One moment.".to_string())
        ]
    );
}

#[tokio::test]
async fn words_heard_while_a_typed_turn_ran_are_those_of_the_response_the_server_starts_after_it() {
    let (mut r, mut c) = waiting_200ms().await;
    r.stage
        .user_turn(UserTurn::to("kai", WindowKind::Pet, "tell me"))
        .unwrap();
    assert_eq!(c.user_turn().await, "tell me");
    // The user speaks while the typed turn runs: their words reach the typed turn.
    c.send(&rt::committed("item_u1"));
    c.send(&rt::input_transcript("item_u1", "never mind"));
    c.play(&rt::text_reply("r1", &["Well."]));
    until(&mut r.rx, |e| turn_end(e).is_some()).await;
    // Then the server answers them by itself: its turn starts without words, then gets them.
    c.play(&rt::text_reply("r2", &["Okay."]));
    let seen = until_ended_and_heard_later(&mut r).await;
    assert_eq!(
        heard_later(&seen).map(|l| l.1).as_deref(),
        Some("never mind")
    );
    assert_eq!(
        r.stored()[2..],
        [
            (Role::User, "never mind".to_string()),
            (Role::Assistant, "Okay.".to_string())
        ]
    );
}
