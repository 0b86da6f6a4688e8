//! Awareness on real parts: a private D-Bus session bus (`dbus-daemon`) with a media player
//! double that speaks MPRIS (`org.mpris.MediaPlayer2.Player`'s `PlaybackStatus` and `Metadata`,
//! `PropertiesChanged` when they change); the watcher follows it with no polling, and a turn's
//! client context carries the lines only while their switches are on.

use crate::stage_proactive::{last_user, turn_end};
use crate::turn_support::backends;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use yui_core::avatar::HostError;
use yui_core::backend::Transport;
use yui_core::clock::ShiftedClock;
use yui_core::manners::aware::{Awareness, NowPlaying};
use yui_core::manners::mpris::Mpris;
use yui_core::manners::rules::Importance;
use yui_core::paths::Paths;
use yui_core::stage::{Outcome, Proactive, Stage, StageOptions, Trigger, UserTurn, Window};
use yui_core::Store;
use yui_testkit::dbus::Bus;
use yui_testkit::sse::*;
use zbus::zvariant::{OwnedValue, Value};

/// The player double's state.
struct Player {
    status: String,
    title: String,
    artist: Vec<String>,
}

#[zbus::interface(name = "org.mpris.MediaPlayer2.Player")]
impl Player {
    #[zbus(property)]
    fn playback_status(&self) -> String {
        self.status.clone()
    }
    #[zbus(property)]
    fn metadata(&self) -> HashMap<String, OwnedValue> {
        let mut m = HashMap::new();
        let v = |v: Value<'_>| OwnedValue::try_from(v).unwrap();
        m.insert(
            "xesam:title".to_string(),
            v(Value::from(self.title.clone())),
        );
        m.insert(
            "xesam:artist".to_string(),
            v(Value::from(self.artist.clone())),
        );
        m
    }
}

const PATH: &str = "/org/mpris/MediaPlayer2";

async fn player(bus: &Bus, status: &str, artist: &str, title: &str) -> zbus::Connection {
    let p = Player {
        status: status.into(),
        title: title.into(),
        artist: vec![artist.into()],
    };
    zbus::connection::Builder::address(bus.address.as_str())
        .unwrap()
        .name("org.mpris.MediaPlayer2.testplayer")
        .unwrap()
        .serve_at(PATH, p)
        .unwrap()
        .build()
        .await
        .unwrap()
}

/// Change the player's song or status and signal it, as a player does.
async fn change(conn: &zbus::Connection, f: impl FnOnce(&mut Player)) {
    let iface = conn
        .object_server()
        .interface::<_, Player>(PATH)
        .await
        .unwrap();
    let mut p = iface.get_mut().await;
    f(&mut p);
    let em = iface.signal_emitter();
    p.playback_status_changed(em).await.unwrap();
    p.metadata_changed(em).await.unwrap();
}

async fn until(mut f: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(5) {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    f()
}

fn playing(artist: &str, title: &str) -> Option<NowPlaying> {
    Some(NowPlaying {
        player: "testplayer".into(),
        artist: Some(artist.into()),
        title: title.into(),
    })
}

#[tokio::test]
async fn the_watcher_follows_a_media_player_and_stops_listening_when_switched_off() {
    let Some(bus) = Bus::start() else { return };
    let mpris = Mpris::new(Some(bus.address.clone()));
    mpris.watch(true);
    assert_eq!(mpris.now_playing(), None, "no player yet");
    let p = player(&bus, "Playing", "Nujabes", "Aruarian Dance").await;
    assert!(
        until(|| mpris.now_playing() == playing("Nujabes", "Aruarian Dance")).await,
        "a player that appears is seen: {:?}",
        mpris.now_playing()
    );
    change(&p, |s| s.title = "Feather".into()).await;
    assert!(until(|| mpris.now_playing() == playing("Nujabes", "Feather")).await);
    change(&p, |s| s.status = "Paused".into()).await;
    assert!(
        until(|| mpris.now_playing().is_none()).await,
        "paused: nothing plays"
    );
    change(&p, |s| s.status = "Playing".into()).await;
    assert!(until(|| mpris.now_playing().is_some()).await);
    drop(p);
    assert!(
        until(|| mpris.now_playing().is_none()).await,
        "a player that quits plays nothing"
    );
    // Off: the answer is dropped and a new player is not followed.
    mpris.watch(false);
    let _p = player(&bus, "Playing", "Nujabes", "Luv(sic)").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(mpris.now_playing(), None);
}

/// The stage's awareness: the active app from a fixed answer (the X11 host's is tested in
/// crates/yui-x11/tests/busy.rs), what plays from the real watcher.
struct Aware {
    mpris: Mpris,
}

impl Awareness for Aware {
    fn active_app(&self) -> Result<Option<String>, HostError> {
        Ok(Some("Firefox".into()))
    }
    fn now_playing(&self) -> Result<Option<NowPlaying>, HostError> {
        Ok(self.mpris.now_playing())
    }
    fn watch_playing(&self, on: bool) {
        self.mpris.watch(on);
    }
}

fn back() -> Proactive {
    Proactive {
        preset_id: "yui".into(),
        trigger: Trigger::Back { away_min: 30 },
        importance: Importance::Normal,
    }
}

#[tokio::test]
async fn a_turn_tells_the_active_app_and_what_plays_only_while_each_switch_is_on() {
    let Some(bus) = Bus::start() else { return };
    let server = ScriptServer::start(vec![
        chat_say("Hi!"),
        chat_say("Nice song."),
        chat_say("Hey."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    let store = Store::open(paths.db_path()).unwrap();
    let opts = StageOptions {
        backend: backends::fixed(Transport::ChatCompletions, &server.base_url),
        headless: true,
        ..StageOptions::default()
    };
    let (stage, mut rx) = Stage::new(
        store.clone(),
        Arc::new(ShiftedClock::at_hour(12)),
        paths,
        opts,
    );
    stage.window_opened(Window::Main);
    stage.set_awareness(Arc::new(Aware {
        mpris: Mpris::new(Some(bus.address.clone())),
    }));
    let _p = player(&bus, "Playing", "Nujabes", "Aruarian Dance").await;
    let set = |key: &str, on: bool| {
        yui_core::settings::set(&store, key, &serde_json::json!({"enabled": on})).unwrap()
    };

    // Both off (the default): no line, and nobody watches the bus.
    assert!(matches!(stage.proactive(back()), Outcome::Went { .. }));
    turn_end(&mut rx).await;
    let sent = last_user(&server.bodies()[0]);
    assert!(
        !sent.contains("active app:") && !sent.contains("now playing:"),
        "{sent}"
    );

    // Both on: the switch starts the watcher, and the next turn carries both lines.
    set("yui.awareness.active_app", true);
    set("yui.awareness.now_playing", true);
    tokio::time::sleep(Duration::from_millis(500)).await;
    stage
        .user_turn(UserTurn::in_window(Window::Main, "hello"))
        .unwrap();
    turn_end(&mut rx).await;
    let sent = last_user(&server.bodies()[1]);
    assert!(
        sent.contains("\nactive app: \"Firefox\"\nnow playing: \"Nujabes – Aruarian Dance\"\n"),
        "{sent}"
    );

    // The active app off again: only what plays.
    set("yui.awareness.active_app", false);
    stage
        .user_turn(UserTurn::in_window(Window::Main, "and now?"))
        .unwrap();
    turn_end(&mut rx).await;
    let sent = last_user(&server.bodies()[2]);
    assert!(!sent.contains("active app:"), "{sent}");
    assert!(
        sent.contains("now playing: \"Nujabes – Aruarian Dance\""),
        "{sent}"
    );
}
