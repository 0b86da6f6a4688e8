//! Where the characters' windows open, pure and tested: the default row along the bottom right
//! of the primary monitor, whether a saved layout can be trusted, and whether the windowing
//! system can tell a window's position at all.
//!
//! A saved layout is laid out afresh when two characters are stacked on each other (one covers
//! more than half of the other) or one sits off every monitor (its centre is on none): what a
//! session that could not know positions leaves behind (GTK under Wayland reports every window
//! at (0, 0)), or a monitor that is gone. Coordinates are physical pixels of the virtual desktop.
//!
//! The user's scale of the characters' size (`yui.character.scale`, Settings → Characters) is
//! declared here too: every character window and the character drawn in it grow or shrink by
//! it, whatever the look (a VRM window keeps its model's proportions), and placement uses the
//! scaled sizes.

use crate::avatar::geometry::Rect;
use crate::error::{CoreError, Result};
use crate::store::{kv, Store};
use serde_json::{json, Value};

/// Logical size of the main character's window.
pub const MAIN_SIZE: (f64, f64) = (220.0, 300.0);
/// Logical size of a pet window (the other open characters).
pub const PET_SIZE: (f64, f64) = (170.0, 232.0);
/// The monitor assumed when none is known.
const FALLBACK_MONITOR: Rect = Rect::new(0, 0, 1280, 800);
/// How many places along the row a character without a saved position may try.
const MAX_SLOTS: usize = 64;

/// The logical size of a character's window: the main character is drawn larger than pets.
pub fn character_size(is_main: bool) -> (f64, f64) {
    if is_main {
        MAIN_SIZE
    } else {
        PET_SIZE
    }
}

/// The settings key of the user's scale of every character's size: a number, 1 the usual size.
pub const SCALE_KEY: &str = "yui.character.scale";
/// The smallest and largest scale: half and twice the usual size.
pub const SCALE_MIN: f64 = 0.5;
pub const SCALE_MAX: f64 = 2.0;
/// The drawn character's box in its window (logical px, height): the main one's, a pet's.
const DRAWN_MAIN: f64 = 200.0;
const DRAWN_PET: f64 = 150.0;

/// [`SCALE_KEY`] when it was never set: the usual size.
pub fn scale_default() -> Value {
    json!(1.0)
}

/// A scale as stored, or why it cannot be one.
pub fn scale_from_value(v: &Value) -> Result<f64> {
    let Some(scale) = v.as_f64().filter(|f| f.is_finite()) else {
        return Err(CoreError::invalid(format!(
            "{SCALE_KEY} must be a number from {SCALE_MIN} to {SCALE_MAX} (1 is the usual size), not {v}"
        )));
    };
    if !(SCALE_MIN..=SCALE_MAX).contains(&scale) {
        return Err(CoreError::invalid(format!(
            "a character can be shown from 50 % to 200 % of its usual size, not {} %",
            (scale * 100.0).round()
        )));
    }
    Ok(scale)
}

/// The user's scale now (the usual size when unset or unreadable).
pub fn scale(store: &Store) -> f64 {
    kv::get(store, SCALE_KEY)
        .ok()
        .flatten()
        .and_then(|v| scale_from_value(&v).ok())
        .unwrap_or(1.0)
}

/// Keep a new scale (refused in one sentence outside 0.5–2, changing nothing).
pub fn set_scale(store: &Store, scale: f64) -> Result<f64> {
    let scale = scale_from_value(&json!(scale))?;
    kv::put(store, SCALE_KEY, &json!(scale))?;
    Ok(scale)
}

/// A logical window size at the user's `scale`, in whole logical pixels (proportions kept).
pub fn scaled((w, h): (f64, f64), scale: f64) -> (f64, f64) {
    ((w * scale).round(), (h * scale).round())
}

/// The drawn character's height in its window (logical px) at the user's `scale`.
pub fn drawn_size(is_main: bool, scale: f64) -> f64 {
    let px = if is_main { DRAWN_MAIN } else { DRAWN_PET };
    (px * scale).round()
}

/// The primary monitor as placement sees it: its rectangle and scale factor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Screen {
    pub rect: Rect,
    pub scale: f64,
}

/// One open character: whether it is the main one, where it was saved (if anywhere), and the
/// user's scale of its size ([`SCALE_KEY`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Seat {
    pub is_main: bool,
    pub saved: Option<(i32, i32)>,
    pub zoom: f64,
}

fn physical_size(seat: &Seat, scale: f64) -> (u32, u32) {
    let (w, h) = scaled(character_size(seat.is_main), seat.zoom);
    ((w * scale).round() as u32, (h * scale).round() as u32)
}

/// Where the character in `slot` goes without a saved position: along the bottom of the primary
/// monitor from its right edge, main rightmost (slot 0), pets to its left; kept on the monitor.
/// `zoom`: the user's scale of the characters' size.
pub fn default_position(
    primary: Option<Screen>,
    slot: usize,
    is_main: bool,
    zoom: f64,
) -> (i32, i32) {
    let s = primary.unwrap_or(Screen {
        rect: FALLBACK_MONITOR,
        scale: 1.0,
    });
    let (r, scale) = (s.rect, s.scale);
    let h = character_size(is_main).1 * zoom;
    let step = (PET_SIZE.0 * zoom + 10.0) * scale;
    let x = r.w as f64 - (MAIN_SIZE.0 * zoom + 40.0) * scale - step * slot as f64;
    let y = r.h as f64 - (h + 60.0) * scale;
    (r.x + x.max(0.0) as i32, r.y + y.max(0.0) as i32)
}

/// Whether two windows are stacked: their overlap is more than half the smaller one.
fn stacked(a: &Rect, b: &Rect) -> bool {
    let smaller = (a.w as u64 * a.h as u64).min(b.w as u64 * b.h as u64);
    a.overlap(b) * 2 > smaller
}

/// Whether a window is on no monitor (its centre on none). Unknown monitors judge nothing.
fn off_every_monitor(r: &Rect, monitors: &[Rect]) -> bool {
    !monitors.is_empty() && !monitors.iter().any(|m| m.contains(r.center()))
}

/// Whether the saved positions of `seats` can be used: no two stacked, none off every monitor.
pub fn saved_layout_is_sound(seats: &[Seat], monitors: &[Rect], scale: f64) -> bool {
    let rects: Vec<Rect> = saved_rects(seats, scale).collect();
    let apart = rects
        .iter()
        .enumerate()
        .all(|(i, a)| rects[i + 1..].iter().all(|b| !stacked(a, b)));
    apart && !rects.iter().any(|r| off_every_monitor(r, monitors))
}

fn saved_rects(seats: &[Seat], scale: f64) -> impl Iterator<Item = Rect> + '_ {
    seats.iter().filter_map(move |s| {
        let (x, y) = s.saved?;
        let (w, h) = physical_size(s, scale);
        Some(Rect::new(x, y, w, h))
    })
}

/// The top-left corner of each of `seats` (main first, in the order given): the saved positions
/// when the saved layout is sound, else every one laid out afresh along the default row. A
/// character without a saved position takes the first place of the row, from its own slot on,
/// that is stacked on no one placed before it.
pub fn lay_out(seats: &[Seat], monitors: &[Rect], primary: Option<Screen>) -> Vec<(i32, i32)> {
    let scale = primary.map_or(1.0, |p| p.scale);
    let trusted = saved_layout_is_sound(seats, monitors, scale);
    let mut placed: Vec<Rect> = if trusted {
        saved_rects(seats, scale).collect()
    } else {
        Vec::new()
    };
    let mut out = Vec::with_capacity(seats.len());
    for (slot, seat) in seats.iter().enumerate() {
        if let (true, Some(pos)) = (trusted, seat.saved) {
            out.push(pos);
            continue;
        }
        let (w, h) = physical_size(seat, scale);
        let free = (slot..slot + MAX_SLOTS)
            .map(|s| default_position(primary, s, seat.is_main, seat.zoom))
            .find(|&(x, y)| {
                let r = Rect::new(x, y, w, h);
                !placed.iter().any(|p| stacked(p, &r))
            });
        let pos = free.unwrap_or_else(|| default_position(primary, slot, seat.is_main, seat.zoom));
        placed.push(Rect::new(pos.0, pos.1, w, h));
        out.push(pos);
    }
    out
}

/// Where one character opens on its own (opened or created from Settings): its saved place when
/// that is on a monitor, else the default row's place for `slot`.
pub fn place_one(
    seat: Seat,
    slot: usize,
    monitors: &[Rect],
    primary: Option<Screen>,
) -> (i32, i32) {
    let scale = primary.map_or(1.0, |p| p.scale);
    match seat.saved {
        Some(pos) if saved_layout_is_sound(&[seat], monitors, scale) => pos,
        _ => default_position(primary, slot, seat.is_main, seat.zoom),
    }
}

/// The windowing system the app's windows live in, as far as positions go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSystem {
    X11,
    /// A Wayland compositor: clients neither learn nor set where their windows are.
    Wayland,
    /// macOS, Windows: positions are known.
    Other,
}

impl WindowSystem {
    /// Which system GTK runs on: the GDK display's type name when known (`GdkWaylandDisplay`,
    /// `GdkX11Display`), else GTK's own choice from `GDK_BACKEND` and `WAYLAND_DISPLAY` (the
    /// first backend named that is x11 or wayland; with none named, Wayland when a Wayland
    /// display is set).
    pub fn of_gtk(
        display_type: Option<&str>,
        gdk_backend: Option<&str>,
        wayland_display: Option<&str>,
    ) -> Self {
        if let Some(t) = display_type {
            if t.contains("Wayland") {
                return Self::Wayland;
            }
            if t.contains("X11") {
                return Self::X11;
            }
        }
        let named = gdk_backend.into_iter().flat_map(|b| b.split(','));
        for b in named.map(str::trim) {
            match b {
                "x11" => return Self::X11,
                "wayland" if wayland_display.is_some_and(|d| !d.is_empty()) => {
                    return Self::Wayland
                }
                _ => {}
            }
        }
        if wayland_display.is_some_and(|d| !d.is_empty()) {
            Self::Wayland
        } else {
            Self::X11
        }
    }

    /// Whether a window's reported position is where it is. Under Wayland GTK reports (0, 0) for
    /// every window: saving that would stack every character in one corner next time.
    pub fn knows_positions(self) -> bool {
        self != Self::Wayland
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: Rect = Rect::new(0, 0, 1920, 1080);
    const PRIMARY: Screen = Screen {
        rect: SCREEN,
        scale: 1.0,
    };

    fn seat(is_main: bool, saved: Option<(i32, i32)>) -> Seat {
        Seat {
            is_main,
            saved,
            zoom: 1.0,
        }
    }

    #[test]
    fn default_row_runs_left_from_the_bottom_right_of_the_primary_monitor() {
        assert_eq!(default_position(Some(PRIMARY), 0, true, 1.0), (1660, 720));
        assert_eq!(default_position(Some(PRIMARY), 1, false, 1.0), (1480, 788));
        assert_eq!(default_position(Some(PRIMARY), 2, false, 1.0), (1300, 788));
        // A primary monitor right of another starts from its own corner, scaled.
        let right = Screen {
            rect: Rect::new(1920, 0, 2560, 1440),
            scale: 2.0,
        };
        assert_eq!(
            default_position(Some(right), 0, true, 1.0),
            (1920 + 2040, 720)
        );
        // No monitor known: a 1280×800 screen; never off its left or top edge.
        assert_eq!(default_position(None, 0, true, 1.0), (1020, 440));
        assert_eq!(default_position(None, 50, false, 1.0), (0, 508));
    }

    /// The Wayland session's leftover: every character saved at (0, 0).
    #[test]
    fn wayland_stacked_layout_is_laid_out_afresh() {
        let seats = [
            seat(true, Some((0, 0))),
            seat(false, Some((0, 0))),
            seat(false, Some((0, 0))),
        ];
        assert!(!saved_layout_is_sound(&seats, &[SCREEN], 1.0));
        let fresh = lay_out(&seats, &[SCREEN], Some(PRIMARY));
        assert_eq!(fresh, vec![(1660, 720), (1480, 788), (1300, 788)]);
    }

    #[test]
    fn a_character_off_every_monitor_lays_the_layout_out_afresh() {
        // The second monitor is gone: kai's centre is on no monitor left.
        let seats = [seat(true, Some((100, 100))), seat(false, Some((2500, 300)))];
        let fresh = lay_out(&seats, &[SCREEN], Some(PRIMARY));
        assert_eq!(fresh, vec![(1660, 720), (1480, 788)]);
        // With that monitor back, the user's layout stays.
        let both = [SCREEN, Rect::new(1920, 0, 1920, 1080)];
        assert_eq!(
            lay_out(&seats, &both, Some(PRIMARY)),
            vec![(100, 100), (2500, 300)]
        );
    }

    #[test]
    fn a_sound_layout_is_kept_even_with_a_little_overlap() {
        // Side by side, touching by 40 px of width: not stacked.
        let seats = [seat(true, Some((500, 500))), seat(false, Some((680, 520)))];
        assert!(saved_layout_is_sound(&seats, &[SCREEN], 1.0));
        assert_eq!(
            lay_out(&seats, &[SCREEN], Some(PRIMARY)),
            vec![(500, 500), (680, 520)]
        );
        // Half a window over the edge, centre still on screen: kept.
        let edge = [seat(true, Some((1800, 100)))];
        assert_eq!(lay_out(&edge, &[SCREEN], Some(PRIMARY)), vec![(1800, 100)]);
    }

    #[test]
    fn a_character_without_a_saved_place_takes_a_free_place_in_the_row() {
        // kai was dragged onto the row's third place: the new pet of that slot moves along.
        let seats = [
            seat(true, None),
            seat(false, Some((1300, 788))),
            seat(false, None),
        ];
        let out = lay_out(&seats, &[SCREEN], Some(PRIMARY));
        assert_eq!(out, vec![(1660, 720), (1300, 788), (1120, 788)]);
    }

    #[test]
    fn one_character_opens_where_it_was_saved_if_that_is_on_a_monitor() {
        let kai = seat(false, Some((300, 200)));
        assert_eq!(place_one(kai, 3, &[SCREEN], Some(PRIMARY)), (300, 200));
        let gone = seat(false, Some((4000, 200)));
        assert_eq!(place_one(gone, 1, &[SCREEN], Some(PRIMARY)), (1480, 788));
        assert_eq!(
            place_one(seat(false, None), 2, &[SCREEN], Some(PRIMARY)),
            (1300, 788)
        );
    }

    #[test]
    fn unknown_monitors_judge_only_stacking() {
        let seats = [seat(true, Some((-5000, -5000)))];
        assert_eq!(lay_out(&seats, &[], None), vec![(-5000, -5000)]);
    }

    #[test]
    fn wayland_positions_are_never_known() {
        use WindowSystem::*;
        let of = WindowSystem::of_gtk;
        assert_eq!(of(Some("GdkWaylandDisplay"), None, None), Wayland);
        assert_eq!(of(Some("GdkX11Display"), None, Some("wayland-0")), X11);
        assert_eq!(of(None, Some("wayland"), Some("wayland-0")), Wayland);
        assert_eq!(of(None, Some("x11"), Some("wayland-0")), X11);
        assert_eq!(of(None, Some("wayland,x11"), None), X11);
        assert_eq!(of(None, None, Some("wayland-0")), Wayland);
        assert_eq!(of(None, None, Some("")), X11);
        assert_eq!(of(None, None, None), X11);
        assert!(!Wayland.knows_positions());
        assert!(X11.knows_positions() && Other.knows_positions());
    }

    /// The user's scale grows the windows: the row keeps them on the monitor and apart.
    #[test]
    fn a_scaled_row_stays_on_the_monitor_and_apart() {
        assert_eq!(default_position(Some(PRIMARY), 0, true, 2.0), (1440, 420));
        assert_eq!(default_position(Some(PRIMARY), 0, true, 0.5), (1770, 870));
        let big = |is_main| Seat {
            is_main,
            saved: None,
            zoom: 2.0,
        };
        let out = lay_out(
            &[big(true), big(false), big(false)],
            &[SCREEN],
            Some(PRIMARY),
        );
        let rects: Vec<Rect> = out
            .iter()
            .zip([true, false, false])
            .map(|(&(x, y), m)| {
                let (w, h) = physical_size(&big(m), 1.0);
                Rect::new(x, y, w, h)
            })
            .collect();
        for (i, a) in rects.iter().enumerate() {
            assert!(
                a.x >= 0 && a.y >= 0 && a.x + a.w as i32 <= 1920 && a.y + a.h as i32 <= 1080,
                "{a:?}"
            );
            for b in &rects[i + 1..] {
                assert_eq!(a.overlap(b), 0, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn the_scale_is_a_number_from_half_to_twice_the_usual_size() {
        assert_eq!(scale_from_value(&json!(1.25)).unwrap(), 1.25);
        assert_eq!(scale_from_value(&scale_default()).unwrap(), 1.0);
        let e = scale_from_value(&json!(3)).unwrap_err();
        assert_eq!(
            e.message,
            "a character can be shown from 50 % to 200 % of its usual size, not 300 %"
        );
        assert!(scale_from_value(&json!(0.2)).is_err());
        let e = scale_from_value(&json!("big")).unwrap_err();
        assert!(
            e.message
                .starts_with("yui.character.scale must be a number from 0.5 to 2"),
            "{}",
            e.message
        );
        assert_eq!(scaled(MAIN_SIZE, 1.5), (330.0, 450.0));
        assert_eq!(scaled(PET_SIZE, 0.5), (85.0, 116.0));
        assert_eq!(drawn_size(true, 1.5), 300.0);
        assert_eq!(drawn_size(false, 1.0), 150.0);
    }
}
