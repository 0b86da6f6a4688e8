//! What is playing, from media players on the session bus (MPRIS: `org.mpris.MediaPlayer2.*`
//! at `/org/mpris/MediaPlayer2`, `PlaybackStatus` and `Metadata`), for the `now playing:` line.
//!
//! A task watches the bus only while `yui.awareness.now_playing` is on ([`Mpris::watch`]): it
//! reads the players once, then again only when one of them signals `PropertiesChanged` or a
//! player comes or goes (`NameOwnerChanged`), and keeps the answer for turns to read at no
//! cost. No polling; a bus that cannot be reached leaves the line out.

use super::aware::NowPlaying;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;
use zbus::fdo::{DBusProxy, PropertiesProxy};
use zbus::names::InterfaceName;
use zbus::zvariant::OwnedValue;
use zbus::{Connection, MatchRule, MessageStream};

const PREFIX: &str = "org.mpris.MediaPlayer2.";
const PATH: &str = "/org/mpris/MediaPlayer2";
const PLAYER: &str = "org.mpris.MediaPlayer2.Player";

/// The watcher: the last answer, and the task keeping it while watching.
pub struct Mpris {
    /// The bus to use; `None`: the session bus (`DBUS_SESSION_BUS_ADDRESS`).
    address: Option<String>,
    /// The runtime the watch runs on (the one current when made).
    rt: Option<tokio::runtime::Handle>,
    playing: Arc<Mutex<Option<NowPlaying>>>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Mpris {
    /// On the bus at `address` (`None`: the session bus), watched on the tokio runtime current
    /// now (none: it never watches, and says so in the log).
    pub fn new(address: Option<String>) -> Self {
        Self {
            address,
            rt: tokio::runtime::Handle::try_current().ok(),
            playing: Arc::default(),
            task: Mutex::default(),
        }
    }

    /// What plays now, as last seen.
    pub fn now_playing(&self) -> Option<NowPlaying> {
        lock(&self.playing).clone()
    }

    /// Start or stop watching.
    pub fn watch(&self, on: bool) {
        let mut task = lock(&self.task);
        if !on {
            if let Some(t) = task.take() {
                t.abort();
            }
            *lock(&self.playing) = None;
            return;
        }
        if task.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        let Some(rt) = &self.rt else {
            tracing::debug!("no runtime to watch media players on");
            return;
        };
        let (address, playing) = (self.address.clone(), self.playing.clone());
        *task = Some(rt.spawn(async move {
            if let Err(e) = run(address, playing).await {
                tracing::info!(error = %e, "not watching media players (MPRIS)");
            }
        }));
    }
}

impl Drop for Mpris {
    fn drop(&mut self) {
        if let Some(t) = lock(&self.task).take() {
            t.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

async fn run(address: Option<String>, playing: Arc<Mutex<Option<NowPlaying>>>) -> zbus::Result<()> {
    let conn = match address {
        Some(a) => {
            zbus::connection::Builder::address(a.as_str())?
                .build()
                .await?
        }
        None => Connection::session().await?,
    };
    let changed = MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .interface("org.freedesktop.DBus.Properties")?
        .member("PropertiesChanged")?
        .path(PATH)?
        .build();
    let owners = MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .sender("org.freedesktop.DBus")?
        .interface("org.freedesktop.DBus")?
        .member("NameOwnerChanged")?
        .arg0ns("org.mpris.MediaPlayer2")?
        .build();
    let mut events = futures_util::stream::select(
        MessageStream::for_match_rule(changed, &conn, Some(16)).await?,
        MessageStream::for_match_rule(owners, &conn, Some(16)).await?,
    );
    loop {
        let now = read(&conn).await;
        *lock(&playing) = now;
        if events.next().await.is_none() {
            return Ok(());
        }
    }
}

/// The first player that plays, read now.
async fn read(conn: &Connection) -> Option<NowPlaying> {
    let names = DBusProxy::new(conn).await.ok()?.list_names().await.ok()?;
    for name in names.iter().filter(|n| n.starts_with(PREFIX)) {
        let Ok(props) = PropertiesProxy::builder(conn)
            .destination(name.to_string())
            .and_then(|b| b.path(PATH))
        else {
            continue;
        };
        let Ok(props) = props.build().await else {
            continue;
        };
        let iface = InterfaceName::from_static_str_unchecked(PLAYER);
        let status = props.get(iface.clone(), "PlaybackStatus").await.ok();
        if status.and_then(|s| String::try_from(s).ok()).as_deref() != Some("Playing") {
            continue;
        }
        let Ok(meta) = props.get(iface, "Metadata").await else {
            continue;
        };
        if let Some(p) = from_metadata(&name[PREFIX.len()..], meta) {
            return Some(p);
        }
    }
    None
}

/// `xesam:title` and `xesam:artist` (a list) of a player's metadata.
fn from_metadata(player: &str, meta: OwnedValue) -> Option<NowPlaying> {
    let mut meta = HashMap::<String, OwnedValue>::try_from(meta).ok()?;
    let title = meta
        .remove("xesam:title")
        .and_then(|v| String::try_from(v).ok())
        .filter(|t| !t.trim().is_empty())?;
    let artist = meta
        .remove("xesam:artist")
        .and_then(|v| Vec::<String>::try_from(v).ok())
        .map(|a| a.join(", "))
        .filter(|a| !a.trim().is_empty());
    Some(NowPlaying {
        player: player.to_string(),
        artist,
        title,
    })
}
