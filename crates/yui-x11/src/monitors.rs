//! Monitors as GDK finds them: RandR 1.5 monitors in the server's order; when Xinerama is
//! active and has more heads than RandR has monitors (RandR reporting one monitor spanning
//! several heads, as on Xephyr `+xinerama`), the Xinerama heads. Without either, the root window.
//! Numbered from 1 in that order. Each work area is `_NET_WORKAREA` (of the current desktop) cut
//! to the monitor; the monitor itself without one.

use crate::{xerr, X11Desktop};
use x11rb::connection::RequestConnection as _;
use x11rb::protocol::randr::{self, ConnectionExt as _};
use x11rb::protocol::xinerama::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};
use yui_domain::avatar::{HostError, Monitor, Rect};

/// The monitors, numbered from 1. Kept until the work area, the current desktop, the root's
/// size or RandR's monitors change (`cache.rs`).
pub fn monitors(h: &X11Desktop) -> Result<Vec<Monitor>, HostError> {
    let gen = {
        let c = h.cache();
        if let Some(m) = &c.monitors {
            return Ok(m.clone());
        }
        c.lists_gen
    };
    let found = read(h)?;
    let mut c = h.cache();
    if c.lists_gen == gen {
        c.monitors = Some(found.clone());
    }
    Ok(found)
}

fn read(h: &X11Desktop) -> Result<Vec<Monitor>, HostError> {
    let conn = &*h.conn;
    let mut found: Vec<(String, Rect, bool)> = Vec::new();
    if conn
        .extension_information(randr::X11_EXTENSION_NAME)
        .map_err(xerr)?
        .is_some()
    {
        if let Ok(reply) = conn.randr_get_monitors(h.root, true).map_err(xerr)?.reply() {
            for m in reply.monitors {
                let name = conn
                    .get_atom_name(m.name)
                    .ok()
                    .and_then(|c| c.reply().ok())
                    .map(|r| String::from_utf8_lossy(&r.name).into_owned())
                    .unwrap_or_default();
                let r = Rect::new(m.x.into(), m.y.into(), m.width.into(), m.height.into());
                found.push((name, r, m.primary));
            }
        }
    }
    if conn
        .extension_information(xinerama::X11_EXTENSION_NAME)
        .map_err(xerr)?
        .is_some()
    {
        let active = conn
            .xinerama_is_active()
            .map_err(xerr)?
            .reply()
            .is_ok_and(|r| r.state != 0);
        if active {
            if let Ok(reply) = conn.xinerama_query_screens().map_err(xerr)?.reply() {
                if reply.screen_info.len() > found.len() {
                    found = reply
                        .screen_info
                        .iter()
                        .enumerate()
                        .map(|(i, s)| {
                            let r = Rect::new(
                                s.x_org.into(),
                                s.y_org.into(),
                                s.width.into(),
                                s.height.into(),
                            );
                            (format!("head-{}", i + 1), r, i == 0)
                        })
                        .collect();
                }
            }
        }
    }
    if found.is_empty() {
        let g = conn
            .get_geometry(h.root)
            .map_err(xerr)?
            .reply()
            .map_err(xerr)?;
        found.push((
            "screen".into(),
            Rect::new(0, 0, g.width.into(), g.height.into()),
            true,
        ));
    }
    let work = work_area(h);
    Ok(found
        .into_iter()
        .enumerate()
        .map(|(i, (name, rect, primary))| Monitor {
            number: i as u32 + 1,
            name,
            rect,
            work_area: work.and_then(|w| intersect(rect, w)).unwrap_or(rect),
            primary,
        })
        .collect())
}

/// `_NET_WORKAREA` of the current desktop.
fn work_area(h: &X11Desktop) -> Option<Rect> {
    let conn = &*h.conn;
    let current = conn
        .get_property(
            false,
            h.root,
            h.atoms._NET_CURRENT_DESKTOP,
            AtomEnum::CARDINAL,
            0,
            1,
        )
        .ok()?
        .reply()
        .ok()
        .and_then(|r| r.value32().and_then(|mut v| v.next()))
        .unwrap_or(0) as usize;
    let areas: Vec<u32> = conn
        .get_property(
            false,
            h.root,
            h.atoms._NET_WORKAREA,
            AtomEnum::CARDINAL,
            0,
            4096,
        )
        .ok()?
        .reply()
        .ok()?
        .value32()?
        .collect();
    let a = areas
        .chunks_exact(4)
        .nth(current)
        .or(areas.chunks_exact(4).next())?;
    Some(Rect::new(a[0] as i32, a[1] as i32, a[2], a[3]))
}

fn intersect(a: Rect, b: Rect) -> Option<Rect> {
    let (x, y) = (a.x.max(b.x), a.y.max(b.y));
    let (r, bt) = (a.right().min(b.right()), a.bottom().min(b.bottom()));
    (r > x && bt > y).then(|| Rect::new(x, y, (r - x) as u32, (bt - y) as u32))
}
