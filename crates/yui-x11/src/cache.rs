//! What the host remembers between two reads of the desktop, so that a read asks the X server
//! only for what changed since the last one: while the user drags the window the body sits on,
//! a read is that window's geometry alone, not the whole window list.
//!
//! Every part is forgotten by the X event that changes it (the event thread calls the
//! `forget_*` functions before it signals the change):
//! - each window's fixed properties (`WM_CLASS`, `_NET_WM_PID`, `_NET_WM_WINDOW_TYPE`) on a
//!   PropertyNotify of one of them;
//! - its other properties (names, frame extents, state, desktop, `WM_STATE`) on any other
//!   PropertyNotify of that window, and on Map/Unmap;
//! - its geometry on a ConfigureNotify of the window or of the frame holding it (the root's
//!   child it is in), on a reparent, and when its frame extents change;
//! - the client list, the current desktop and the monitors on the root's PropertyNotify of
//!   those, on the root's ConfigureNotify and on RandR notifications.
//!
//! A read stores what it got only when nothing was forgotten meanwhile (each entry and the
//! lists carry a generation the events bump), and only for windows the host already listens to,
//! so an event raced by a read is never lost: at worst the next read asks again.

use std::collections::{HashMap, HashSet};
use x11rb::protocol::xproto::Window;
use yui_domain::avatar::Monitor;

/// A window's properties that do not change while it is mapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fixed {
    pub instance: String,
    pub class: String,
    pub pid: Option<u32>,
    /// A normal window or a dialog (no docks, desktops, menus, notifications).
    pub normal: bool,
}

/// A window's other properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Props {
    pub title: String,
    /// `_NET_FRAME_EXTENTS`: left, right, top, bottom.
    pub extents: (i32, i32, i32, i32),
    pub hidden: bool,
    pub fullscreen: bool,
    pub maximized: bool,
    pub desktop: Option<u32>,
}

/// Where the client window is: its top-left corner on the root, and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geom {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

#[derive(Debug, Default, Clone)]
pub(crate) struct Entry {
    pub fixed: Option<Fixed>,
    pub props: Option<Props>,
    pub geom: Option<Geom>,
    /// The root's child holding the window (its frame, or itself when not reparented).
    pub top: Option<Window>,
    /// Bumped whenever part of the entry is forgotten.
    pub gen: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Cache {
    /// `_NET_CLIENT_LIST_STACKING` (else `_NET_CLIENT_LIST`), bottom first.
    pub clients: Option<Vec<Window>>,
    pub current_desktop: Option<Option<u32>>,
    pub monitors: Option<Vec<Monitor>>,
    /// Bumped whenever the client list, the current desktop or the monitors are forgotten.
    pub lists_gen: u64,
    pub windows: HashMap<Window, Entry>,
    /// Windows the host selected events on: only these are remembered.
    pub watched: HashSet<Window>,
    /// Bumped by every change at all: a window read before its frame was known (so a move of
    /// that frame could not be matched to it) is stored only if this did not move.
    pub epoch: u64,
}

/// Which of a window's parts a property names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    Fixed,
    Props,
    /// The frame extents: the properties and the geometry.
    Extents,
}

impl Cache {
    fn entry(&mut self, w: Window) -> &mut Entry {
        self.epoch = self.epoch.wrapping_add(1);
        let e = self.windows.entry(w).or_default();
        e.gen = e.gen.wrapping_add(1);
        e
    }

    /// A property of `w` changed, or it was mapped or unmapped.
    pub fn forget_window(&mut self, w: Window, part: Part) {
        self.epoch = self.epoch.wrapping_add(1);
        if !self.watched.contains(&w) {
            return;
        }
        let e = self.entry(w);
        match part {
            Part::Fixed => e.fixed = None,
            Part::Props => e.props = None,
            Part::Extents => {
                e.props = None;
                e.geom = None;
            }
        }
    }

    /// `w` moved or was resized: a client itself, or the frame holding clients.
    pub fn forget_geometry(&mut self, w: Window) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.watched.contains(&w) {
            self.entry(w).geom = None;
        }
        let held: Vec<Window> = self
            .windows
            .iter()
            .filter(|(id, e)| **id != w && e.top == Some(w))
            .map(|(id, _)| *id)
            .collect();
        for id in held {
            let e = self.entry(id);
            e.geom = None;
        }
    }

    /// `w` was reparented: its frame and geometry are read again.
    pub fn forget_frame(&mut self, w: Window) {
        self.epoch = self.epoch.wrapping_add(1);
        if let Some(e) = self.windows.get_mut(&w) {
            e.gen = e.gen.wrapping_add(1);
            e.geom = None;
            e.top = None;
        }
    }

    pub fn forget_clients(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.clients = None;
        self.lists_gen = self.lists_gen.wrapping_add(1);
    }

    /// The current desktop or the work area changed: the monitors' work areas with them.
    pub fn forget_desktop(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.current_desktop = None;
        self.monitors = None;
        self.lists_gen = self.lists_gen.wrapping_add(1);
    }

    pub fn forget_monitors(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.monitors = None;
        self.lists_gen = self.lists_gen.wrapping_add(1);
    }

    /// The root was resized: monitors, and every window's place with them.
    pub fn forget_all(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.clients = None;
        self.current_desktop = None;
        self.monitors = None;
        self.lists_gen = self.lists_gen.wrapping_add(1);
        for e in self.windows.values_mut() {
            *e = Entry {
                gen: e.gen.wrapping_add(1),
                ..Entry::default()
            };
        }
    }

    pub fn destroyed(&mut self, w: Window) {
        self.epoch = self.epoch.wrapping_add(1);
        self.windows.remove(&w);
        self.watched.remove(&w);
    }

    /// The client list is `clients` now: forget windows no longer in it.
    pub fn watching(&mut self, clients: &[Window]) {
        self.epoch = self.epoch.wrapping_add(1);
        self.watched = clients.iter().copied().collect();
        let watched = &self.watched;
        self.windows.retain(|w, _| watched.contains(w));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cached(c: &mut Cache, w: Window, top: Window) {
        c.watched.insert(w);
        c.windows.insert(
            w,
            Entry {
                fixed: Some(Fixed {
                    instance: "i".into(),
                    class: "C".into(),
                    pid: Some(1),
                    normal: true,
                }),
                props: Some(Props {
                    title: "t".into(),
                    extents: (0, 0, 0, 0),
                    hidden: false,
                    fullscreen: false,
                    maximized: false,
                    desktop: None,
                }),
                geom: Some(Geom {
                    x: 1,
                    y: 2,
                    width: 3,
                    height: 4,
                }),
                top: Some(top),
                gen: 0,
            },
        );
    }

    #[test]
    fn a_frame_move_forgets_only_the_geometry_of_the_window_it_holds() {
        let mut c = Cache::default();
        cached(&mut c, 10, 100);
        cached(&mut c, 20, 200);
        c.forget_geometry(100);
        assert!(c.windows[&10].geom.is_none());
        assert!(c.windows[&10].fixed.is_some() && c.windows[&10].props.is_some());
        assert_eq!(c.windows[&10].gen, 1);
        assert!(c.windows[&20].geom.is_some());
        assert_eq!(c.windows[&20].gen, 0);
        c.forget_geometry(20);
        assert!(c.windows[&20].geom.is_none());
    }

    #[test]
    fn property_changes_forget_their_part_and_unwatched_windows_are_not_kept() {
        let mut c = Cache::default();
        cached(&mut c, 10, 100);
        c.forget_window(10, Part::Props);
        assert!(c.windows[&10].props.is_none() && c.windows[&10].fixed.is_some());
        c.forget_window(10, Part::Extents);
        assert!(c.windows[&10].geom.is_none());
        c.forget_window(10, Part::Fixed);
        assert!(c.windows[&10].fixed.is_none());
        c.forget_window(99, Part::Props);
        assert!(!c.windows.contains_key(&99));
        c.watching(&[20]);
        assert!(c.windows.is_empty());
    }
}
