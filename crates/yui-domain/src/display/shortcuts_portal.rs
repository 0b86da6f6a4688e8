//! The push-to-talk shortcut through the desktop's GlobalShortcuts portal
//! (`org.freedesktop.portal.GlobalShortcuts`, version 1): how a native Wayland session, where no
//! client may grab keys, gets a key held anywhere. KDE Plasma, GNOME 48 and later and Hyprland
//! offer it; where none does, or the desktop declines, the shortcut is refused in one plain line
//! and the rest of the app works (the in-window push-to-talk too).
//!
//! The protocol: `CreateSession({handle_token, session_handle_token})` answers through a
//! `Request.Response` with the `session_handle`; `BindShortcuts(session, [("push-to-talk",
//! {description, preferred_trigger})], "", {handle_token})` answers with the shortcuts bound
//! (the desktop may show a dialog where the user confirms or picks another key) and their
//! `trigger_description`; then the portal sends `Activated` and `Deactivated` for the session,
//! which are the shortcut's press and release, and `ShortcutsChanged` when the user rebinds it in
//! the desktop's settings (its new `trigger_description` is logged and kept for Settings →
//! Voice, [`GlobalShortcut::trigger`]). Giving the shortcut back closes the session
//! (`org.freedesktop.portal.Session.Close`).
//!
//! The session lives on a thread of its own with a one-thread runtime that sleeps in the bus's
//! socket until a signal comes (no polling, nothing wakes while the key is not used); it is
//! started only while push-to-talk with a shortcut is on.

use super::portal::{connect, request, token, RequestError, DEST, PATH};
use super::shortcuts::{Combo, GlobalShortcut, OnKey};
use crate::avatar::HostError;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue, Value};
use zbus::{Connection, MatchRule, MessageStream};

/// How long the portal (and the user, where the desktop asks) may take to bind the shortcut.
pub const ANSWER_WAIT: Duration = Duration::from_secs(60);

/// The shortcut's id in the session.
pub const SHORTCUT_ID: &str = "push-to-talk";

/// What the desktop shows the user about the shortcut.
const DESCRIPTION: &str = "Push to talk: the main character listens while the keys are held";

const INTERFACE: &str = "org.freedesktop.portal.GlobalShortcuts";

/// How the desktop describes the bound keys (`trigger_description`), as last told.
type Shown = Arc<Mutex<Option<String>>>;

/// The portal on the bus at `address` (`None`: the session bus), and the session bound now.
#[derive(Default)]
pub struct ShortcutsPortal {
    pub address: Option<String>,
    running: Mutex<Option<Running>>,
    shown: Shown,
}

/// A bound session's thread, and how to stop it.
struct Running {
    stop: tokio::sync::oneshot::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl ShortcutsPortal {
    /// The portal on the bus at `address` (tests), or the session bus (`None`).
    pub fn new(address: Option<String>) -> Self {
        Self {
            address,
            running: Mutex::new(None),
            shown: Shown::default(),
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn lock(shown: &Shown) -> std::sync::MutexGuard<'_, Option<String>> {
    shown.lock().unwrap_or_else(|p| p.into_inner())
}

impl GlobalShortcut for ShortcutsPortal {
    /// Blocks until the portal bound the shortcut or refused (at most [`ANSWER_WAIT`], the
    /// user may be asked).
    fn take(&self, spec: &str, on: OnKey) -> Result<(), HostError> {
        let combo = Combo::parse(spec).map_err(|e| HostError::Unavailable(e.to_string()))?;
        self.give_back();
        let trigger = combo.trigger();
        let (address, shown) = (self.address.clone(), self.shown.clone());
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("yui-shortcuts-portal".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                match rt {
                    Ok(rt) => rt.block_on(session(address, trigger, on, shown, ready_tx, stop_rx)),
                    Err(e) => {
                        let _ = ready_tx.send(Err(HostError::platform(
                            "starting the shortcuts portal's runtime",
                            e,
                        )));
                    }
                }
            })
            .map_err(|e| HostError::platform("starting the shortcuts portal's thread", e))?;
        match ready_rx.recv_timeout(ANSWER_WAIT + Duration::from_secs(5)) {
            Ok(Ok(shown)) => {
                tracing::info!(
                    %spec,
                    trigger = %shown,
                    "push-to-talk shortcut bound through the desktop's shortcuts portal"
                );
                *self.running() = Some(Running {
                    stop: stop_tx,
                    thread,
                });
                Ok(())
            }
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            // The thread ends on its own once its wait is over (its stop is dropped here).
            Err(_) => Err(no_answer()),
        }
    }

    /// Closes the session (a hold in progress is released first).
    fn give_back(&self) {
        let Some(r) = self.running().take() else {
            return;
        };
        let _ = r.stop.send(());
        let _ = r.thread.join();
        *lock(&self.shown) = None;
    }

    /// As the desktop described it when it bound the shortcut, or since the user rebound it.
    fn trigger(&self) -> Option<String> {
        self.running().as_ref()?;
        lock(&self.shown).clone().filter(|s| !s.is_empty())
    }
}

impl Drop for ShortcutsPortal {
    fn drop(&mut self) {
        self.give_back();
    }
}

fn no_answer() -> HostError {
    HostError::unavailable(format!(
        "the desktop's shortcuts portal did not answer in {} s",
        ANSWER_WAIT.as_secs()
    ))
}

/// The plain line for a refused call: no portal (or none with this interface), or a refusal.
fn refused(e: &zbus::Error) -> HostError {
    tracing::info!(error = %e, "the global shortcuts portal refused");
    let missing = matches!(e, zbus::Error::MethodError(name, _, _) if matches!(
        name.as_str(),
        "org.freedesktop.DBus.Error.ServiceUnknown"
            | "org.freedesktop.DBus.Error.UnknownInterface"
            | "org.freedesktop.DBus.Error.UnknownMethod"
            | "org.freedesktop.DBus.Error.UnknownObject"
            | "org.freedesktop.DBus.Error.NameHasNoOwner"
    ));
    if missing {
        HostError::Unsupported("this desktop offers no global shortcuts portal".into())
    } else {
        HostError::unavailable(format!("the desktop's shortcuts portal refused it ({e})"))
    }
}

/// A request's failure before its answer, in plain words.
fn request_failed(e: RequestError) -> HostError {
    match e {
        RequestError::Call(e) => refused(&e),
        RequestError::Timeout => no_answer(),
        RequestError::Closed => {
            HostError::unavailable("the session bus closed before the shortcuts portal answered")
        }
        RequestError::Bus(what, e) => HostError::platform(what, e),
    }
}

/// A bound session: its connection, handle and the portal's signals for it.
struct Bound {
    conn: Connection,
    session: OwnedObjectPath,
    keys: MessageStream,
    closed: MessageStream,
    /// How the desktop shows the trigger (`trigger_description`), for the log.
    shown: String,
}

/// The session's life on its thread: bind, say how that went, then turn the portal's
/// `Activated`/`Deactivated` into `on(true)`/`on(false)`, and keep its `ShortcutsChanged` in
/// `shown`, until stopped.
async fn session(
    address: Option<String>,
    trigger: String,
    on: OnKey,
    shown: Shown,
    ready: std::sync::mpsc::Sender<Result<String, HostError>>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let mut b = match bind(address.as_deref(), &trigger).await {
        Ok(b) => b,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    *lock(&shown) = Some(b.shown.clone());
    if ready.send(Ok(b.shown.clone())).is_err() {
        close(&b).await;
        return;
    }
    let mut pressed = false;
    loop {
        tokio::select! {
            _ = &mut stop => {
                close(&b).await;
                break;
            }
            m = b.keys.next() => {
                let Some(Ok(m)) = m else {
                    tracing::warn!("the session bus closed: the push-to-talk shortcut is gone");
                    break;
                };
                match signal(&m, &b.session) {
                    // One press, one release: a repeated Activated while held is not a new press.
                    Some(Signal::Key(down)) if down != pressed => {
                        pressed = down;
                        on(down);
                    }
                    Some(Signal::Rebound(now)) => {
                        tracing::info!(
                            trigger = %now,
                            "the desktop rebound the push-to-talk shortcut"
                        );
                        *lock(&shown) = Some(now);
                    }
                    _ => {}
                }
            }
            _ = b.closed.next() => {
                tracing::warn!("the desktop closed the shortcuts session: the push-to-talk shortcut is gone");
                break;
            }
        }
    }
    if pressed {
        on(false);
    }
}

/// What one of the portal's signals says of our shortcut.
#[derive(Debug, PartialEq)]
enum Signal {
    /// `Activated` (`true`) or `Deactivated` (`false`).
    Key(bool),
    /// `ShortcutsChanged`: the user bound it to other keys, as the desktop describes them.
    Rebound(String),
}

/// A shortcut as the portal's signals list it: its id and properties (`a(sa{sv})`'s items).
type Shortcut = (String, HashMap<String, OwnedValue>);

/// Our session's signal for our shortcut; `None` for anything else.
fn signal(m: &zbus::Message, session: &OwnedObjectPath) -> Option<Signal> {
    let header = m.header();
    let down = match header.member()?.as_str() {
        "Activated" => true,
        "Deactivated" => false,
        "ShortcutsChanged" => {
            let (s, shortcuts): (OwnedObjectPath, Vec<Shortcut>) = m.body().deserialize().ok()?;
            if s != *session {
                return None;
            }
            let (_, props) = shortcuts.iter().find(|(id, _)| id == SHORTCUT_ID)?;
            let shown = props
                .get("trigger_description")
                .and_then(|v| <&str>::try_from(v).ok())
                .unwrap_or_default();
            return Some(Signal::Rebound(shown.to_string()));
        }
        _ => return None,
    };
    let (s, id, _time, _opts): (OwnedObjectPath, String, u64, HashMap<String, OwnedValue>) =
        m.body().deserialize().ok()?;
    (s == *session && id == SHORTCUT_ID).then_some(Signal::Key(down))
}

/// Create a session and bind the shortcut with `trigger` as the preferred one.
async fn bind(address: Option<&str>, trigger: &str) -> Result<Bound, HostError> {
    let conn = connect(address).await.map_err(|e| {
        tracing::info!(error = %e, "no session bus for the global shortcuts portal");
        HostError::Unsupported("there is no session bus to reach a global shortcuts portal".into())
    })?;
    let handle = token("yui_ptt");
    let session_token = token("yui_ptt_session");
    let mut options: HashMap<&str, Value<'_>> = HashMap::new();
    options.insert("handle_token", Value::from(handle.as_str()));
    options.insert("session_handle_token", Value::from(session_token.as_str()));
    let (code, results) = request(
        &conn,
        INTERFACE,
        "CreateSession",
        &(options,),
        &handle,
        ANSWER_WAIT,
    )
    .await
    .map_err(request_failed)?;
    answered(code)?;
    // `s` by the interface's documented mistake; `o` accepted too.
    let session = results
        .get("session_handle")
        .and_then(|v| match &**v {
            Value::Str(s) => ObjectPath::try_from(s.as_str()).ok().map(Into::into),
            Value::ObjectPath(p) => Some(OwnedObjectPath::from(p.clone())),
            _ => None,
        })
        .ok_or_else(|| HostError::unavailable("the shortcuts portal gave no session"))?;
    let keys = signals(&conn, INTERFACE, PATH).await?;
    let closed = signals(&conn, "org.freedesktop.portal.Session", session.as_str()).await?;
    let handle = token("yui_ptt");
    let mut wanted: HashMap<&str, Value<'_>> = HashMap::new();
    wanted.insert("description", Value::from(DESCRIPTION));
    wanted.insert("preferred_trigger", Value::from(trigger));
    let mut options: HashMap<&str, Value<'_>> = HashMap::new();
    options.insert("handle_token", Value::from(handle.as_str()));
    let body = (&session, vec![(SHORTCUT_ID, wanted)], "", options);
    let bound = request(
        &conn,
        INTERFACE,
        "BindShortcuts",
        &body,
        &handle,
        ANSWER_WAIT,
    )
    .await;
    let b = Bound {
        conn,
        session,
        keys,
        closed,
        shown: String::new(),
    };
    let shown = match bound.map_err(request_failed).and_then(|(code, results)| {
        answered(code)?;
        bound_trigger(&results).ok_or_else(|| {
            HostError::unavailable(
                "the desktop bound no key to it (choose one in the desktop's shortcut settings)",
            )
        })
    }) {
        Ok(s) => s,
        Err(e) => {
            close(&b).await;
            return Err(e);
        }
    };
    Ok(Bound { shown, ..b })
}

/// The request's answer code in words: 0 done, 1 the user declined, 2 ended.
fn answered(code: u32) -> Result<(), HostError> {
    match code {
        0 => Ok(()),
        1 => Err(HostError::unavailable("the desktop declined the shortcut")),
        _ => Err(HostError::unavailable(
            "the desktop's shortcuts portal ended the request",
        )),
    }
}

/// Our shortcut in `BindShortcuts`' answer (`shortcuts: a(sa{sv})`), with its
/// `trigger_description` (empty when the desktop gave none); `None` when it was not bound.
fn bound_trigger(results: &HashMap<String, OwnedValue>) -> Option<String> {
    let Value::Array(list) = &**results.get("shortcuts")? else {
        return None;
    };
    list.iter().find_map(|item| {
        let Value::Structure(s) = item else {
            return None;
        };
        let [Value::Str(id), Value::Dict(props)] = s.fields() else {
            return None;
        };
        (id.as_str() == SHORTCUT_ID).then(|| {
            props
                .get::<&str, zbus::zvariant::Str<'_>>(&"trigger_description")
                .ok()
                .flatten()
                .map(|d| d.to_string())
                .unwrap_or_default()
        })
    })
}

/// The portal's signals of `interface` on `path`, listened for.
async fn signals(
    conn: &Connection,
    interface: &str,
    path: &str,
) -> Result<MessageStream, HostError> {
    let listen = |e| HostError::platform("listening for the shortcuts portal's signals", e);
    let rule = MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .interface(interface)
        .and_then(|b| b.path(path))
        .map_err(listen)?
        .build();
    MessageStream::for_match_rule(rule, conn, Some(16))
        .await
        .map_err(listen)
}

/// Close the session (best effort, briefly: the portal may already be gone).
async fn close(b: &Bound) {
    let closing = b.conn.call_method(
        Some(DEST),
        b.session.as_str(),
        Some("org.freedesktop.portal.Session"),
        "Close",
        &(),
    );
    if let Ok(Err(e)) = tokio::time::timeout(Duration::from_secs(2), closing).await {
        tracing::debug!(error = %e, "closing the shortcuts session");
    }
}
