//! Placement geometry of the body, pure and tested: rectangles, monitors, the named spots of a
//! monitor, where the body goes to sit on a window's top edge or peek around an edge, clamping
//! to a monitor's work area, the app matching rule, and whether a window can be sat on now.
//!
//! All coordinates are physical pixels of the virtual desktop (the X11 root window).

use serde::{Deserialize, Serialize};

/// A rectangle: top-left corner and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub w: u32,
    pub h: u32,
}

impl Rect {
    pub const fn new(x: i32, y: i32, w: u32, h: u32) -> Self {
        Self { x, y, w, h }
    }
    pub fn right(&self) -> i32 {
        self.x.saturating_add(self.w as i32)
    }
    pub fn bottom(&self) -> i32 {
        self.y.saturating_add(self.h as i32)
    }
    pub fn contains(&self, (px, py): (i32, i32)) -> bool {
        px >= self.x && px < self.right() && py >= self.y && py < self.bottom()
    }
    /// Area of the overlap with `o` (0 when apart).
    pub fn overlap(&self, o: &Rect) -> u64 {
        let w = (self.right().min(o.right()) - self.x.max(o.x)).max(0) as u64;
        let h = (self.bottom().min(o.bottom()) - self.y.max(o.y)).max(0) as u64;
        w * h
    }
    pub fn center(&self) -> (i32, i32) {
        (self.x + self.w as i32 / 2, self.y + self.h as i32 / 2)
    }
}

/// A display, numbered from 1 in the order the host finds them (docs/avatar.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Monitor {
    pub number: u32,
    /// The output's name where the host knows it (e.g. `HDMI-1`).
    pub name: String,
    pub rect: Rect,
    /// The part not taken by panels and docks.
    pub work_area: Rect,
    pub primary: bool,
}

/// Another app's top-level window, as the host sees it now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DesktopWindow {
    /// The host's window id.
    pub id: u64,
    /// WM_CLASS class (e.g. `XTerm`).
    pub class: String,
    /// WM_CLASS instance (e.g. `xterm`).
    pub instance: String,
    pub title: String,
    /// The outer rectangle, frame included.
    pub frame: Rect,
    /// Minimised (or otherwise hidden).
    pub hidden: bool,
    pub fullscreen: bool,
    pub maximized: bool,
    /// Virtual desktop; `None` = on every desktop.
    pub desktop: Option<u32>,
    /// One of YUI's own windows (never a perch, never covers one).
    pub own: bool,
}

/// What the host sees: monitors and the top-level windows in stacking order, bottom first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Desktop {
    pub monitors: Vec<Monitor>,
    pub windows: Vec<DesktopWindow>,
    pub current_desktop: Option<u32>,
}

/// Gap between the body and the work area's edges at a named spot.
pub const SPOT_MARGIN: i32 = 16;
/// How far the body's window sinks below the perch's top edge when it sits (its legs hang over).
pub const SIT_SINK: i32 = 8;

/// The named spots every monitor has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spot {
    BottomLeft,
    BottomCenter,
    BottomRight,
    TopLeft,
    TopRight,
    Center,
}

impl Spot {
    pub const ALL: [Spot; 6] = [
        Spot::BottomLeft,
        Spot::BottomCenter,
        Spot::BottomRight,
        Spot::TopLeft,
        Spot::TopRight,
        Spot::Center,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Spot::BottomLeft => "bottom-left",
            Spot::BottomCenter => "bottom-center",
            Spot::BottomRight => "bottom-right",
            Spot::TopLeft => "top-left",
            Spot::TopRight => "top-right",
            Spot::Center => "center",
        }
    }
    /// A built-in spot by name: case-insensitive, `_` or space for `-`.
    pub fn parse(name: &str) -> Option<Spot> {
        let n = normalize_spot(name);
        Spot::ALL.into_iter().find(|s| s.name() == n)
    }
}

/// How a spot name is compared: trimmed, lower case, `_` and spaces as `-`.
pub fn normalize_spot(name: &str) -> String {
    name.trim()
        .to_lowercase()
        .chars()
        .map(|c| if c == '_' || c == ' ' { '-' } else { c })
        .collect()
}

/// Top-left of the body (size `body`) at `spot` of the work area `wa`.
pub fn spot_position(spot: Spot, wa: Rect, body: (u32, u32)) -> (i32, i32) {
    let (bw, bh) = (body.0 as i32, body.1 as i32);
    let left = wa.x + SPOT_MARGIN;
    let right = wa.right() - bw - SPOT_MARGIN;
    let top = wa.y + SPOT_MARGIN;
    let floor = floor_y(wa, body);
    let cx = wa.x + (wa.w as i32 - bw) / 2;
    let p = match spot {
        Spot::BottomLeft => (left, floor),
        Spot::BottomCenter => (cx, floor),
        Spot::BottomRight => (right, floor),
        Spot::TopLeft => (left, top),
        Spot::TopRight => (right, top),
        Spot::Center => (cx, wa.y + (wa.h as i32 - bh) / 2),
    };
    clamp_to(wa, body, p)
}

/// The y of a body standing on the work area's bottom edge (the "floor").
pub fn floor_y(wa: Rect, body: (u32, u32)) -> i32 {
    wa.bottom() - body.1 as i32
}

/// `pos` moved the least so the whole body lies inside `wa` (a body larger than `wa` keeps its
/// top-left corner at `wa`'s).
pub fn clamp_to(wa: Rect, body: (u32, u32), (x, y): (i32, i32)) -> (i32, i32) {
    let max_x = (wa.right() - body.0 as i32).max(wa.x);
    let max_y = (wa.bottom() - body.1 as i32).max(wa.y);
    (x.clamp(wa.x, max_x), y.clamp(wa.y, max_y))
}

/// The monitor containing `point`, else the one nearest to it. `None` only without monitors.
pub fn monitor_at(monitors: &[Monitor], point: (i32, i32)) -> Option<&Monitor> {
    monitors
        .iter()
        .find(|m| m.rect.contains(point))
        .or_else(|| {
            monitors.iter().min_by_key(|m| {
                let (cx, cy) = (
                    point.0.clamp(m.rect.x, m.rect.right() - 1),
                    point.1.clamp(m.rect.y, m.rect.bottom() - 1),
                );
                let (dx, dy) = ((cx - point.0) as i64, (cy - point.1) as i64);
                dx * dx + dy * dy
            })
        })
}

/// The monitor a rectangle is mostly on (the one holding its centre when it overlaps none).
pub fn monitor_of(monitors: &[Monitor], r: Rect) -> Option<&Monitor> {
    monitors
        .iter()
        .filter(|m| m.rect.overlap(&r) > 0)
        .max_by_key(|m| m.rect.overlap(&r))
        .or_else(|| monitor_at(monitors, r.center()))
}

/// Where the body sits on `perch`'s top edge: its window's bottom sinks [`SIT_SINK`] below the
/// edge; x stays near `current_x` but the body is kept over the edge and inside the work area.
/// `None` when there is no room above the edge in the work area (the body would leave the
/// screen), e.g. a window touching the top of the screen.
pub fn sit_position(perch: Rect, wa: Rect, body: (u32, u32), current_x: i32) -> Option<(i32, i32)> {
    let (bw, bh) = (body.0 as i32, body.1 as i32);
    let y = perch.y + SIT_SINK - bh;
    if y < wa.y {
        return None;
    }
    // Over the edge: the body's middle between the edge's ends (whole body when it fits).
    let (lo, hi) = if perch.w as i32 >= bw {
        (perch.x, perch.right() - bw)
    } else {
        let mid = perch.x + perch.w as i32 / 2 - bw / 2;
        (mid, mid)
    };
    let x = current_x.clamp(lo, hi.max(lo));
    let max_x = (wa.right() - bw).max(wa.x);
    Some((x.clamp(wa.x, max_x), y))
}

/// Which way the body peeks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Left,
    Right,
}

impl Side {
    pub fn parse(s: &str) -> Option<Side> {
        match s {
            "left" => Some(Side::Left),
            "right" => Some(Side::Right),
            _ => None,
        }
    }
}

/// Peeking around the left or right edge of `edge` (the perch window's frame, or the work area):
/// half the body past the edge, at height `y`.
pub fn peek_position(edge: Rect, side: Side, body: (u32, u32), y: i32) -> (i32, i32) {
    let half = body.0 as i32 / 2;
    match side {
        Side::Left => (edge.x - half, y),
        Side::Right => (edge.right() - half, y),
    }
}

/// How a window matched an `app` query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    /// The query is the WM_CLASS class or instance.
    Exact,
    /// The query is part of the class, the instance or the title.
    Partial,
}

/// The app matching rule (docs/avatar.md): case-insensitive; exact WM_CLASS class or instance,
/// else a substring of the class, instance or title. An empty query matches nothing.
pub fn match_app(w: &DesktopWindow, query: &str) -> Option<Match> {
    let q = query.trim().to_lowercase();
    if q.is_empty() {
        return None;
    }
    let (class, instance, title) = (
        w.class.to_lowercase(),
        w.instance.to_lowercase(),
        w.title.to_lowercase(),
    );
    if class == q || instance == q {
        Some(Match::Exact)
    } else if class.contains(&q) || instance.contains(&q) || title.contains(&q) {
        Some(Match::Partial)
    } else {
        None
    }
}

/// Whether the window at `index` of `desk.windows` can be sat on now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Perch {
    Free,
    Minimized,
    OtherDesktop,
    Fullscreen,
    Maximized,
    /// Windows above it leave less than the body's width of its top edge uncovered.
    Covered,
    /// Its top edge is off every monitor's work area, or too near the top for the body.
    NoRoom,
}

impl Perch {
    pub fn is_free(self) -> bool {
        self == Perch::Free
    }
    /// Shown at all (not minimised, on this desktop).
    pub fn is_visible(self) -> bool {
        !matches!(self, Perch::Minimized | Perch::OtherDesktop)
    }
}

/// Whether the window at `index` can be sat on by a body of width `body.0` (and height
/// `body.1`, for the room above its edge).
pub fn perch_status(desk: &Desktop, index: usize, body: (u32, u32)) -> Perch {
    let Some(w) = desk.windows.get(index) else {
        return Perch::NoRoom;
    };
    if w.hidden {
        return Perch::Minimized;
    }
    if !on_current_desktop(desk, w) {
        return Perch::OtherDesktop;
    }
    if w.fullscreen {
        return Perch::Fullscreen;
    }
    if w.maximized {
        return Perch::Maximized;
    }
    let Some(m) = monitor_of(&desk.monitors, w.frame) else {
        return Perch::NoRoom;
    };
    if sit_position(w.frame, m.work_area, body, w.frame.x).is_none() {
        return Perch::NoRoom;
    }
    // The visible part of the top edge: the edge's x-span minus the spans of shown windows
    // above it that cross the edge's row, kept inside the work area.
    let row = w.frame.y;
    let mut open = vec![(
        w.frame.x.max(m.work_area.x),
        w.frame.right().min(m.work_area.right()),
    )];
    for above in &desk.windows[index + 1..] {
        if above.own || above.hidden || !on_current_desktop(desk, above) {
            continue;
        }
        // Just above the edge counts too: the body would sit in front of that window's content.
        if above.frame.y <= row && above.frame.bottom() > row - body.1 as i32 / 2 {
            open = subtract(&open, (above.frame.x, above.frame.right()));
        }
    }
    let widest = open.iter().map(|(a, b)| b - a).max().unwrap_or(0);
    if widest < body.0 as i32 {
        Perch::Covered
    } else {
        Perch::Free
    }
}

fn on_current_desktop(desk: &Desktop, w: &DesktopWindow) -> bool {
    match (w.desktop, desk.current_desktop) {
        (Some(d), Some(c)) => d == c,
        _ => true,
    }
}

/// Intervals `spans` minus `cut` (half-open).
fn subtract(spans: &[(i32, i32)], cut: (i32, i32)) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    for &(a, b) in spans {
        if cut.1 <= a || cut.0 >= b {
            out.push((a, b));
            continue;
        }
        if cut.0 > a {
            out.push((a, cut.0));
        }
        if cut.1 < b {
            out.push((cut.1, b));
        }
    }
    out
}

/// The eligible windows matching `app`, best first: exact matches before partial ones, then
/// topmost first. Own windows never match.
pub fn find_perches(desk: &Desktop, app: &str) -> Vec<(usize, Match)> {
    let mut found: Vec<(usize, Match)> = desk
        .windows
        .iter()
        .enumerate()
        .filter(|(_, w)| !w.own)
        .filter_map(|(i, w)| match_app(w, app).map(|m| (i, m)))
        .collect();
    found.sort_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)));
    found
}
