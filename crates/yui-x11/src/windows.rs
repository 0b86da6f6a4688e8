//! The other apps' top-level windows, read from EWMH properties. Only normal windows and
//! dialogs are listed (no docks, desktops, menus or notifications).

use crate::{xerr, X11Desktop};
use x11rb::connection::Connection;
use x11rb::cookie::Cookie;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, GetPropertyReply, Window};
use x11rb::rust_connection::RustConnection;
use yui_core::avatar::{DesktopWindow, HostError, Rect};

/// `WM_STATE` value of an iconified (minimised) window.
const ICONIC: u32 = 3;
/// `_NET_WM_DESKTOP` of a window shown on every desktop.
const ALL_DESKTOPS: u32 = 0xFFFF_FFFF;

type Prop<'a> = Cookie<'a, RustConnection, GetPropertyReply>;

fn prop<'a>(
    conn: &'a RustConnection,
    w: Window,
    atom: u32,
    kind: impl Into<u32>,
) -> Result<Prop<'a>, HostError> {
    conn.get_property(false, w, atom, kind.into(), 0, 4096)
        .map_err(xerr)
}

fn u32s(reply: Option<GetPropertyReply>) -> Vec<u32> {
    reply
        .and_then(|r| r.value32().map(|v| v.collect()))
        .unwrap_or_default()
}

/// The client windows, bottom of the stack first (`_NET_CLIENT_LIST_STACKING`, else
/// `_NET_CLIENT_LIST`).
pub fn client_list(h: &X11Desktop) -> Result<Vec<Window>, HostError> {
    let stacking = prop(
        &h.conn,
        h.root,
        h.atoms._NET_CLIENT_LIST_STACKING,
        AtomEnum::WINDOW,
    )?;
    let plain = prop(&h.conn, h.root, h.atoms._NET_CLIENT_LIST, AtomEnum::WINDOW)?;
    let stacking = u32s(stacking.reply().ok());
    let plain = u32s(plain.reply().ok());
    Ok(if stacking.is_empty() { plain } else { stacking })
}

/// The listed windows and the current desktop.
pub fn windows(h: &X11Desktop) -> Result<(Vec<DesktopWindow>, Option<u32>), HostError> {
    let conn = &*h.conn;
    let a = &h.atoms;
    let ids = client_list(h)?;
    let current = prop(conn, h.root, a._NET_CURRENT_DESKTOP, AtomEnum::CARDINAL)?;
    // Pipelined: every request of every window first, then the replies.
    let mut pending = Vec::with_capacity(ids.len());
    for &w in &ids {
        pending.push((
            w,
            prop(conn, w, u32::from(AtomEnum::WM_CLASS), AtomEnum::STRING)?,
            prop(conn, w, a._NET_WM_NAME, a.UTF8_STRING)?,
            prop(conn, w, u32::from(AtomEnum::WM_NAME), AtomEnum::ANY)?,
            prop(conn, w, a._NET_FRAME_EXTENTS, AtomEnum::CARDINAL)?,
            prop(conn, w, a._NET_WM_STATE, AtomEnum::ATOM)?,
            prop(conn, w, a._NET_WM_DESKTOP, AtomEnum::CARDINAL)?,
            prop(conn, w, a._NET_WM_PID, AtomEnum::CARDINAL)?,
            prop(conn, w, a._NET_WM_WINDOW_TYPE, AtomEnum::ATOM)?,
            prop(conn, w, a.WM_STATE, a.WM_STATE)?,
            conn.get_geometry(w).map_err(xerr)?,
            conn.translate_coordinates(w, h.root, 0, 0).map_err(xerr)?,
        ));
    }
    conn.flush().map_err(xerr)?;
    let current = u32s(current.reply().ok()).first().copied();
    let mut out = Vec::with_capacity(ids.len());
    for (id, class, net_name, name, extents, state, desktop, pid, kind, wm_state, geo, at) in
        pending
    {
        // A window that closed while we asked answers errors: it is simply not listed.
        let (Ok(geo), Ok(at)) = (geo.reply(), at.reply()) else {
            continue;
        };
        let kind = u32s(kind.reply().ok());
        let normal = kind.is_empty()
            || kind
                .iter()
                .any(|k| *k == a._NET_WM_WINDOW_TYPE_NORMAL || *k == a._NET_WM_WINDOW_TYPE_DIALOG);
        if !normal {
            continue;
        }
        let (instance, class) = wm_class(class.reply().ok());
        let title = net_name
            .reply()
            .ok()
            .filter(|r| !r.value.is_empty())
            .or_else(|| name.reply().ok())
            .map(|r| String::from_utf8_lossy(&r.value).into_owned())
            .unwrap_or_default();
        let ext = u32s(extents.reply().ok());
        let (l, r, t, b) = match ext[..] {
            [l, r, t, b, ..] => (l as i32, r as i32, t as i32, b as i32),
            _ => (0, 0, 0, 0),
        };
        let state = u32s(state.reply().ok());
        let has = |atom: u32| state.contains(&atom);
        let iconic = u32s(wm_state.reply().ok()).first() == Some(&ICONIC);
        let desktop = u32s(desktop.reply().ok())
            .first()
            .copied()
            .filter(|d| *d != ALL_DESKTOPS);
        let pid = u32s(pid.reply().ok()).first().copied();
        out.push(DesktopWindow {
            id: u64::from(id),
            class,
            instance,
            title,
            frame: Rect::new(
                i32::from(at.dst_x) - l,
                i32::from(at.dst_y) - t,
                (i32::from(geo.width) + l + r).max(0) as u32,
                (i32::from(geo.height) + t + b).max(0) as u32,
            ),
            hidden: iconic || has(a._NET_WM_STATE_HIDDEN),
            fullscreen: has(a._NET_WM_STATE_FULLSCREEN),
            maximized: has(a._NET_WM_STATE_MAXIMIZED_VERT) && has(a._NET_WM_STATE_MAXIMIZED_HORZ),
            desktop,
            own: pid.is_some() && pid == h.own_pid,
        });
    }
    Ok((out, current))
}

/// `WM_CLASS`: instance and class, NUL-separated.
fn wm_class(reply: Option<GetPropertyReply>) -> (String, String) {
    let Some(r) = reply else {
        return Default::default();
    };
    let mut parts = r
        .value
        .split(|b| *b == 0)
        .map(|p| String::from_utf8_lossy(p).into_owned());
    let instance = parts.next().unwrap_or_default();
    let class = parts.next().unwrap_or_default();
    (instance, class)
}

/// Of `clients`, the ones whose `_NET_WM_PID` is `pid`, with their parents (the window
/// manager's frames). Pipelined: one round trip for all.
pub fn own_with_frames(
    h: &X11Desktop,
    clients: &[Window],
    pid: u32,
) -> std::collections::HashSet<Window> {
    let conn = &*h.conn;
    let mut pending = Vec::with_capacity(clients.len());
    for &w in clients {
        let Ok(p) = prop(conn, w, h.atoms._NET_WM_PID, AtomEnum::CARDINAL) else {
            continue;
        };
        let Ok(tree) = conn.query_tree(w) else {
            continue;
        };
        pending.push((w, p, tree));
    }
    let _ = conn.flush();
    let mut out = std::collections::HashSet::new();
    for (w, p, tree) in pending {
        let mine = u32s(p.reply().ok()).first() == Some(&pid);
        let parent = tree.reply().ok().map(|t| t.parent);
        if mine {
            out.insert(w);
            if let Some(parent) = parent.filter(|p| *p != h.root) {
                out.insert(parent);
            }
        }
    }
    out
}
