//! Where a character window takes clicks (docs/avatar.md, "Click-through"). The page knows where
//! it draws (the character's outline, its bubble, its buttons) and sends that as a few
//! rectangles whenever it changes; [`region`] checks them here and the shell hands the result to
//! the window system as the window's input region (an X11 input shape, a Wayland surface's input
//! region). A click anywhere else goes to the window below. The window system does the hit test,
//! so nothing runs at rest.
//!
//! `None` is the whole window: no outline yet, or click-through switched off ([`KEY`]). A window
//! is never left with no place to click: an empty list is refused, not applied.

use crate::error::{CoreError, Result};
use crate::store::{kv, Store};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The switch: `{"enabled": true}` (the default) lets clicks through where nothing is drawn.
pub const KEY: &str = "yui.click_through";

/// The most rectangles one outline may have: a coarse mask merges into far fewer; a page sending
/// more is broken, and a region that large would only cost the window system.
pub const MAX_RECTS: usize = 512;

/// One rectangle of the outline, in the window's logical pixels (CSS pixels in the page) from
/// its top-left corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputRect {
    pub x: i64,
    pub y: i64,
    pub w: i64,
    pub h: i64,
}

pub fn default_value() -> Value {
    json!({"enabled": true})
}

/// [`KEY`]'s value: whether click-through is on.
pub fn from_value(v: &Value) -> Result<bool> {
    v.get("enabled")
        .and_then(Value::as_bool)
        .ok_or_else(|| CoreError::invalid(format!("{KEY} must be {{\"enabled\": true|false}}")))
}

/// Whether click-through is on now; an unreadable value reads as the default (on).
pub fn enabled(store: &Store) -> bool {
    kv::get(store, KEY)
        .ok()
        .flatten()
        .and_then(|v| from_value(&v).ok())
        .unwrap_or(true)
}

/// The input region a character window gets for the page's `rects`, in a window of `size`
/// (logical pixels): the checked rectangles, or `None` (the whole window) when the page has no
/// outline yet or click-through is off.
pub fn region(
    store: &Store,
    rects: Option<Vec<InputRect>>,
    size: (f64, f64),
) -> Result<Option<Vec<InputRect>>> {
    let checked = check(rects, size)?;
    Ok(checked.filter(|_| enabled(store)))
}

/// The page's rectangles, checked against a window of `size`: at most [`MAX_RECTS`], each with a
/// positive width and height and at least partly inside the window; what hangs over the edge is
/// cut off (the page rounds its CSS pixels, the window system its own). `None` stays `None`.
pub fn check(rects: Option<Vec<InputRect>>, size: (f64, f64)) -> Result<Option<Vec<InputRect>>> {
    let Some(rects) = rects else {
        return Ok(None);
    };
    if rects.is_empty() {
        return Err(CoreError::invalid(
            "an input region needs at least one rectangle (none would leave the window unclickable; send null for the whole window)",
        ));
    }
    if rects.len() > MAX_RECTS {
        return Err(CoreError::invalid(format!(
            "an input region may have at most {MAX_RECTS} rectangles, not {}",
            rects.len()
        )));
    }
    let (ww, wh) = (size.0.round() as i64, size.1.round() as i64);
    let mut out = Vec::with_capacity(rects.len());
    for (i, r) in rects.into_iter().enumerate() {
        if r.w <= 0 || r.h <= 0 {
            return Err(CoreError::invalid(format!(
                "input region rectangle {i} has no area ({}×{})",
                r.w, r.h
            )));
        }
        let (x0, y0) = (r.x.max(0), r.y.max(0));
        let (x1, y1) = (
            r.x.saturating_add(r.w).min(ww),
            r.y.saturating_add(r.h).min(wh),
        );
        if x1 <= x0 || y1 <= y0 {
            return Err(CoreError::invalid(format!(
                "input region rectangle {i} ({}, {}, {}×{}) is outside the {ww}×{wh} window",
                r.x, r.y, r.w, r.h
            )));
        }
        out.push(InputRect {
            x: x0,
            y: y0,
            w: x1 - x0,
            h: y1 - y0,
        });
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn r(x: i64, y: i64, w: i64, h: i64) -> InputRect {
        InputRect { x, y, w, h }
    }

    #[test]
    fn rectangles_inside_the_window_pass_unchanged() {
        let rects = vec![r(10, 20, 30, 40), r(0, 0, 200, 250)];
        assert_eq!(
            check(Some(rects.clone()), (200.0, 250.0)).unwrap(),
            Some(rects)
        );
    }

    #[test]
    fn no_outline_is_the_whole_window() {
        assert_eq!(check(None, (200.0, 250.0)).unwrap(), None);
    }

    #[test]
    fn what_hangs_over_an_edge_is_cut_off() {
        let got = check(
            Some(vec![r(-4, 240, 30, 20), r(190, -2, 20, 5)]),
            (200.0, 250.0),
        );
        assert_eq!(
            got.unwrap(),
            Some(vec![r(0, 240, 26, 10), r(190, 0, 10, 3)])
        );
    }

    #[test]
    fn bad_rectangles_are_refused_in_plain_words() {
        let size = (200.0, 250.0);
        let e = check(Some(vec![]), size).unwrap_err();
        assert!(
            e.message.contains("at least one rectangle"),
            "{}",
            e.message
        );
        let e = check(Some(vec![r(0, 0, 10, 10); MAX_RECTS + 1]), size).unwrap_err();
        assert_eq!(
            e.message,
            format!("an input region may have at most {MAX_RECTS} rectangles, not 513")
        );
        let e = check(Some(vec![r(0, 0, 10, 10), r(5, 5, 0, 10)]), size).unwrap_err();
        assert_eq!(e.message, "input region rectangle 1 has no area (0×10)");
        let e = check(Some(vec![r(300, 10, 10, 10)]), size).unwrap_err();
        assert_eq!(
            e.message,
            "input region rectangle 0 (300, 10, 10×10) is outside the 200×250 window"
        );
        let e = check(Some(vec![r(i64::MAX, 0, i64::MAX, 1)]), size).unwrap_err();
        assert!(e.message.contains("outside"), "{}", e.message);
    }

    #[test]
    fn the_switch_off_gives_the_whole_window_and_on_is_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("yui.db")).unwrap();
        let rects = Some(vec![r(1, 2, 3, 4)]);
        assert!(enabled(&store));
        assert_eq!(region(&store, rects.clone(), (10.0, 10.0)).unwrap(), rects);
        kv::put(&store, KEY, &json!({"enabled": false})).unwrap();
        assert!(!enabled(&store));
        assert_eq!(region(&store, rects.clone(), (10.0, 10.0)).unwrap(), None);
        // Bad input is refused even when off: the page learns of its bug either way.
        assert!(region(&store, Some(vec![]), (10.0, 10.0)).is_err());
        assert!(from_value(&json!({"enabled": "yes"})).is_err());
    }
}
