//! The other apps' top-level windows, read from EWMH properties. Only normal windows and
//! dialogs are listed (no docks, desktops, menus or notifications). What was read is kept in
//! the host's cache until an X event says it changed (`cache.rs`).

use crate::cache::{Entry, Fixed, Geom, Props};
use crate::{xerr, X11Desktop};
use x11rb::connection::Connection;
use x11rb::cookie::Cookie;
use x11rb::protocol::xproto::{
    AtomEnum, ConnectionExt as _, GetGeometryReply, GetPropertyReply, QueryTreeReply,
    TranslateCoordinatesReply, Window,
};
use x11rb::rust_connection::RustConnection;
use yui_domain::avatar::{DesktopWindow, HostError, Rect};

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

/// The client list and the current desktop, from the root's properties (one round trip).
fn lists(h: &X11Desktop) -> Result<(Vec<Window>, Option<u32>), HostError> {
    let current = prop(
        &h.conn,
        h.root,
        h.atoms._NET_CURRENT_DESKTOP,
        AtomEnum::CARDINAL,
    )?;
    let ids = client_list(h)?;
    let current = u32s(current.reply().ok()).first().copied();
    Ok((ids, current))
}

type Cookies<'a, T> = Cookie<'a, RustConnection, T>;

/// The requests for what the cache does not hold of one window.
struct Ask<'a> {
    fixed: Option<[Prop<'a>; 3]>,
    props: Option<[Prop<'a>; 6]>,
    geom: Option<(
        Cookies<'a, GetGeometryReply>,
        Cookies<'a, TranslateCoordinatesReply>,
    )>,
    tree: Option<Cookies<'a, QueryTreeReply>>,
}

/// The listed windows and the current desktop. Asks the server only for what the cache does
/// not hold (see `cache.rs`), every request of every window first, then the replies: one round
/// trip (two when the client list changed).
pub fn windows(h: &X11Desktop) -> Result<(Vec<DesktopWindow>, Option<u32>), HostError> {
    let conn = &*h.conn;
    let a = &h.atoms;
    let (clients, current, lists_gen) = {
        let c = h.cache();
        (c.clients.clone(), c.current_desktop, c.lists_gen)
    };
    let (ids, current) = match (clients, current) {
        (Some(ids), Some(current)) => (ids, current),
        _ => {
            let (ids, current) = lists(h)?;
            let mut c = h.cache();
            if c.lists_gen == lists_gen {
                c.clients = Some(ids.clone());
                c.current_desktop = Some(current);
            }
            (ids, current)
        }
    };
    let (known, epoch): (Vec<Entry>, u64) = {
        let c = h.cache();
        let known = ids
            .iter()
            .map(|w| c.windows.get(w).cloned().unwrap_or_default())
            .collect();
        (known, c.epoch)
    };
    let mut asks = Vec::with_capacity(ids.len());
    for (&w, e) in ids.iter().zip(&known) {
        let fixed = match e.fixed {
            Some(_) => None,
            None => Some([
                prop(conn, w, u32::from(AtomEnum::WM_CLASS), AtomEnum::STRING)?,
                prop(conn, w, a._NET_WM_PID, AtomEnum::CARDINAL)?,
                prop(conn, w, a._NET_WM_WINDOW_TYPE, AtomEnum::ATOM)?,
            ]),
        };
        let props = match e.props {
            Some(_) => None,
            None => Some([
                prop(conn, w, a._NET_WM_NAME, a.UTF8_STRING)?,
                prop(conn, w, u32::from(AtomEnum::WM_NAME), AtomEnum::ANY)?,
                prop(conn, w, a._NET_FRAME_EXTENTS, AtomEnum::CARDINAL)?,
                prop(conn, w, a._NET_WM_STATE, AtomEnum::ATOM)?,
                prop(conn, w, a._NET_WM_DESKTOP, AtomEnum::CARDINAL)?,
                prop(conn, w, a.WM_STATE, a.WM_STATE)?,
            ]),
        };
        let geom = match e.geom {
            Some(_) => None,
            None => Some((
                conn.get_geometry(w).map_err(xerr)?,
                conn.translate_coordinates(w, h.root, 0, 0).map_err(xerr)?,
            )),
        };
        let tree = match e.top {
            Some(_) => None,
            None => Some(conn.query_tree(w).map_err(xerr)?),
        };
        asks.push(Ask {
            fixed,
            props,
            geom,
            tree,
        });
    }
    conn.flush().map_err(xerr)?;
    let mut fresh = Vec::with_capacity(ids.len());
    for ((&id, e), ask) in ids.iter().zip(known).zip(asks) {
        let top_known = e.top.is_some();
        let gen = e.gen;
        let mut e = e;
        if let Some([class, pid, kind]) = ask.fixed {
            let kind = u32s(kind.reply().ok());
            let (instance, class) = wm_class(class.reply().ok());
            e.fixed = Some(Fixed {
                instance,
                class,
                pid: u32s(pid.reply().ok()).first().copied(),
                normal: kind.is_empty()
                    || kind.iter().any(|k| {
                        *k == a._NET_WM_WINDOW_TYPE_NORMAL || *k == a._NET_WM_WINDOW_TYPE_DIALOG
                    }),
            });
        }
        if let Some([net_name, name, extents, state, desktop, wm_state]) = ask.props {
            e.props = Some(read_props(
                h, net_name, name, extents, state, desktop, wm_state,
            ));
        }
        if let Some((geo, at)) = ask.geom {
            // A window that closed while we asked answers errors: it is simply not listed.
            let (Ok(geo), Ok(at)) = (geo.reply(), at.reply()) else {
                continue;
            };
            e.geom = Some(Geom {
                x: at.dst_x.into(),
                y: at.dst_y.into(),
                width: geo.width.into(),
                height: geo.height.into(),
            });
        }
        if let Some(tree) = ask.tree {
            let Ok(tree) = tree.reply() else { continue };
            e.top = Some(top_of(h, id, tree.parent));
        }
        fresh.push((id, e, gen, top_known));
    }
    {
        let mut c = h.cache();
        for (id, e, gen, top_known) in &fresh {
            let unchanged =
                c.windows.get(id).map_or(0, |x| x.gen) == *gen && (*top_known || c.epoch == epoch);
            if unchanged && c.watched.contains(id) {
                c.windows.insert(*id, e.clone());
            }
        }
    }
    let out = fresh
        .into_iter()
        .filter_map(|(id, e, _, _)| listed(h, id, e))
        .collect();
    Ok((out, current))
}

/// The root's child holding `w` (whose parent is `parent`): its frame, or itself.
fn top_of(h: &X11Desktop, w: Window, parent: Window) -> Window {
    let (mut cur, mut parent) = (w, parent);
    // Window managers nest a client a level or two deep; a bound keeps a broken tree finite.
    for _ in 0..8 {
        if parent == h.root || parent == x11rb::NONE {
            return cur;
        }
        cur = parent;
        match h.conn.query_tree(cur).ok().and_then(|c| c.reply().ok()) {
            Some(t) => parent = t.parent,
            None => return cur,
        }
    }
    cur
}

#[allow(clippy::too_many_arguments)]
fn read_props(
    h: &X11Desktop,
    net_name: Prop<'_>,
    name: Prop<'_>,
    extents: Prop<'_>,
    state: Prop<'_>,
    desktop: Prop<'_>,
    wm_state: Prop<'_>,
) -> Props {
    let a = &h.atoms;
    let title = net_name
        .reply()
        .ok()
        .filter(|r| !r.value.is_empty())
        .or_else(|| name.reply().ok())
        .map(|r| String::from_utf8_lossy(&r.value).into_owned())
        .unwrap_or_default();
    let ext = u32s(extents.reply().ok());
    let extents = match ext[..] {
        [l, r, t, b, ..] => (l as i32, r as i32, t as i32, b as i32),
        _ => (0, 0, 0, 0),
    };
    let state = u32s(state.reply().ok());
    let has = |atom: u32| state.contains(&atom);
    let iconic = u32s(wm_state.reply().ok()).first() == Some(&ICONIC);
    Props {
        title,
        extents,
        hidden: iconic || has(a._NET_WM_STATE_HIDDEN),
        fullscreen: has(a._NET_WM_STATE_FULLSCREEN),
        maximized: has(a._NET_WM_STATE_MAXIMIZED_VERT) && has(a._NET_WM_STATE_MAXIMIZED_HORZ),
        desktop: u32s(desktop.reply().ok())
            .first()
            .copied()
            .filter(|d| *d != ALL_DESKTOPS),
    }
}

/// The window as the core sees it, if it is one that is listed (a normal window or a dialog).
fn listed(h: &X11Desktop, id: Window, e: Entry) -> Option<DesktopWindow> {
    let (fixed, props, g) = (e.fixed?, e.props?, e.geom?);
    if !fixed.normal {
        return None;
    }
    let (l, r, t, b) = props.extents;
    Some(DesktopWindow {
        id: u64::from(id),
        class: fixed.class,
        instance: fixed.instance,
        title: props.title,
        frame: Rect::new(
            g.x - l,
            g.y - t,
            (g.width + l + r).max(0) as u32,
            (g.height + t + b).max(0) as u32,
        ),
        hidden: props.hidden,
        fullscreen: props.fullscreen,
        maximized: props.maximized,
        desktop: props.desktop,
        own: fixed.pid.is_some() && fixed.pid == h.own_pid,
    })
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
