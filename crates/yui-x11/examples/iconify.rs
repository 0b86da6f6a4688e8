//! `cargo run -p yui-x11 --example iconify -- <pid> [--restore]`: ask the window manager to
//! iconify (hide) every top-level window of process `pid`, as the user minimising them would, or
//! to show them again (`--restore`), and print how many. `tests/e2e/idle_cpu.sh` uses it to
//! measure the app with its characters hidden.

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{AtomEnum, ClientMessageEvent, ConnectionExt as _, EventMask};

fn main() {
    let pid: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .expect("usage: iconify <pid> [--restore]");
    let restore = std::env::args().any(|a| a == "--restore");
    let (conn, screen) = x11rb::connect(None).expect("X display");
    let root = conn.setup().roots[screen].root;
    let atom = |name: &str| {
        conn.intern_atom(false, name.as_bytes())
            .unwrap()
            .reply()
            .unwrap()
            .atom
    };
    let (list, wm_pid, change_state, active) = (
        atom("_NET_CLIENT_LIST"),
        atom("_NET_WM_PID"),
        atom("WM_CHANGE_STATE"),
        atom("_NET_ACTIVE_WINDOW"),
    );
    let clients: Vec<u32> = conn
        .get_property(false, root, list, AtomEnum::WINDOW, 0, 4096)
        .unwrap()
        .reply()
        .unwrap()
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
        let ev = if restore {
            ClientMessageEvent::new(32, w, active, [2u32, 0, 0, 0, 0])
        } else {
            ClientMessageEvent::new(32, w, change_state, [3u32, 0, 0, 0, 0])
        };
        conn.send_event(
            false,
            root,
            EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
            ev,
        )
        .unwrap();
        n += 1;
    }
    conn.flush().unwrap();
    println!("{n}");
}
