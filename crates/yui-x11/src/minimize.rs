//! Asking the window manager to iconify (minimise) every top-level window of a process, as the
//! user would, or to show them again: what `tests/e2e/idle_cpu.sh` (through the `iconify`
//! example) and the visibility e2e test do to the app's windows.

use crate::xerr;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{AtomEnum, ClientMessageEvent, ConnectionExt as _, EventMask};
use yui_domain::avatar::HostError;

/// Iconify (`iconic`) or show again every top-level window whose `_NET_WM_PID` is `pid`, on the
/// display of `DISPLAY`. Returns how many windows were asked.
pub fn set_iconic(pid: u32, iconic: bool) -> Result<usize, HostError> {
    let (conn, screen) =
        x11rb::connect(None).map_err(|e| HostError::platform("connecting to the X display", e))?;
    let root = conn.setup().roots[screen].root;
    let atom = |name: &str| -> Result<u32, HostError> {
        Ok(conn
            .intern_atom(false, name.as_bytes())
            .map_err(xerr)?
            .reply()
            .map_err(xerr)?
            .atom)
    };
    let (list, wm_pid) = (atom("_NET_CLIENT_LIST")?, atom("_NET_WM_PID")?);
    let (change_state, active) = (atom("WM_CHANGE_STATE")?, atom("_NET_ACTIVE_WINDOW")?);
    let clients: Vec<u32> = conn
        .get_property(false, root, list, AtomEnum::WINDOW, 0, 4096)
        .map_err(xerr)?
        .reply()
        .map_err(xerr)?
        .value32()
        .map(|v| v.collect())
        .unwrap_or_default();
    let mut n = 0;
    for w in clients {
        let owner = conn
            .get_property(false, w, wm_pid, AtomEnum::CARDINAL, 0, 1)
            .ok()
            .and_then(|c| c.reply().ok())
            .and_then(|r| r.value32().and_then(|mut v| v.next()));
        if owner != Some(pid) {
            continue;
        }
        // ICCCM 4.1.4: WM_CHANGE_STATE with IconicState (3); EWMH: _NET_ACTIVE_WINDOW from a
        // pager (source 2) maps it again. Both go to the root.
        let ev = match iconic {
            true => ClientMessageEvent::new(32, w, change_state, [3u32, 0, 0, 0, 0]),
            false => ClientMessageEvent::new(32, w, active, [2u32, 0, 0, 0, 0]),
        };
        conn.send_event(
            false,
            root,
            EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
            ev,
        )
        .map_err(xerr)?;
        n += 1;
    }
    conn.flush().map_err(xerr)?;
    Ok(n)
}
