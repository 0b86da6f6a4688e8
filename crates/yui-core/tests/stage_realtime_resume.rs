//! What a character's realtime session keeps when things do not go in order, against the test
//! kit's realtime server driven by hand: the microphone's turn detection survives a reconnect
//! (and ends with the microphone).

use crate::mic::{quiet, until};
use crate::stage_realtime_voice::rig_in;
use serde_json::{json, Value};
use yui_core::stage::{MicState, StageEvent};
use yui_core::{settings, WindowKind};

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
    r.stage.mic_listen("kai", WindowKind::Pet).unwrap();
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
