//! The active application, for awareness (`yui.awareness.active_app`): the WM_CLASS class of
//! the window `_NET_ACTIVE_WINDOW` names, never its title. While one of YUI's own windows is
//! active (the user typing to a character), it is the app the user was in before, so the
//! line says what the user was doing rather than "YUI". The root's PropertyNotify of
//! `_NET_ACTIVE_WINDOW` (the event thread already listens to the root) keeps both; nothing
//! polls.

use crate::{xerr, X11Desktop};
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, Window};
use yui_domain::avatar::HostError;

/// The active window and the last active window that was not YUI's own.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Active {
    /// `None` until first read.
    current: Option<Window>,
    last_other: Option<Window>,
}

/// `_NET_ACTIVE_WINDOW` changed (or is read for the first time): note it.
pub(crate) fn note(host: &X11Desktop) -> Result<(), HostError> {
    let reply = host
        .conn
        .get_property(
            false,
            host.root,
            host.atoms._NET_ACTIVE_WINDOW,
            AtomEnum::WINDOW,
            0,
            1,
        )
        .map_err(xerr)?
        .reply()
        .map_err(xerr)?;
    let w = reply
        .value32()
        .and_then(|mut v| v.next())
        .filter(|w| *w != 0);
    let mut a = host.active.lock().unwrap_or_else(|p| p.into_inner());
    a.current = Some(w.unwrap_or(x11rb::NONE));
    if let Some(w) = w.filter(|w| !host.is_own(*w)) {
        a.last_other = Some(w);
    }
    Ok(())
}

/// The class of the active app (the last other one while YUI's own window is active).
pub(crate) fn active_app(host: &X11Desktop) -> Result<Option<String>, HostError> {
    if host
        .active
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .current
        .is_none()
    {
        note(host)?;
    }
    let a = *host.active.lock().unwrap_or_else(|p| p.into_inner());
    let pick = match a.current {
        Some(w) if w != x11rb::NONE && !host.is_own(w) => Some(w),
        _ => a.last_other,
    };
    match pick {
        Some(w) => class_of(host, w),
        None => Ok(None),
    }
}

/// WM_CLASS's class ("instance\0Class\0"); a window gone since reads as none.
fn class_of(host: &X11Desktop, w: Window) -> Result<Option<String>, HostError> {
    let cookie = host
        .conn
        .get_property(false, w, AtomEnum::WM_CLASS, AtomEnum::STRING, 0, 256)
        .map_err(xerr)?;
    let Ok(reply) = cookie.reply() else {
        return Ok(None);
    };
    let mut parts = reply.value.split(|b| *b == 0);
    let instance = parts.next().unwrap_or_default();
    let class = parts.next().filter(|c| !c.is_empty()).unwrap_or(instance);
    let class = String::from_utf8_lossy(class).trim().to_string();
    Ok((!class.is_empty()).then_some(class))
}
