//! The push-to-talk shortcut in a native Wayland session through the desktop's GlobalShortcuts
//! portal, against a portal double on a private session bus that speaks the real interface
//! (`org.freedesktop.portal.GlobalShortcuts`, version 1): `CreateSession` and `BindShortcuts`
//! answered through `org.freedesktop.portal.Request.Response` on the request path built from the
//! caller's bus name and `handle_token`, the session at the path built from
//! `session_handle_token`, `Activated`/`Deactivated` for the session's shortcut, and
//! `org.freedesktop.portal.Session.Close` when the shortcut is given back, `ShortcutsChanged`
//! when the user rebinds it in the desktop's settings. A desktop without the portal, and one
//! that declines, are one plain line.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use yui_domain::display::shortcuts::{GlobalShortcut, OnKey};
use yui_domain::display::shortcuts_portal::{ShortcutsPortal, SHORTCUT_ID};
use yui_testkit::dbus::Bus;
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};

/// What the double saw.
#[derive(Default)]
struct Seen {
    /// Each bound shortcut: (id, preferred_trigger, description).
    bound: Vec<(String, String, String)>,
    /// The sessions made (their paths) and the ones closed.
    sessions: Vec<String>,
    closed: Vec<String>,
    /// The caller's unique name, to send the signals to.
    caller: String,
}

/// How the double answers `BindShortcuts`: 0 bound, 1 declined, 2 bound nothing.
#[derive(Clone, Copy)]
enum Bind {
    Bound,
    Declined,
    Nothing,
}

struct Portal {
    bind: Bind,
    seen: Arc<Mutex<Seen>>,
}

struct Session {
    path: String,
    seen: Arc<Mutex<Seen>>,
}

#[zbus::interface(name = "org.freedesktop.portal.Session")]
impl Session {
    async fn close(&self) {
        self.seen.lock().unwrap().closed.push(self.path.clone());
    }
}

fn element(sender: &str) -> String {
    sender.trim_start_matches(':').replace('.', "_")
}

fn opt(options: &HashMap<String, OwnedValue>, key: &str) -> String {
    options
        .get(key)
        .and_then(|v| <&str>::try_from(v).ok())
        .unwrap_or_default()
        .to_string()
}

/// Answer the request at `path` after the call returned, as a real portal does.
fn respond(conn: &zbus::Connection, to: String, path: String, code: u32, results: OwnedValue) {
    let conn = conn.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        let results: HashMap<String, OwnedValue> = results.try_into().unwrap();
        conn.emit_signal(
            Some(to.as_str()),
            path.as_str(),
            "org.freedesktop.portal.Request",
            "Response",
            &(code, results),
        )
        .await
        .unwrap();
    });
}

#[zbus::interface(name = "org.freedesktop.portal.GlobalShortcuts")]
impl Portal {
    async fn create_session(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
        options: HashMap<String, OwnedValue>,
    ) -> zbus::fdo::Result<OwnedObjectPath> {
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        let request = format!(
            "/org/freedesktop/portal/desktop/request/{}/{}",
            element(&sender),
            opt(&options, "handle_token")
        );
        let session = format!(
            "/org/freedesktop/portal/desktop/session/{}/{}",
            element(&sender),
            opt(&options, "session_handle_token")
        );
        {
            let mut seen = self.seen.lock().unwrap();
            seen.sessions.push(session.clone());
            seen.caller = sender.clone();
        }
        let obj = Session {
            path: session.clone(),
            seen: self.seen.clone(),
        };
        conn.object_server().at(session.as_str(), obj).await?;
        // `session_handle` is an `s`, as the interface documents.
        let mut results: HashMap<&str, Value<'_>> = HashMap::new();
        results.insert("session_handle", Value::from(session.as_str()));
        respond(
            conn,
            sender,
            request.clone(),
            0,
            Value::from(results).try_into().unwrap(),
        );
        Ok(OwnedObjectPath::try_from(request).unwrap())
    }

    async fn bind_shortcuts(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
        session_handle: OwnedObjectPath,
        shortcuts: Vec<(String, HashMap<String, OwnedValue>)>,
        _parent_window: &str,
        options: HashMap<String, OwnedValue>,
    ) -> zbus::fdo::Result<OwnedObjectPath> {
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        let request = format!(
            "/org/freedesktop/portal/desktop/request/{}/{}",
            element(&sender),
            opt(&options, "handle_token")
        );
        assert!(
            self.seen
                .lock()
                .unwrap()
                .sessions
                .contains(&session_handle.to_string()),
            "bound on a session the portal made"
        );
        let mut answer: Vec<(String, HashMap<String, Value<'_>>)> = Vec::new();
        for (id, props) in &shortcuts {
            let trigger = opt(props, "preferred_trigger");
            self.seen.lock().unwrap().bound.push((
                id.clone(),
                trigger.clone(),
                opt(props, "description"),
            ));
            let mut p: HashMap<String, Value<'_>> = HashMap::new();
            p.insert("description".into(), Value::from(opt(props, "description")));
            p.insert(
                "trigger_description".into(),
                Value::from(format!("Press {trigger}")),
            );
            answer.push((id.clone(), p));
        }
        let (code, answer) = match self.bind {
            Bind::Bound => (0, answer),
            Bind::Declined => (1, Vec::new()),
            Bind::Nothing => (0, Vec::new()),
        };
        let mut results: HashMap<&str, Value<'_>> = HashMap::new();
        results.insert("shortcuts", Value::from(answer));
        respond(
            conn,
            sender,
            request.clone(),
            code,
            Value::from(results).try_into().unwrap(),
        );
        Ok(OwnedObjectPath::try_from(request).unwrap())
    }

    #[zbus(property)]
    fn version(&self) -> u32 {
        1
    }
}

async fn serve(bus: &Bus, bind: Bind) -> (zbus::Connection, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let portal = Portal {
        bind,
        seen: seen.clone(),
    };
    let conn = zbus::connection::Builder::address(bus.address.as_str())
        .unwrap()
        .name("org.freedesktop.portal.Desktop")
        .unwrap()
        .serve_at("/org/freedesktop/portal/desktop", portal)
        .unwrap()
        .build()
        .await
        .unwrap();
    (conn, seen)
}

/// The portal's key signal for `session`'s shortcut `id`.
async fn key(
    conn: &zbus::Connection,
    seen: &Arc<Mutex<Seen>>,
    down: bool,
    session: &str,
    id: &str,
) {
    let caller = seen.lock().unwrap().caller.clone();
    let member = if down { "Activated" } else { "Deactivated" };
    let path = zbus::zvariant::ObjectPath::try_from(session).unwrap();
    conn.emit_signal(
        Some(caller.as_str()),
        "/org/freedesktop/portal/desktop",
        "org.freedesktop.portal.GlobalShortcuts",
        member,
        &(path, id, 1234u64, HashMap::<&str, Value<'_>>::new()),
    )
    .await
    .unwrap();
}

/// The portal's `ShortcutsChanged` for `session`: shortcut `id` now shows as `shown` (what a
/// desktop sends when the user rebinds it in its settings).
async fn rebind(
    conn: &zbus::Connection,
    seen: &Arc<Mutex<Seen>>,
    session: &str,
    id: &str,
    shown: &str,
) {
    let caller = seen.lock().unwrap().caller.clone();
    let path = zbus::zvariant::ObjectPath::try_from(session).unwrap();
    let mut props: HashMap<&str, Value<'_>> = HashMap::new();
    props.insert("description", Value::from("Push to talk"));
    props.insert("trigger_description", Value::from(shown));
    conn.emit_signal(
        Some(caller.as_str()),
        "/org/freedesktop/portal/desktop",
        "org.freedesktop.portal.GlobalShortcuts",
        "ShortcutsChanged",
        &(path, vec![(id, props)]),
    )
    .await
    .unwrap();
}

/// Where the presses and releases went.
fn recorder() -> (OnKey, Arc<Mutex<Vec<bool>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    (Arc::new(move |down| g.lock().unwrap().push(down)), got)
}

async fn until(what: &str, f: impl Fn() -> bool) {
    for _ in 0..200 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what}");
}

/// `take` blocks (the desktop may ask the user): run it off the test's runtime.
async fn take(client: &Arc<ShortcutsPortal>, spec: &str, on: OnKey) -> Result<(), String> {
    let (client, spec) = (client.clone(), spec.to_string());
    tokio::task::spawn_blocking(move || client.take(&spec, on).map_err(|e| e.to_string()))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_portal_s_activated_and_deactivated_are_the_push_to_talk_press_and_release() {
    let Some(bus) = Bus::start() else { return };
    let (portal, seen) = serve(&bus, Bind::Bound).await;
    let client = Arc::new(ShortcutsPortal::new(Some(bus.address.clone())));
    let (on, got) = recorder();
    take(&client, "Ctrl+Alt+Space", on).await.unwrap();
    let session = {
        let s = seen.lock().unwrap();
        assert_eq!(
            s.bound,
            vec![(
                SHORTCUT_ID.to_string(),
                "CTRL+ALT+space".to_string(),
                "Push to talk: the main character listens while the keys are held".to_string()
            )],
            "the setting's shortcut is the preferred trigger, in the specification's form"
        );
        s.sessions[0].clone()
    };
    key(&portal, &seen, true, &session, SHORTCUT_ID).await;
    until("the press reaches push-to-talk", || {
        *got.lock().unwrap() == [true]
    })
    .await;
    // A repeat while held, another session's and another shortcut's signals change nothing.
    key(&portal, &seen, true, &session, SHORTCUT_ID).await;
    key(
        &portal,
        &seen,
        false,
        "/org/freedesktop/portal/desktop/session/1_1/other",
        SHORTCUT_ID,
    )
    .await;
    key(&portal, &seen, false, &session, "something-else").await;
    key(&portal, &seen, false, &session, SHORTCUT_ID).await;
    until("the release reaches push-to-talk", || {
        got.lock().unwrap().len() == 2
    })
    .await;
    assert_eq!(*got.lock().unwrap(), [true, false]);
    // Held when given back: released, and the session closed.
    key(&portal, &seen, true, &session, SHORTCUT_ID).await;
    until("the second press", || got.lock().unwrap().len() == 3).await;
    let c = client.clone();
    tokio::task::spawn_blocking(move || c.give_back())
        .await
        .unwrap();
    assert_eq!(*got.lock().unwrap(), [true, false, true, false]);
    until("the session is closed", || {
        seen.lock().unwrap().closed == [session.clone()]
    })
    .await;
    // Nothing reaches push-to-talk after it was given back.
    key(&portal, &seen, true, &session, SHORTCUT_ID).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(got.lock().unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebinding_in_the_desktop_s_settings_is_the_trigger_described_from_then_on() {
    let Some(bus) = Bus::start() else { return };
    let (portal, seen) = serve(&bus, Bind::Bound).await;
    let client = Arc::new(ShortcutsPortal::new(Some(bus.address.clone())));
    assert_eq!(client.trigger(), None, "nothing taken yet");
    let (on, got) = recorder();
    take(&client, "Ctrl+Alt+Space", on).await.unwrap();
    assert_eq!(
        client.trigger().as_deref(),
        Some("Press CTRL+ALT+space"),
        "as the desktop described it when it bound the shortcut"
    );
    let session = seen.lock().unwrap().sessions[0].clone();
    // Another session's change and another shortcut's change are not ours.
    rebind(
        &portal,
        &seen,
        "/org/freedesktop/portal/desktop/session/1_1/other",
        SHORTCUT_ID,
        "F1",
    )
    .await;
    rebind(&portal, &seen, &session, "something-else", "F2").await;
    // Signals arrive in the order sent: once the press is heard, both were read.
    key(&portal, &seen, true, &session, SHORTCUT_ID).await;
    until("the press", || *got.lock().unwrap() == [true]).await;
    assert_eq!(client.trigger().as_deref(), Some("Press CTRL+ALT+space"));
    rebind(&portal, &seen, &session, SHORTCUT_ID, "Ctrl+Shift+P").await;
    until("the new trigger is taken", || {
        client.trigger().as_deref() == Some("Ctrl+Shift+P")
    })
    .await;
    // The shortcut still works after it was rebound, and the change was no press or release.
    key(&portal, &seen, false, &session, SHORTCUT_ID).await;
    until("the release", || got.lock().unwrap().len() == 2).await;
    assert_eq!(*got.lock().unwrap(), [true, false]);
    let c = client.clone();
    tokio::task::spawn_blocking(move || c.give_back())
        .await
        .unwrap();
    assert_eq!(
        client.trigger(),
        None,
        "given back: no trigger is described"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_portal_a_declined_shortcut_and_a_bad_one_are_one_plain_line() {
    let Some(bus) = Bus::start() else { return };
    let client = Arc::new(ShortcutsPortal::new(Some(bus.address.clone())));
    // Nobody owns the portal's name.
    let e = take(&client, "Ctrl+Alt+Space", recorder().0)
        .await
        .unwrap_err();
    assert_eq!(e, "this desktop offers no global shortcuts portal");
    // A portal without the interface (a desktop whose backends lack GlobalShortcuts).
    {
        struct Other;
        #[zbus::interface(name = "org.freedesktop.portal.Screenshot")]
        impl Other {
            fn nothing(&self) {}
        }
        let _other = zbus::connection::Builder::address(bus.address.as_str())
            .unwrap()
            .name("org.freedesktop.portal.Desktop")
            .unwrap()
            .serve_at("/org/freedesktop/portal/desktop", Other)
            .unwrap()
            .build()
            .await
            .unwrap();
        let e = take(&client, "Ctrl+Alt+Space", recorder().0)
            .await
            .unwrap_err();
        assert_eq!(e, "this desktop offers no global shortcuts portal");
    }
    let (_portal, seen) = serve(&bus, Bind::Declined).await;
    let e = take(&client, "Ctrl+Alt+Space", recorder().0)
        .await
        .unwrap_err();
    assert_eq!(e, "the desktop declined the shortcut");
    let s = seen.lock().unwrap().sessions.clone();
    until("the declined session is closed", || {
        seen.lock().unwrap().closed == s
    })
    .await;
    let e = take(&client, "Ctrl+Nope", recorder().0).await.unwrap_err();
    assert_eq!(
        e,
        "\"Ctrl+Nope\" is not a key combination such as Ctrl+Alt+Space"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_desktop_that_binds_nothing_says_where_to_choose_a_key() {
    let Some(bus) = Bus::start() else { return };
    let (_portal, _seen) = serve(&bus, Bind::Nothing).await;
    let client = Arc::new(ShortcutsPortal::new(Some(bus.address.clone())));
    let e = take(&client, "F9", recorder().0).await.unwrap_err();
    assert_eq!(
        e,
        "the desktop bound no key to it (choose one in the desktop's shortcut settings)"
    );
}
